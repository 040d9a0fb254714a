"""The report as Classroom 50's ``result.json`` (schema ``classroom50/result/v1``).

Classroom 50 runs a course's ``autograders/ASSIGNMENT/autograder.py`` in the
student's checkout and publishes the ``result.json`` it writes. The identity
fields come from the environment variables its runner sets (``CLASSROOM``,
``ASSIGNMENT``, ``OWNER``, ``SUBMISSION_TAG``...); the runner checks them
against the repository, so they are passed on as they are. Points are whole
numbers there (its collector refuses any other): a target whose checks are
worth whole points is carried check by check, exactly; one whose checks are
not is carried as its score rounded half up (``grader.report.whole``). Every
check counts, hidden ones too: for a student, a hidden check's test says only
whether it passed. The total is the sum of the tests, so the two always agree. Each part of the
submission no target covered is a test worth nothing that did not pass (``status`` ``not-graded``).
Each test carries micrograde's diagnosis and counterexample as extra fields,
which Classroom 50 keeps.
"""

from __future__ import annotations

import datetime
import json
import os
from collections.abc import Mapping

from grader.exercise.ops import method_name
from grader.report.model import Report, counterexample_json, printable_tree
from grader.report.whole import carried

SCHEMA = "classroom50/result/v1"


def identity(environ: Mapping[str, str]) -> dict[str, str]:
    """The result's identity fields, from the variables the Classroom 50 runner sets."""
    commit = environ.get("COMMIT_URL", "")
    return {
        "classroom": environ.get("CLASSROOM", ""),
        "assignment": environ.get("ASSIGNMENT", ""),
        "assignment_type": environ.get("ASSIGNMENT_TYPE", "") or "individual",
        "owner": environ.get("OWNER", "") or environ.get("USERNAME", ""),
        "submission": environ.get("SUBMISSION_TAG", ""),
        "commit": commit,
        "release": environ.get("RELEASE_URL", ""),
        "review": environ.get("REVIEW_URL", "") or commit,
    }


def render_classroom50(report: Report, environ: Mapping[str, str] | None = None,
                       now: datetime.datetime | None = None) -> str:
    """``result.json`` for Classroom 50: one test per check, in whole points."""
    now = now or datetime.datetime.now(datetime.UTC)
    tests = []
    for target in report.target_scores():
        checks = [c for c in report.shown_checks() if c.target == target]
        passed = [c.status == "passed" and not report.forbidden for c in checks]
        for check, ok, (score, most) in zip(checks, passed, carried([c.max_score for c in checks], passed)):
            test = {"test-name": f"{check.id} ({method_name(check.target)}: {check.title})", "passed": ok,
                    "score": score, "max-score": most, "status": check.status}
            if not ok:
                withheld = report.withheld(check)
                test["diagnoses"] = [] if withheld else [d.code for d in report.shown_diagnoses()
                                                         if d.target == check.target]
                test["message"] = report.details(check)
                if check.counterexample is not None and not withheld:
                    test["counterexample"] = counterexample_json(check.counterexample)
            tests.append(test)
    # What no target covered: a test worth nothing that did not pass, so that no "all passed" hides it.
    tests += [{"test-name": f"not-graded: {part.name} ({part.where.describe()})", "passed": False, "score": 0,
               "max-score": 0, "status": "not-graded", "message": f"not graded: {part.describe()}"}
              for part in report.ungraded]
    result = {
        "schema": SCHEMA,
        **identity(os.environ if environ is None else environ),
        "datetime": now.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "score": sum(t["score"] for t in tests),
        "max-score": sum(t["max-score"] for t in tests),
        "tests": tests,
    }
    return json.dumps(printable_tree(result), indent=2) + "\n"
