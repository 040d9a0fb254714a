"""``micrograde template``: write the files a course copies to grade on a platform."""

from __future__ import annotations

import argparse

from grader.commands.course import course
from grader.errors import EXIT_OK, UsageError
from grader.exercise.targets import Exercise
from grader.staff import templates


def run(args: argparse.Namespace) -> int:
    if args.kind in ("classroom50", "github-classroom", "github-matrix") and not args.install:
        raise UsageError(f"template {args.kind} needs --install SOURCE: where to install micrograde from "
                         "(it is not on PyPI), e.g. --install git+https://github.com/ORG/micrograde")
    chosen = course(args)
    exercise, pinned = Exercise(chosen.config), templates.pinned(chosen.path)
    if args.kind == "github-classroom":
        written = templates.github_classroom(args.directory, args.install, args.submission, exercise, pinned)
    elif args.kind == "classroom50":
        written = templates.classroom50(args.directory, args.install, args.submission, pinned)
    elif args.kind == "prairielearn":
        written = templates.prairielearn(args.directory, exercise, pinned)
    elif args.kind in templates.SHARDED:
        if args.shards < 1:
            raise UsageError("--shards must be at least 1")
        written = templates.sharded(args.kind, args.directory, args.shards, args.install, pinned)
    elif args.kind == "nbgrader":
        from grader.staff.nbgrader import write_notebook

        written = write_notebook(exercise, args.directory)
    else:
        written = templates.gradescope(args.directory, pinned)
    for path in written:
        print(path)
    return EXIT_OK
