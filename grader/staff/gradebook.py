"""The class's grades as CSV: ``grades.csv`` for staff, and a file an LMS gradebook imports as it is.

Every cell that is text (a student id, diagnosis codes, a reason) is made safe
for CSV readers and spreadsheets first, since a student chooses their own file
name: every control character (a carriage return would start a row of its
own), line separator and bidirectional control is shown as an escape
(``grader.report.model.printable``; ids also double their backslashes, so two ids
never look the same), and a cell starting with ``=``, ``+``, ``-``, ``@`` (or
their full-width forms), a tab or a carriage return, a formula to Excel and
LibreOffice, starts with ``'``.
"""

from __future__ import annotations

import csv
import io

from grader.report.model import name, one_line

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "\uff1d", "\uff0b", "\uff0d", "\uff20")


def cell(text: str) -> str:
    """``text`` on one line, that a spreadsheet shows as text, never evaluates."""
    text = one_line(text)
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def student_cell(student: str) -> str:
    """A student id as a cell: like any text, and never the same as another id's."""
    return cell(name(student))


def number(x: float | None) -> str:
    return "" if x is None else f"{x:g}"


def score_of(report: dict) -> float | None:
    """A student's score for a gradebook; ``None`` (a blank cell) for a submission that was not graded.

    Canvas' and Moodle's gradebook imports both leave a blank cell ungraded (Canvas shows "-", Moodle
    skips it), where a 0 would be a grade: an unreadable file or a grader failure needs a human, not a zero.
    """
    return report.get("score") if report.get("status", "graded") == "graded" else None


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
            student_cell(student), number(score_of(report)), number(report.get("max_score", maximum)),
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
        writer.writerow([student_cell(student), "", "", student_cell(student), "", number(score_of(report))])
    return out.getvalue()
