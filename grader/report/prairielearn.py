"""The report as PrairieLearn's external-grading ``results.json``.

PrairieLearn records ``score``, a fraction of the question's points in [0, 1], and
shows ``tests`` (each with ``points`` and ``max_points``), ``message`` and ``output``
through its ``<pl-external-grader-results>`` element; any other field is kept. So
the score is micrograde's over the course's total, exactly (fractional points too),
and the question's points set to the course's total give micrograde's own numbers.
Every check is a test, hidden ones too (counted, for a student only passed or not).
A submission micrograde cannot read at all is ``gradable: false`` with the reason in
``format_errors``: PrairieLearn then takes no attempt and no points. What of the submission no
target covered is said in ``message``, which the student sees above the tests.
"""

from __future__ import annotations

import json

from grader.exercise.ops import method_name
from grader.report.model import Report, printable_tree


def render_prairielearn(report: Report) -> str:
    """``results.json`` with the fields PrairieLearn documents."""
    from grader.report.text import render_text

    tests = [{
        "name": check.id,
        "description": f"{method_name(check.target)}: {check.title}",
        "points": 0.0 if report.forbidden else check.score,
        "max_points": check.max_score,
        "message": "" if check.status == "passed" and not report.forbidden else report.details(check),
    } for check in report.shown_checks()]
    score, most = report.score, report.max_score
    message = f"micrograde: {score:g} / {most:g}" + (f"\n{report.not_graded()}" if report.ungraded else "")
    results = {"gradable": True, "score": round(score / most, 9) if most else 0.0,
               "message": message, "output": render_text(report, width=100), "tests": tests}
    return json.dumps(printable_tree(results), indent=2) + "\n"


def not_gradable(reason: str) -> str:
    """``results.json`` for a submission that could not be graded at all (no Python file, too large...)."""
    return json.dumps(printable_tree({"gradable": False, "format_errors": [reason]}), indent=2) + "\n"
