"""``micrograde result``: the verdict of one check of a JSON report, for CI systems that give points per
command (GitHub Classroom's autograding steps); with ``--passed M``, whether at least M of a target's checks
passed, and with ``--scored N`` whether its score rounded half up is at least N (the steps of a target whose
checks are not worth whole points: ``grader.report.whole``)."""

from __future__ import annotations

import argparse
import json

from grader.errors import EXIT_LOST_POINTS, EXIT_OK, UsageError
from grader.report.model import report_from_json
from grader.report.whole import exact, half_up


def run(args: argparse.Namespace) -> int:
    try:
        report = report_from_json(json.loads(args.report.read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError):
        raise UsageError(f"{args.report}: not a micrograde JSON report") from None
    if args.scored is not None:
        scores = report.target_scores()
        if args.check not in scores:
            raise UsageError(f"{args.report}: no target {args.check}")
        score = 0 if report.forbidden else half_up(exact(scores[args.check][0]))
        print(f"{args.check}: {score} points, rounded (this step needs {args.scored})")
        return EXIT_OK if score >= args.scored else EXIT_LOST_POINTS
    if args.passed is not None:
        of_target = [c.status == "passed" for c in report.checks if c.target == args.check]
        if not of_target:
            raise UsageError(f"{args.report}: no target {args.check}")
        passed = 0 if report.forbidden else sum(of_target)
        print(f"{args.check}: {passed} of {len(of_target)} checks passed (this step needs {args.passed})")
        return EXIT_OK if passed >= args.passed else EXIT_LOST_POINTS
    check = next((c for c in report.checks if c.id == args.check), None)
    if check is None:
        raise UsageError(f"{args.report}: no check {args.check}")
    print(f"{check.id}: {check.status} ({check.score:g} / {check.max_score:g})")
    if check.status != "passed":
        print(check.message)
        for diagnosis in report.diagnoses:
            if diagnosis.target == check.target:
                print(f"[{diagnosis.code}] {diagnosis.message}")
    return EXIT_OK if check.status == "passed" and not report.forbidden else EXIT_LOST_POINTS
