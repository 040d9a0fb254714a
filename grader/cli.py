"""The ``micrograde`` command.

Exit status: 0 full marks; 1 points were lost; 2 bad invocation or input that
cannot be graded; 3 an internal error of the grader itself, or a machine that
cannot start the submission's sandboxed process. Errors are one
line on stderr, never a traceback (``MICROGRADE_DEBUG=1`` shows it).
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import sys
import time
from pathlib import Path
from typing import NoReturn

EXIT_OK, EXIT_LOST_POINTS, EXIT_BAD_INPUT, EXIT_INTERNAL = 0, 1, 2, 3


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line and exit 2, as for any bad input
        self.exit(EXIT_BAD_INPUT, f"micrograde: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    from grader import __version__
    from grader.report.formats import FORMATS

    parser = _Parser(prog="micrograde", description="Grade a build-micrograd-yourself submission.")
    parser.add_argument("--version", action="version", version=f"micrograde {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    grade = commands.add_parser("grade", help="grade a .py file, a notebook, or a directory")
    grade.add_argument("path", type=Path, help="the submission: a .py file, a .ipynb notebook, or a folder of them")
    grade.add_argument("--format", choices=tuple(FORMATS), default="text", metavar="FORMAT",
                       help="how the report is written: "
                            + "; ".join(f"{f.name}: {f.purpose}" for f in FORMATS.values()))
    grade.add_argument("--output", type=Path, help="write the report here instead of stdout")
    grade.add_argument("--timeout", type=float, metavar="SECONDS",
                       help="seconds each target (and loading) may take (default: the config's, 10)")
    grade.add_argument("--audience", choices=("student", "staff"), default="student",
                       help="staff reports also run and show the checks hidden from students")
    grade.add_argument("--feedback", type=Path, metavar="OUT.ipynb",
                       help="write the notebook back with feedback cells in it (notebooks; for a .py, use --html)")
    grade.add_argument("--html", type=Path, metavar="OUT.html",
                       help="the submission as an HTML page with the feedback in it (a notebook, or a .py file "
                            "with the feedback at the lines it names); opens offline")
    grade.add_argument("--fail-under", type=float, metavar="N",
                       help="exit 1 only when the score is below N (default: when any point is lost)")
    grade.add_argument("--execute", action="store_true",
                       help="also run the notebook top to bottom in a kernel and report failing cells "
                            "(needs micrograde[execute])")
    template = commands.add_parser("template", help="write the files a course copies")
    template.add_argument("kind", choices=("classroom50", "github-classroom", "gradescope"),
                          help="which platform the files are for")
    template.add_argument("directory", type=Path, help="folder to write the files into (made if missing)")
    template.add_argument("--install", metavar="SOURCE",
                          help="where classroom50 and github-classroom install micrograde from: a pip requirement "
                               "such as git+https://github.com/ORG/micrograde (required for those two)")
    template.add_argument("--submission", default="exercises/",
                          help="what is graded in the student's repository (default: exercises/)")
    batch = commands.add_parser("batch", help="grade a folder of submissions, one per student")
    batch.add_argument("submissions", type=Path,
                       help="folder with one file or folder per student, as an LMS download lays them out")
    batch.add_argument("--out", type=Path, required=True, help="folder for the reports and the gradebook")
    batch.add_argument("--jobs", type=int,
                       help="grading processes, each on a core of its own when there are enough "
                            "(default: one per core this process may use)")
    batch.add_argument("--timeout", type=float, metavar="SECONDS",
                       help="seconds each student's loading and each target may take (default: the config's, 10)")
    batch.add_argument("--force", action="store_true", help="grade everyone again, even unchanged submissions")
    batch.add_argument("--assignment", default="micrograde",
                       help="the assignment's column name in the LMS gradebook CSV (default: micrograde)")
    result = commands.add_parser("result", help="exit 0 when one check of a JSON report passed")
    result.add_argument("report", type=Path, help="a report written by micrograde grade --format json")
    result.add_argument("check", help="a check id, such as mul.reused-node")
    scaffold = commands.add_parser("scaffold", help="write the student files of the course's exercise")
    scaffold.add_argument("directory", type=Path, help="folder to write the student files into (made if missing)")
    for command in (grade, template, batch, result, scaffold):
        command.add_argument("--config", type=Path, metavar="FILE",
                             help="the course configuration: micrograde.toml, or a pyproject.toml with "
                                  "[tool.micrograde] (default: ./micrograde.toml if there is one, "
                                  "else the classic exercise)")
    return parser


def exercise_of(args: argparse.Namespace):
    """The exercise the course configuration describes (``ConfigError`` names a wrong key).

    Without ``--config``, a ``micrograde.toml`` in the current directory is the course's
    (a course repository carries it, so students and its CI grade alike); else the default."""
    from grader.exercise.config import load
    from grader.exercise.targets import Exercise

    return Exercise(load(course_file(args)))


COURSE_FILE = Path("micrograde.toml")  # the course's configuration, where staff grade in its folder


def course_file(args: argparse.Namespace) -> Path | None:
    """The course configuration's file: ``--config``, else ``./micrograde.toml`` if there is one."""
    return args.config or (COURSE_FILE if COURSE_FILE.is_file() else None)


