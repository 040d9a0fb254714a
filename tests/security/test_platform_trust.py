"""What the grader keeps for itself between grades, on every platform: the replay cache cannot be forged,
and its secret is out of the submission's reach."""

from __future__ import annotations

import hashlib
import hmac
import json
import os

from helpers import SOLUTION
from test_platforms import BUGGY, deserved, verdict

PLANTED = {"exprs": [[["leaf", "a"], ["pow", 0, 0.5]]], "inputs": [["a", -8.0]]}  # outside every search
EASY = {"exprs": [[["leaf", "a"], ["add", 0, 0]]], "inputs": [["a", 2.0]]}  # one easy case for every search


def forge(path, case: dict, secret: bytes) -> None:
    key = json.loads(path.read_bytes().split(b"\n", 1)[0])["key"]
    payload = json.dumps({"cases": [case]}).encode()
    mac = hmac.new(secret, key.encode() + b"\0" + payload, hashlib.sha256).hexdigest()
    path.write_bytes(json.dumps({"key": key, "mac": mac}).encode() + b"\n" + payload)


def test_a_forged_replay_cache_grades_as_a_fresh_one(grading, workspace):
    """Every kept opening of the platform's cache (under its ``HOME``: a course of its own's, see
    ``platforms.platform``) rewritten: a case outside the search under the cache's own secret, then one
    easy case under a forger's. The grade, its coverage included, is the one a fresh cache gives."""
    cache = grading.home / ".cache" / "micrograde"
    secret = (cache / "replay.key").read_bytes()
    fresh, _ = grading.grade(workspace / "fresh", BUGGY, own_course=True)
    assert verdict(fresh) == verdict(deserved(BUGGY))
    for name, case, key in (("planted", PLANTED, secret), ("easy", EASY, os.urandom(32))):
        openings = sorted(cache.glob("*.json"))
        assert len(openings) >= 5, openings  # the five searches (and any of an older micrograde)
        for path in openings:
            forge(path, case, key)
        grading.hand_over(cache)
        report, _ = grading.grade(workspace / name, BUGGY, own_course=True)
        assert verdict(report) == verdict(fresh) and report["coverage"] == fresh["coverage"], name


def test_the_replay_secret_is_out_of_the_submissions_reach(grading, workspace):
    """A submission that reads the cache's secret where the grader keeps it never gets it: as ``nobody``,
    in namespaces, or under Landlock as the grader's own user."""
    path = grading.home / ".cache" / "micrograde" / "replay.key"
    secret = path.read_bytes().hex()
    reader = (f"try:\n    print('key:', open({str(path)!r}, 'rb').read().hex())\n"
              "except Exception as exc:\n    print('refused:', type(exc).__name__)\n")
    report, _ = grading.grade(workspace / "reader", reader + SOLUTION)
    assert "refused:" in report["output"] and secret not in report["output"], (grading.name, report["output"])
    assert verdict(report) == verdict(deserved(SOLUTION)) and report["sandbox"]["tamper_proof"] is True
