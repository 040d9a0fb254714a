"""Every format a report can be written in, named once: ``--format`` offers these, in this order.

Each entry says what the format is for and which function renders it; the
module is imported only when the format is asked for, so a grade pays only for
the one it writes. Adding a format is one module under ``grader/report/`` with
its ``render_*`` function, and one entry here.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from grader.report.model import Report


@dataclass(frozen=True)
class Format:
    name: str
    purpose: str  # one line for ``--help``
    renders: str  # "module:function", called as function(report, **its options below)
    timed: bool = False  # takes the seconds grading took (``execution_time``)
    coloured: bool = False  # takes ``colour``: whether the output is a terminal
    # Read by a program or a platform, not by the person at the command line: a submission that cannot be
    # graded gets a report saying why (a line on stderr reaches no student on Gradescope or Classroom 50).
    reports_refusals: bool = False
    audience: str | None = None  # the audience the report is always graded for, whatever ``--audience`` says

    def render(self, report: Report, seconds: float = 0.0, colour: bool = False) -> str:
        module, _, function = self.renders.partition(":")
        options: dict[str, object] = {}
        if self.timed:
            options["execution_time"] = seconds
        if self.coloured:
            options["colour"] = colour
        return getattr(importlib.import_module(module), function)(report, **options)


FORMATS: dict[str, Format] = {f.name: f for f in (
    Format("text", "for a person, in a terminal or a CI log", "grader.report.text:render_text", coloured=True),
    Format("json", "the whole report, for programs (schema_version 1)", "grader.report.model:render_json",
           reports_refusals=True),
    Format("junit", "JUnit XML, for Jenkins, GitLab and GitHub test reporters", "grader.report.junit:render_junit",
           reports_refusals=True),
    # Gradescope shows each test by its own visibility (hidden checks after publishing), so it gets them all.
    Format("gradescope", "Gradescope's results.json", "grader.report.gradescope:render_gradescope", timed=True,
           reports_refusals=True, audience="staff"),
    Format("classroom50", "Classroom 50's result.json", "grader.report.classroom50:render_classroom50",
           reports_refusals=True),
    Format("prairielearn", "PrairieLearn's external-grader results.json",
           "grader.report.prairielearn:render_prairielearn", reports_refusals=True),
    Format("markdown", "for GitHub job summaries and pull-request comments", "grader.report.markdown:render_markdown",
           reports_refusals=True),
)}
