"""The ``micrograde`` command line: parsed here, each command run by its module in ``grader.commands``.

Exit status: 0 full marks; 1 points were lost; 2 bad invocation or input that
cannot be graded; 3 an internal error of the grader itself, or a machine that
cannot start the submission's sandboxed process. Errors are one
line on stderr, never a traceback (``MICROGRADE_DEBUG=1`` shows it).
"""

from __future__ import annotations

import argparse
import atexit
import importlib
import os
import sys
from pathlib import Path
from typing import NoReturn

from grader.errors import EXIT_BAD_INPUT, MachineError, MicrogradeError


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line and exit 2, as for any bad input
        self.exit(EXIT_BAD_INPUT, f"micrograde: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    from grader.report.formats import FORMATS
    from grader.staff.shards import shard_spec
    from grader.version import __version__

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
                       help="staff reports also show why a check hidden from students failed (it counts in both)")
    grade.add_argument("--feedback", type=Path, metavar="OUT.ipynb",
                       help="write the notebook back with feedback cells in it (notebooks; for a .py, use --html)")
    grade.add_argument("--html", type=Path, metavar="OUT.html",
                       help="the submission as an HTML page with the feedback in it (a notebook, or a .py file "
                            "with the feedback at the lines it names); opens offline (needs micrograde[html])")
    grade.add_argument("--fail-under", type=float, metavar="N",
                       help="exit 1 only when the score is below N (default: when any point is lost)")
    grade.add_argument("--execute", action="store_true",
                       help="also run the notebook top to bottom in a kernel and report failing cells "
                            "(needs micrograde[execute])")
    template = commands.add_parser("template", help="write the files a course copies")
    template.add_argument("kind", choices=("classroom50", "github-classroom", "gradescope", "prairielearn", "nbgrader",
                                           "kubernetes", "github-matrix", "slurm"),
                          help="which platform the files are for (kubernetes, github-matrix, slurm: a class graded "
                               "in shards, batch --shard, then merged, batch-merge)")
    template.add_argument("directory", type=Path, help="folder to write the files into (made if missing)")
    template.add_argument("--install", metavar="SOURCE",
                          help="where classroom50, github-classroom and github-matrix install micrograde from: a pip "
                               "requirement such as git+https://github.com/ORG/micrograde (required for those)")
    template.add_argument("--submission", default="exercises/",
                          help="what is graded in the student's repository (default: exercises/)")
    template.add_argument("--shards", type=int, default=4, metavar="N",
                          help="how many shards kubernetes, github-matrix and slurm grade a class in (default: 4)")
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
    batch.add_argument("--shard", type=shard_spec, metavar="K/N",
                       help="grade only shard K of N of the class (each student's shard a hash of their name), "
                            "writing its reports and a manifest that batch-merge makes the class's files of")
    merge = commands.add_parser("batch-merge", help="the gradebooks and summary of a batch graded in shards")
    merge.add_argument("shards", type=Path, nargs="+", metavar="SHARD_FOLDER",
                       help="the --out folders of batch --shard K/N (one the shards shared, or one each)")
    merge.add_argument("--out", type=Path, required=True, help="folder for the class's reports and gradebook")
    merge.add_argument("--assignment", default="micrograde",
                       help="the assignment's column name in the LMS gradebook CSV (default: micrograde)")
    result = commands.add_parser("result", help="exit 0 when one check of a JSON report passed")
    result.add_argument("report", type=Path, help="a report written by micrograde grade --format json")
    result.add_argument("check", help="a check id, such as mul.reused-node (with --passed: a target, such as mul)")
    result.add_argument("--passed", type=int, metavar="M",
                        help="exit 0 when at least M of the target's checks passed (for platforms that count whole "
                             "points: see docs/ci.md)")
    result.add_argument("--scored", type=int, metavar="N",
                        help="exit 0 when the target's score, rounded half up, is at least N (a target whose checks "
                             "the course weighs: see docs/ci.md)")
    scaffold = commands.add_parser("scaffold", help="write the student files of the course's exercise")
    scaffold.add_argument("directory", type=Path, help="folder to write the student files into (made if missing)")
    scaffold.add_argument("--adopt", type=Path, metavar="NOTEBOOK",
                          help="the course's own notebook, kept as it is, with the grading cell added at its end "
                               "(instead of micrograde's engine.py, train.py and notebook)")
    for command in (grade, template, batch, result, scaffold):
        command.add_argument("--config", type=Path, metavar="FILE",
                             help="the course configuration: micrograde.toml, or a pyproject.toml with "
                                  "[tool.micrograde] (default: the one in the current folder if there is one, "
                                  "else the classic exercise; a submission made for a course is refused without it)")
    return parser


def default_limits(words: list[str]) -> bool:
    """Whether a ``grade`` command line grades a file with the default course's time limits, as far as can
    be told before parsing it: no ``--config``, no ``--timeout``, no course file where it runs
    (``grader.course.might_configure``), no folder named (the children started ahead serve only a file: see
    ``grader.child.ahead``)."""
    from grader.course import might_configure

    return not (any(word.startswith(("--config", "--timeout")) or os.path.isdir(word) for word in words[1:])
                or might_configure(Path.cwd()))


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
    args = build_parser().parse_args(argv)
    try:
        return importlib.import_module(f"grader.commands.{args.command.replace('-', '_')}").run(args)
    except MachineError as exc:
        print(f"micrograde: this machine could not run the submission's process: {exc}; nothing was "
              "graded (the submission is not at fault; MICROGRADE_SANDBOX=none grades without the "
              "namespace sandbox)", file=sys.stderr)
        return exc.exit_status
    except MicrogradeError as exc:
        print(f"micrograde: error: {exc}", file=sys.stderr)
        return exc.exit_status
    except KeyboardInterrupt:
        print("micrograde: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # the grader's own bug: say so in one line
        if os.environ.get("MICROGRADE_DEBUG"):
            raise
        print(f"micrograde: internal error: {type(exc).__name__}: {exc} "
              "(set MICROGRADE_DEBUG=1 for details)", file=sys.stderr)
        return MicrogradeError.exit_status


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
