"""The report as a person reads it in a terminal, wrapped to the terminal's width."""

from __future__ import annotations

import re
import shutil
import textwrap

from grader.report.model import CASE, GIVEN, WITHHELD, Report, printable

STATUS_MARK = {"passed": "ok", "failed": "FAIL", "error": "ERROR", "timeout": "TIMEOUT"}
COLOURS = {"ok": "32", "FAIL": "31", "ERROR": "31", "TIMEOUT": "33"}
ORACLE = re.compile(r" \(checked against ([^()]*)\)\.$")  # how a check's smallest failing case ends


def failed_checks(messages: dict[str, str]) -> tuple[str, dict[str, str]]:
    """The failed checks' heading and each one's message (by check id): what every case of them says alike (the
    oracles it was checked against) said once, in the heading, and each message its own case."""
    oracles = {found.group(1) for text in messages.values() if (found := ORACLE.search(text))}
    if len(oracles) != 1:
        return "failed checks:", messages
    [oracle] = oracles
    return (f"failed checks, each with its {CASE.lower()} (checked against {oracle}):",
            {check: ORACLE.sub(".", text).removeprefix(f"{CASE}: ") for check, text in messages.items()})


def terminal_width() -> int:
    """The terminal's width (``COLUMNS`` wins), never narrower than 40 nor wider than 120."""
    return max(40, min(120, shutil.get_terminal_size((100, 24)).columns))


def render_text(report: Report, colour: bool = False, width: int | None = None,
                unpublished: Report | None = None) -> str:
    """The score table, warnings and diagnoses; paragraphs wrapped to ``width`` (default: the terminal's).
    ``unpublished`` is the whole report of a view that leaves out the checks hidden until the grades are
    published (Gradescope's ``output``): its total is said too, beside the total shown."""
    width = width or terminal_width()

    def paint(text: str, code: str) -> str:
        return f"\033[{code}m{text}\033[0m" if colour else text

    def paragraph(text: str, indent: str = "") -> list[str]:
        return textwrap.wrap(printable(text), width, initial_indent=indent, subsequent_indent=indent,
                             break_on_hyphens=False, replace_whitespace=True) or [indent]

    shown = report.shown_checks()
    scores = report.target_scores()
    total, maximum = report.shown_totals()
    lines = [*paragraph(f"micrograde: {report.submission}"), ""]
    names = max([12, *(len(target) + 1 for target in scores)])  # a course's long target names keep the columns
    lines.append(f"  {'target':<{names}}{'score':^15}   checks")  # over `{score:>6g} / {max:<6g}`
    for target, (score, max_score) in scores.items():
        checks = [c for c in shown if c.target == target]
        marks = " ".join(paint(STATUS_MARK[c.status], COLOURS[STATUS_MARK[c.status]]) + ("*" if c.hidden else "")
                         for c in checks)
        points = f"{GIVEN:^15}" if target in report.given else f"{score:>6g} / {max_score:<6g}"
        lines.append(f"  {target:<{names}}{points}   {marks}")
    if unpublished is not None and unpublished.checks != report.checks:
        hidden = len(unpublished.checks) - len(report.checks)
        whole, most = unpublished.shown_totals()
        lines.append(f"  {'shown':<{names}}{total:>6g} / {maximum:<6g}")
        lines.append(f"  {'total':<{names}}{whole:>6g} / {most:<6g}   with {hidden} check{'s' * (hidden > 1)} "
                     "hidden until the grades are published")
    else:
        lines.append(f"  {'total':<{names}}{total:>6g} / {maximum:<6g}")
    if any(c.hidden for c in shown):
        lines += paragraph("  * hidden until the course releases it: it counts in the score"
                           + (", and why it failed is shown on release" if report.audience == "student" else ""))
    if report.given:
        lines += paragraph(f"  {GIVEN}: the course's own code, checked so that you know if it breaks; "
                           "it is worth no points")
    for warning in report.warnings:
        lines += [paint(line, "33") for line in paragraph(f"warning: {warning}")]
    if report.ungraded:
        lines += ["", *paragraph(report.not_graded())]
    order = {t: i for i, t in enumerate(("submission", *scores))}
    for d in sorted(report.shown_diagnoses(), key=lambda d: order.get(d.target, len(order))):
        heading = [paint(line, "1") for line in paragraph(d.heading())]
        lines += ["", *heading, *paragraph(d.message, "  ")]
    failed = [c for c in shown if c.status != "passed" and not c.message.startswith("not run")]
    if failed:
        heading, messages = failed_checks({c.id: WITHHELD if report.withheld(c) else c.message for c in failed})
        lines += ["", *paragraph(heading)]
        for check, message in messages.items():
            lines += paragraph(f"{check}: {message}", "  ")
    if not report.shown_diagnoses() and total >= maximum:
        lines += ["", paint(report.all_passed(), "32")]
    return "\n".join(lines) + "\n"
