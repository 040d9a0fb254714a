"""``micrograde grade``: grade one submission, write its report, and the pages handed back with it.

The command reads the submission, runs it in a kernel first if ``--execute`` asks
(``grader.staff.execute``), grades it (``grader.grade``), writes the report in the
format asked for, and the hand-back pages (``grader.report.handback``); on GitHub
Actions it also marks the student's lines (``grader.report.github``). A submission
that cannot be graded at all is a one-line error, except for the formats a platform
shows the student, which get a report saying why.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from grader.commands.course import course
from grader.errors import EXIT_LOST_POINTS, EXIT_OK, InputError, UsageError
from grader.exercise.targets import Exercise
from grader.grade import Options, grade_submission, refused
from grader.report.formats import FORMATS
from grader.report.model import Report
from grader.submission.siblings import read_as_run
from grader.submission.source import SourceFile, Submission


def run(args: argparse.Namespace) -> int:
    if args.timeout is not None and args.timeout <= 0:
        raise UsageError("--timeout must be positive")
    form = FORMATS[args.format]
    options = Options(config=course(args, [args.path]).config, timeout=args.timeout,
                      audience=form.audience or args.audience, around=(Path.cwd(),))
    try:
        submission = read_as_run(args.path, options.config)
        notebook = page_source(args, submission)
        execution = None
        if args.execute:
            from grader.staff.execute import execute_notebook  # noqa: I001 (optional extra)

            execution = execute_notebook(notebook.path, timeout=options.exercise().time_budget())
        started = time.monotonic()
        report = grade_submission(submission, options, execution)
    except InputError as exc:
        if not form.reports_refusals or args.feedback or args.html or args.execute:
            raise
        # A platform that shows the student the report (Gradescope, Classroom 50) must show why.
        print(f"micrograde: {exc}", file=sys.stderr)
        if args.format == "prairielearn":  # which has its own word for it: not gradable, no attempt taken
            from grader.report.prairielearn import not_gradable

            text = not_gradable(str(exc))
            if args.output is None:
                sys.stdout.write(text)
            else:
                write(args.output, text)
            return EXIT_LOST_POINTS
        return finish(refused(args.path, options, str(exc)), args, 0.0)
    hand_back(args, report, submission, notebook, options.exercise())
    if os.environ.get("GITHUB_ACTIONS") == "true":
        from grader.report.github import report_to_github

        report_to_github(report, submission, sys.stderr)
    return finish(report, args, time.monotonic() - started)


def page_source(args: argparse.Namespace, submission: Submission) -> SourceFile | None:
    """The notebook the hand-back pages and ``--execute`` work on, if they are asked for; ``UsageError``
    when what they need is not there (the pages' modules are imported only then)."""
    if not (args.feedback or args.html or args.execute):
        return None
    from grader.report import handback

    notebook = handback.graded_notebook(submission)
    if (args.feedback or args.execute) and notebook is None:
        option = "--feedback" if args.feedback else "--execute"
        raise UsageError(f"{option} needs a notebook submission" + (
            "; for a .py submission, --html OUT.html writes its file with the feedback in it" if args.feedback
            else ""))
    if args.html and notebook is None and not any(s.kind == "py" for s in submission.providers.values()):
        raise UsageError("--html needs a notebook or a .py file that defines what is graded")
    if args.html:
        from grader.report.extras import html_needs

        if (reason := html_needs()) is not None:
            raise UsageError(reason)
    if args.execute:
        from grader.staff.execute import available

        if not available():
            raise UsageError("--execute needs IPython: pip install 'micrograde[execute]'")
    return notebook


def hand_back(args: argparse.Namespace, report: Report, submission: Submission, notebook: SourceFile | None,
              exercise: Exercise) -> None:
    """Write the pages asked for: the notebook with feedback cells (``--feedback``), the HTML page (``--html``),
    each target's feedback after the code the student wrote for it (``exercise.method``: ``Tensor.__mul__``)."""
    if not (args.feedback or args.html):
        return
    from grader.report import handback

    written = {t.name: exercise.method(t.name) for t in exercise.targets}
    if args.feedback:
        write(args.feedback, handback.dumps(handback.feedback_notebook(notebook.path.read_bytes(), report,
                                                                       submission, written=written)))
    if args.html:
        page = (handback.feedback_notebook(notebook.path.read_bytes(), report, submission, as_html=True,
                                           written=written)
                if notebook is not None else handback.source_notebook(report, submission, written))
        write(args.html, handback.render_html(page))


def write(path: Path, text: str) -> None:
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"{path}: cannot write ({exc.strerror})") from None


def finish(report: Report, args: argparse.Namespace, seconds: float) -> int:
    """Write the report where it goes; the exit status it earns."""
    to_terminal = args.output is None and sys.stdout.isatty() and not os.environ.get("NO_COLOR")
    text = FORMATS[args.format].render(report, seconds=seconds, colour=to_terminal)
    if args.output is None:
        sys.stdout.write(text)
    else:
        write(args.output, text)
    if args.fail_under is not None:
        return EXIT_OK if report.score >= args.fail_under else EXIT_LOST_POINTS
    return EXIT_OK if report.perfect else EXIT_LOST_POINTS
