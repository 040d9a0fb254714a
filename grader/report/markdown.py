"""The report in Markdown: for GitHub job summaries, pull-request comments and feedback notebooks."""

from __future__ import annotations

from grader.diagnosis.feedback import fmt, method_name
from grader.report.model import Report
from grader.submission.source import Location


def summary(report: Report) -> str:
    """Score and the per-target table."""
    lines = [f"## micrograde: {report.score:g} / {report.max_score:g}", "",
             "| target | score | checks passed |", "|---|---|---|"]
    for target, (score, max_score) in report.target_scores().items():
        checks = [c for c in report.checks if c.target == target]
        passed = sum(c.status == "passed" for c in checks)
        lines.append(f"| `{method_name(target)}` | {score:g} / {max_score:g} | {passed} of {len(checks)} |")
    for diagnosis in (d for d in report.diagnoses if d.target == "submission"):
        lines += ["", f"**{diagnosis.code}**: {diagnosis.message}"]
    for warning in report.warnings:
        lines += ["", f"> warning: {warning}"]
    return "\n".join(lines) + "\n"


def target_section(report: Report, target: str, heading: str = "###") -> str:
    """One target: passed, or each diagnosis with its smallest failing case and its graph."""
    score, max_score = report.target_scores()[target]
    lines = [f"{heading} `{method_name(target)}`: {score:g} / {max_score:g}", ""]
    diagnoses = [d for d in report.diagnoses if d.target == target]
    if not diagnoses and score >= max_score:
        return "\n".join(lines + ["All checks passed."]) + "\n"
    for diagnosis in diagnoses:
        where = ""
        if diagnosis.file is not None:
            where = f" ({Location(diagnosis.file, diagnosis.line, diagnosis.cell).describe()})"
        lines += [f"**{diagnosis.code}**{where}: {diagnosis.message}", ""]
        example = diagnosis.counterexample
        if example is not None and example.graph:
            inputs = ", ".join(f"{k} = {fmt(v)}" for k, v in example.inputs.items())
            lines += [f"`{example.expression}`" + (f" with {inputs}" if inputs else "")
                      + ", as a graph (wrong values in red):", "", "```mermaid", example.graph, "```", ""]
    return "\n".join(lines).rstrip() + "\n"


def render_markdown(report: Report) -> str:
    parts = [summary(report)]
    parts += [target_section(report, t) for t in report.targets]
    return "\n".join(parts)
