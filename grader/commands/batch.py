"""``micrograde batch``: grade a folder of submissions, one per student (``grader.staff.batch``)."""

from __future__ import annotations

import argparse

from grader.commands.course import course
from grader.errors import UsageError
from grader.staff.batch import cores, run_batch, students_in


def run(args: argparse.Namespace) -> int:
    jobs = len(cores()) if args.jobs is None else args.jobs
    if jobs < 1:
        raise UsageError("--jobs must be at least 1")
    if args.timeout is not None and args.timeout <= 0:
        raise UsageError("--timeout must be positive")
    if not args.submissions.is_dir():
        raise UsageError(f"{args.submissions}: not a directory")
    if not students_in(args.submissions):
        raise UsageError(f"{args.submissions}: no submissions in it (one file or folder per student)")
    # The course every student is graded by, chosen before the batch starts (a wrong configuration, or a class
    # made for a course the command line does not name, stops it there).
    chosen = course(args, [s.path for s in students_in(args.submissions)])
    return run_batch(args.submissions, args.out, jobs=jobs, timeout=args.timeout, force=args.force,
                     assignment=args.assignment, config=chosen.path, shard=args.shard)