def run_scaffold(args: argparse.Namespace) -> int:
    from grader.staff.scaffold import write_scaffold

    for path in write_scaffold(exercise_of(args), args.directory):
        print(path)
    return EXIT_OK


def run_template(args: argparse.Namespace) -> int:
    from grader.staff import templates

    if args.kind in ("classroom50", "github-classroom") and not args.install:
        raise _BadInput(f"template {args.kind} needs --install SOURCE: where to install micrograde from "
                        "(it is not on PyPI), e.g. --install git+https://github.com/ORG/micrograde")
    exercise, pinned = exercise_of(args), templates.pinned(course_file(args))
    if args.kind == "github-classroom":
        written = templates.github_classroom(args.directory, args.install, args.submission, exercise, pinned)
    elif args.kind == "classroom50":
        written = templates.classroom50(args.directory, args.install, args.submission, pinned)
    else:
        written = templates.gradescope(args.directory, pinned)
    for path in written:
        print(path)
    return EXIT_OK


def run_result(args: argparse.Namespace) -> int:
    """The verdict of one check, for CI systems that give points per command."""
    try:
        report = json.loads(args.report.read_text(encoding="utf-8"))
        check = next((c for c in report["checks"] if c["id"] == args.check), None)
    except (OSError, ValueError, KeyError, TypeError):
        raise _BadInput(f"{args.report}: not a micrograde JSON report") from None
    if check is None:
        raise _BadInput(f"{args.report}: no check {args.check}")
    print(f"{check['id']}: {check['status']} ({check['score']:g} / {check['max_score']:g})")
    if check["status"] != "passed":
        print(check.get("message", ""))
        for diagnosis in report.get("diagnoses", []):
            if diagnosis.get("target") == check["target"]:
                print(f"[{diagnosis['code']}] {diagnosis['message']}")
    forbidden = any(d.get("code") == "forbidden-import" for d in report.get("diagnoses", []))
    return EXIT_OK if check["status"] == "passed" and not forbidden else EXIT_LOST_POINTS


def run_batch(args: argparse.Namespace) -> int:
    from grader.staff.batch import cores
    from grader.staff.batch import run_batch as batch

    if args.jobs is None:
        args.jobs = len(cores())
    if args.jobs < 1:
        raise _BadInput("--jobs must be at least 1")
    if args.timeout is not None and args.timeout <= 0:
        raise _BadInput("--timeout must be positive")
    if not args.submissions.is_dir():
        raise _BadInput(f"{args.submissions}: not a directory")
    from grader.staff.batch import students_in

    if not students_in(args.submissions):
        raise _BadInput(f"{args.submissions}: no submissions in it (one file or folder per student)")
    exercise_of(args)  # a wrong configuration stops the batch before it starts
    return batch(args.submissions, args.out, jobs=args.jobs, timeout=args.timeout, force=args.force,
                 assignment=args.assignment, config=args.config)


def write(path: Path, text: str) -> None:
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise _BadInput(f"{path}: cannot write ({exc.strerror})") from None


def run_grade(args: argparse.Namespace) -> int:
    from grader.grade import Options, grade_submission, refused
    from grader.submission.errors import InputError
    from grader.submission.siblings import read_as_run

    if args.timeout is not None and args.timeout <= 0:
        raise _BadInput("--timeout must be positive")
    # Gradescope shows each test by its own visibility (hidden checks after publishing), so it gets them all.
    audience = "staff" if args.format == "gradescope" else args.audience
    options = Options(config=exercise_of(args).config, timeout=args.timeout, audience=audience, around=(Path.cwd(),))
    try:
        submission = read_as_run(args.path, options.config)
        notebook = None
        if args.feedback or args.html or args.execute:  # the pages' modules only when a page is asked for
            from grader.report import handback

            notebook = handback.graded_notebook(submission)
        if (args.feedback or args.execute) and notebook is None:
            option = "--feedback" if args.feedback else "--execute"
            raise _BadInput(f"{option} needs a notebook submission" + (
                "; for a .py submission, --html OUT.html writes its file with the feedback in it" if args.feedback
                else ""))
        if args.html and notebook is None and not any(s.kind == "py" for s in submission.providers.values()):
            raise _BadInput("--html needs a notebook or a .py file that defines what is graded")
        if args.execute:
            from grader.staff.execute import available

            if not available():
                raise _BadInput("--execute needs IPython: pip install 'micrograde[execute]'")
        started = time.monotonic()
        report = grade_submission(submission, options)
    except InputError as exc:
        if args.format == "text" or args.feedback or args.html or args.execute:
            raise
        # A platform that shows the student the report (Gradescope, Classroom 50) must show why.
        print(f"micrograde: {exc}", file=sys.stderr)
        return finish(refused(args.path, options, str(exc)), args, 0.0)
    if args.execute:
        from grader.staff.execute import execute_notebook  # noqa: I001 (optional extra)

        report.execution = execute_notebook(notebook.path, timeout=options.exercise().time_budget())
        report.warnings.extend(report.execution.get("warnings", []))
    if args.feedback or args.html:
        from grader.report import handback
    if args.feedback:
        handed_back = handback.feedback_notebook(notebook.path.read_bytes(), report, submission)
        write(args.feedback, handback.dumps(handed_back))
    if args.html:
        page = (handback.feedback_notebook(notebook.path.read_bytes(), report, submission, as_html=True)
                if notebook is not None else handback.source_notebook(report, submission))
        write(args.html, handback.render_html(page))
    if os.environ.get("GITHUB_ACTIONS") == "true":
        from grader.report.github import report_to_github

        report_to_github(report, submission, sys.stderr)
    return finish(report, args, time.monotonic() - started)


