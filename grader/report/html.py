"""The report as HTML fragments, for the ``--html`` page: every string escaped, graphs as inline SVG.

The same content as the Markdown feedback cells, built as HTML directly, so
nothing a submission says (an exception message, its printed output) can
become markup, and no graph needs a script to be drawn.
"""

from __future__ import annotations

from html import escape

from grader.diagnosis.findings import fmt
from grader.exercise.ops import method_name
from grader.report.drawing import svg
from grader.report.model import GIVEN, NOT_GRADED, Report, printable
from grader.submission.source import Location


def text(value: object) -> str:
    return escape(printable(str(value)))


def summary(report: Report) -> str:
    """Score and the per-target table."""
    scores = report.target_scores()
    total, maximum = report.shown_totals()
    shown = report.shown_checks()
    rows = []
    for target, (score, max_score) in scores.items():
        checks = [c for c in shown if c.target == target]
        passed = sum(c.status == "passed" for c in checks)
        points = f"{GIVEN} (no points)" if target in report.given else f"{score:g} / {max_score:g}"
        rows.append(f"<tr><td><code>{text(method_name(target))}</code></td><td>{points}</td>"
                    f"<td>{passed} of {len(checks)}</td></tr>")
    parts = [f"<h2>micrograde: {total:g} / {maximum:g}</h2>",
             "<table><tr><th>target</th><th>score</th><th>checks passed</th></tr>", *rows, "</table>"]
    parts += [f"<p><strong>{text(d.code)}</strong>: {text(d.message)}</p>"
              for d in report.shown_diagnoses() if d.target == "submission"]
    parts += [f"<blockquote>warning: {text(w)}</blockquote>" for w in report.warnings]
    if report.ungraded:
        parts.append(f"<p><strong>{text(NOT_GRADED)}</strong>:</p><ul>"
                     + "".join(f"<li>{text(u.describe())}</li>" for u in report.ungraded) + "</ul>")
    return "\n".join(parts)


def target_section(report: Report, target: str) -> str:
    """One target: passed, or each diagnosis with its smallest failing case drawn as a graph."""
    score, max_score = report.target_scores()[target]
    points = f"{GIVEN}, no points" if target in report.given else f"{score:g} / {max_score:g}"
    parts = [f"<h3><code>{text(method_name(target))}</code>: {points}</h3>"]
    diagnoses = [d for d in report.shown_diagnoses() if d.target == target]
    if not diagnoses and score >= max_score:
        return "\n".join(parts + ["<p>All checks passed.</p>"])
    for diagnosis in diagnoses:
        where = ""
        if diagnosis.file is not None:
            where = f" ({text(Location(diagnosis.file, diagnosis.line, diagnosis.cell).describe())})"
        parts.append(f"<p><strong>{text(diagnosis.code)}</strong>{where}: {text(diagnosis.message)}</p>")
        example = diagnosis.counterexample
        if example is not None and example.drawing:
            inputs = ", ".join(f"{k} = {fmt(v)}" for k, v in example.inputs.items())
            parts += [f"<p><code>{text(example.expression)}</code>" + (f" with {text(inputs)}" if inputs else "")
                      + ", as a graph (wrong values in red):</p>", f"<figure>{svg(*example.drawing)}</figure>"]
    return "\n".join(parts)
