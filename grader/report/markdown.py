"""The report in Markdown: for GitHub job summaries, pull-request comments and feedback notebooks.

Text that comes from the grader's wording or the submission is escaped, so
``__add__`` stays ``__add__`` instead of turning bold, and a message can never
inject markup.
"""

from __future__ import annotations

import re

from grader.diagnosis.findings import fmt
from grader.exercise.ops import method_name
from grader.report.graph import mermaid
from grader.report.model import GIVEN, NOT_GRADED, WITHHELD, Report, printable
from grader.submission.source import Location

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>|~&])")


def escape(text: str) -> str:
    """``text`` shown literally in Markdown, on one line (CommonMark backslash escapes)."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", printable(text).replace("\r", " ").replace("\n", " "))


def code(text: str) -> str:
    """``text`` as inline code, whatever backticks it holds."""
    text = printable(text).replace("\n", " ")
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def summary(report: Report) -> str:
    """Score and the per-target table."""
    scores = report.target_scores()
    total, maximum = report.shown_totals()
    lines = [f"## micrograde: {total:g} / {maximum:g}", "",
             "| target | score | checks passed |", "|---|---|---|"]
    shown = report.shown_checks()
    for target, (score, max_score) in scores.items():
        checks = [c for c in shown if c.target == target]
        passed = sum(c.status == "passed" for c in checks)
        points = f"{GIVEN} (no points)" if target in report.given else f"{score:g} / {max_score:g}"
        lines.append(f"| {code(method_name(target))} | {points} | {passed} of {len(checks)} |")
    for diagnosis in (d for d in report.shown_diagnoses() if d.target == "submission"):
        lines += ["", f"**{escape(diagnosis.code)}**: {escape(diagnosis.message)}"]
    for warning in report.warnings:
        lines += ["", f"> warning: {escape(warning)}"]
    if report.ungraded:
        lines += ["", f"**Not graded** {escape(NOT_GRADED.removeprefix('Not graded '))}: "
                      + "; ".join(escape(u.describe()) for u in report.ungraded) + "."]
    return "\n".join(lines) + "\n"


def target_section(report: Report, target: str, heading: str = "###") -> str:
    """One target: passed, or each diagnosis with its smallest failing case and its graph."""
    score, max_score = report.target_scores()[target]
    points = f"{GIVEN}, no points" if target in report.given else f"{score:g} / {max_score:g}"
    lines = [f"{heading} {code(method_name(target))}: {points}", ""]
    diagnoses = [d for d in report.shown_diagnoses() if d.target == target]
    if not diagnoses and score >= max_score:
        return "\n".join(lines + ["All checks passed."]) + "\n"
    for diagnosis in diagnoses:
        where = ""
        if diagnosis.file is not None:
            where = f" ({escape(Location(diagnosis.file, diagnosis.line, diagnosis.cell).describe())})"
        lines += [f"**{escape(diagnosis.code)}**{where}: {escape(diagnosis.message)}", ""]
        example = diagnosis.counterexample
        if example is not None and example.drawing:
            inputs = ", ".join(f"{k} = {fmt(v)}" for k, v in example.inputs.items())
            lines += [code(example.expression) + (f" with {escape(inputs)}" if inputs else "")
                      + ", as a graph (wrong values in red):", "", "```mermaid", mermaid(*example.drawing), "```", ""]
    withheld = [c.id for c in report.shown_checks() if c.target == target and c.status != "passed"
                and report.withheld(c)]
    if withheld:
        lines += [f"Failed, {WITHHELD}: {', '.join(code(c) for c in withheld)}.", ""]
    return "\n".join(lines).rstrip() + "\n"


def render_markdown(report: Report) -> str:
    parts = [summary(report)]
    parts += [target_section(report, t) for t in report.target_scores()]
    return "\n".join(parts)
