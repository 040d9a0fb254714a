"""The class's grades as CSV: ``grades.csv`` for staff, and a file an LMS gradebook imports as it is.

Every cell that is text (a student id, diagnosis codes, a reason) is made safe
for spreadsheets first: a cell starting with ``=``, ``+``, ``-``, ``@``, a tab or
a carriage return is a formula to Excel and LibreOffice, and a student chooses
their own file name.
"""

from __future__ import annotations

import csv
import io

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def cell(text: str) -> str:
    """``text`` that a spreadsheet shows as text, never evaluates."""
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def number(x: float | None) -> str:
    return "" if x is None else f"{x:g}"


def score_of(report: dict) -> float | None:
    """A student's score for a gradebook; ``None`` (a blank cell) for a submission that was not graded.

    Canvas' and Moodle's gradebook imports both leave a blank cell ungraded (Canvas shows "-", Moodle
    skips it), where a 0 would be a grade: an unreadable file or a grader failure needs a human, not a zero.
    """
    return report.get("score", 0.0) if report.get("status", "graded") == "graded" else None


def targets_of(reports: list[dict]) -> list[str]:
    """The graded targets, in the order the reports list them (the course's, not a fixed list)."""
    found: dict[str, None] = {}
    for report in reports:
        found.update(dict.fromkeys(report.get("targets", {})))
    return list(found)


def class_max_score(reports: list[dict]) -> float | None:
    """The maximum score of the assignment, as the graded reports give it."""
    return next((r["max_score"] for r in reports if r.get("status") == "graded" and "max_score" in r), None)


def reason(report: dict) -> str:
    """Why a student got no grade, or what stopped their submission from loading; empty when graded normally."""
    if report.get("status", "graded") != "graded":
        return report.get("error", "")
    return " ".join(d["message"] for d in report.get("diagnoses", []) if d.get("target") == "submission")


def grades_csv(rows: list[tuple[str, dict]]) -> str:
    """``grades.csv``: one row per student, one column per target, the diagnosis codes, and the reason."""
    reports = [report for _, report in rows]
    targets, maximum = targets_of(reports), class_max_score(reports)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["id", "score", "max_score", *targets, "status", "diagnoses", "reason"])
    for student, report in rows:
        scores = report.get("targets", {})
        writer.writerow([
            cell(student), number(score_of(report)), number(report.get("max_score", maximum)),
            *[number(scores[t]["score"]) if t in scores else "" for t in targets],
            report.get("status", "graded"),
            cell(" ".join(f"{d['target']}:{d['code']}" for d in report.get("diagnoses", []))),
            cell(reason(report)),
        ])
    return out.getvalue()


def lms_csv(rows: list[tuple[str, dict]], assignment: str) -> str:
    """A gradebook import file in Canvas' layout (``Student, ID, SIS User ID, SIS Login ID, Section``, then
    one column per assignment, headed by its name); Moodle imports it too, mapping ``SIS Login ID`` to the
    username. The student id (the submission's file or folder name) goes in ``Student`` and ``SIS Login ID``."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["Student", "ID", "SIS User ID", "SIS Login ID", "Section", cell(assignment)])
    maximum = class_max_score([report for _, report in rows])
    writer.writerow(["Points Possible", "", "", "", "", number(maximum)])
    for student, report in rows:
        writer.writerow([cell(student), "", "", cell(student), "", number(score_of(report))])
    return out.getvalue()
