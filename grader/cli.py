"""The ``micrograde`` command.

Exit status: 0 full marks; 1 points were lost; 2 bad invocation or input that
cannot be graded; 3 an internal error of the grader itself. Errors are one
line on stderr, never a traceback (``MICROGRADE_DEBUG=1`` shows it).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

EXIT_OK, EXIT_LOST_POINTS, EXIT_BAD_INPUT, EXIT_INTERNAL = 0, 1, 2, 3


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line and exit 2, as for any bad input
        self.exit(EXIT_BAD_INPUT, f"micrograde: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="micrograde", description="Grade a build-micrograd-yourself submission.")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    grade = commands.add_parser("grade", help="grade a .py file, a notebook, or a directory")
    grade.add_argument("path", type=Path)
    grade.add_argument("--format", choices=("text", "json"), default="text")
    grade.add_argument("--output", type=Path, help="write the report here instead of stdout")
    grade.add_argument("--timeout", type=float, default=10.0,
                       help="seconds each target (and loading) may take (default 10)")
    grade.add_argument("--feedback", type=Path, metavar="OUT.ipynb",
                       help="write the notebook back with feedback cells in it (notebook submissions)")
    grade.add_argument("--html", type=Path, metavar="OUT.html", help="the feedback notebook as an HTML page")
    grade.add_argument("--execute", action="store_true",
                       help="also run the notebook top to bottom in a kernel and report failing cells "
                            "(needs micrograde[execute])")
    return parser


def write(path: Path, text: str) -> None:
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise _BadInput(f"{path}: cannot write ({exc.strerror})") from None


def run_grade(args: argparse.Namespace) -> int:
    from grader import handback
    from grader.grade import Options, grade_submission
    from grader.submission import read_submission
    from grader.text import render_text

    if args.timeout <= 0:
        raise _BadInput("--timeout must be positive")
    submission = read_submission(args.path)
    notebook = handback.graded_notebook(submission)
    if (args.feedback or args.html or args.execute) and notebook is None:
        raise _BadInput("--feedback, --html and --execute need a notebook submission")
    if args.execute:
        from grader.execute import available

        if not available():
            raise _BadInput("--execute needs a Jupyter kernel: pip install 'micrograde[execute]'")
    report = grade_submission(submission, Options(timeout=args.timeout))
    if args.execute:
        from grader.execute import execute_notebook  # noqa: I001 (optional extra)

        report.execution = execute_notebook(notebook.path, timeout=args.timeout * 6)
        report.warnings.extend(report.execution.get("warnings", []))
    if args.feedback or args.html:
        handed_back = handback.feedback_notebook(notebook.path.read_bytes(), report, submission)
        if args.feedback:
            write(args.feedback, handback.dumps(handed_back))
        if args.html:
            write(args.html, handback.render_html(handed_back))
    if args.format == "json":
        text = json.dumps(report.to_json(), indent=2) + "\n"
    else:
        to_terminal = args.output is None and sys.stdout.isatty() and not os.environ.get("NO_COLOR")
        text = render_text(report, colour=to_terminal)
    if args.output is None:
        sys.stdout.write(text)
    else:
        write(args.output, text)
    return EXIT_OK if report.perfect else EXIT_LOST_POINTS


class _BadInput(Exception):
    pass


def main(argv: list[str] | None = None) -> int:
    from grader.submission import InputError

    args = build_parser().parse_args(argv)
    try:
        return run_grade(args)
    except (InputError, _BadInput) as exc:
        print(f"micrograde: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("micrograde: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # the grader's own bug: say so in one line
        if os.environ.get("MICROGRADE_DEBUG"):
            raise
        print(f"micrograde: internal error: {type(exc).__name__}: {exc} "
              "(set MICROGRADE_DEBUG=1 for details)", file=sys.stderr)
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
