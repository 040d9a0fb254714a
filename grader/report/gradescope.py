"""The report as Gradescope's ``results.json``: one test per check, with the course's visibility.

Gradescope itself withholds tests marked ``after_published`` from students
until the grades are published, so it is given every check, hidden ones
marked so, and its score counts them all; the submission-wide ``output``, which
students see at once, is the report of the released checks alone, whose table
says the total shown and the score's total beside it (the score Gradescope shows).
"""

from __future__ import annotations

import dataclasses
import json

from grader.exercise.ops import method_name
from grader.report.model import Report, printable_tree

RELEASED = "\nChecks hidden until the grades are published count in the score, and are shown then.\n"


def render_gradescope(report: Report, execution_time: float = 0.0) -> str:
    """``results.json`` with the fields Gradescope documents, and nothing it does not."""
    from grader.report.text import render_text

    tests = []
    for check in report.checks:
        codes = [d.code for d in report.diagnoses if d.target == check.target]
        tests.append({
            "name": f"{method_name(check.target)}: {check.title}",
            "number": check.id,
            "score": check.score,
            "max_score": check.max_score,
            "status": "passed" if check.status == "passed" else "failed",
            "output": "" if check.status == "passed" else report.details(check),
            "output_format": "text",
            "visibility": "after_published" if check.hidden else "visible",
            "tags": [check.target, *(codes if check.status != "passed" else [])],
        })
    student_view = dataclasses.replace(report, audience="student", checks=[c for c in report.checks if not c.hidden])
    results = {
        "score": report.score,
        "execution_time": round(execution_time, 3),
        "output": render_text(student_view, width=100, unpublished=report)
        + (RELEASED if student_view.checks != report.checks else ""),
        "output_format": "text",
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": tests,
    }
    return json.dumps(printable_tree(results), indent=2) + "\n"
