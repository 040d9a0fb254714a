"""``micrograde batch-merge``: the class's gradebooks and summary from the shards of a batch
(``grader.staff.shards``)."""

from __future__ import annotations

import argparse
import sys

from grader.errors import EXIT_OK
from grader.staff.batch import write_atomically, write_class
from grader.staff.shards import merged_rows


def run(args: argparse.Namespace) -> int:
    rows = merged_rows(args.shards)
    reports = args.out / "reports"
    for student, _, text in rows:  # the class's reports in one place, as one batch leaves them
        path = reports / f"{student}.json"
        if not (path.is_file() and path.read_text(encoding="utf-8", errors="surrogateescape") == text):
            write_atomically(path, text)
    write_class(args.out, [(student, report) for student, report, _ in rows], args.assignment)
    print(f"micrograde: merged {len(rows)} students into {args.out}", file=sys.stderr)
    return EXIT_OK