def finish(report, args: argparse.Namespace, seconds: float) -> int:
    """Write the report where it goes; the exit status it earns."""
    text = render(report, args, seconds)
    if args.output is None:
        sys.stdout.write(text)
    else:
        write(args.output, text)
    if args.fail_under is not None:
        return EXIT_OK if report.score >= args.fail_under else EXIT_LOST_POINTS
    return EXIT_OK if report.perfect else EXIT_LOST_POINTS


def render(report, args: argparse.Namespace, seconds: float) -> str:
    """The report in the format asked for (colour only for a terminal that has not said ``NO_COLOR``)."""
    from grader.report.formats import FORMATS

    to_terminal = args.output is None and sys.stdout.isatty() and not os.environ.get("NO_COLOR")
    return FORMATS[args.format].render(report, seconds=seconds, colour=to_terminal)


class _BadInput(Exception):
    pass


def default_limits(words: list[str]) -> bool:
    """Whether a ``grade`` command line grades a file with the default course's time limits, as far as can
    be told before parsing it: no ``--config``, no ``--timeout``, no ``./micrograde.toml`` (``course_file``),
    no folder named (the children started ahead serve only a file: see ``grader.child.ahead``)."""
    return not (any(word.startswith(("--config", "--timeout")) or os.path.isdir(word) for word in words[1:])
                or COURSE_FILE.is_file())


def main(argv: list[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else argv
    if words[:1] == ["grade"] and "-h" not in words and "--help" not in words:
        from grader.child import launcher

        launcher.warm_up()  # before the rest is imported: see ``warm_up``
        if default_limits(words):
            from grader.child import ahead

            ahead.start()  # the children too, in a thread: see ``grader.child.ahead``
            try:
                return run_command(argv)
            finally:
                ahead.discard()  # what the grade did not take, if it stopped before grading
    return run_command(argv)


def run_command(argv: list[str] | None) -> int:
    """Parse the command line and run its command; every error one line and its exit status."""
    from grader.submission.errors import InputError

    args = build_parser().parse_args(argv)
    commands = {"grade": run_grade, "template": run_template, "batch": run_batch, "result": run_result,
                "scaffold": run_scaffold}
    try:
        return commands[args.command](args)
    except (InputError, _BadInput) as exc:
        print(f"micrograde: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("micrograde: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # the grader's own bug, or its machine's: say so in one line
        if os.environ.get("MICROGRADE_DEBUG"):
            raise
        from grader.child.launcher import LauncherError

        if isinstance(exc, LauncherError):
            print(f"micrograde: this machine could not run the submission's process: {exc}; nothing was "
                  "graded (the submission is not at fault; MICROGRADE_SANDBOX=none grades without the "
                  "namespace sandbox)", file=sys.stderr)
        else:
            print(f"micrograde: internal error: {type(exc).__name__}: {exc} "
                  "(set MICROGRADE_DEBUG=1 for details)", file=sys.stderr)
        return EXIT_INTERNAL


def entry() -> NoReturn:
    """The ``micrograde`` command (and ``python -m grader``): ``main``, then out without taking the
    interpreter down piece by piece.

    Freeing every module and object one by one at exit costs a grade about 20 ms, more than reading
    the submission, and nothing needs it: the registered exit handlers still run (a temporary
    directory Hypothesis used), the streams are flushed, the children die with the launcher as
    before. ``main`` itself returns, for the callers that grade in their own process."""
    code = main()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a reader that went away, or a stream closed already
            pass
    os._exit(code)


if __name__ == "__main__":
    entry()
