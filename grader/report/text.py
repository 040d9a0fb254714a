"""The report as a person reads it in a terminal."""

from __future__ import annotations

from grader.report.model import Report
from grader.submission.source import Location

STATUS_MARK = {"passed": "ok", "failed": "FAIL", "error": "ERROR", "timeout": "TIMEOUT"}
COLOURS = {"ok": "32", "FAIL": "31", "ERROR": "31", "TIMEOUT": "33"}


def render_text(report: Report, colour: bool = False) -> str:
    def paint(text: str, code: str) -> str:
        return f"\033[{code}m{text}\033[0m" if colour else text

    lines = [f"micrograde: {report.submission}", ""]
    lines.append(f"  {'target':<12}{'score':>14}   checks")
    for target, (score, max_score) in report.target_scores().items():
        checks = [c for c in report.checks if c.target == target]
        marks = " ".join(paint(STATUS_MARK[c.status], COLOURS[STATUS_MARK[c.status]]) for c in checks)
        lines.append(f"  {target:<12}{score:>6g} / {max_score:<6g}   {marks}")
    lines.append(f"  {'total':<12}{report.score:>6g} / {report.max_score:<6g}")
    for warning in report.warnings:
        lines.append(paint(f"warning: {warning}", "33"))
    order = {t: i for i, t in enumerate(("submission", *report.targets))}
    for d in sorted(report.diagnoses, key=lambda d: order[d.target]):
        where = f" ({Location(d.file, d.line, d.cell).describe()})" if d.file else ""
        lines += ["", paint(f"[{d.code}] {d.target}{where}", "1"), f"  {d.message}"]
    failed = [c for c in report.checks if c.status != "passed" and not c.message.startswith("not run")]
    if failed:
        lines += ["", "failed checks:"]
        lines += [f"  {c.id}: {c.message}" for c in failed]
    if not report.diagnoses and report.score >= report.max_score:
        lines += ["", paint("All checks passed.", "32")]
    return "\n".join(lines) + "\n"
