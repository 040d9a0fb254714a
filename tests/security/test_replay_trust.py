"""A replay cache written by someone else can neither break nor weaken a grade.

The cache directory is shared by every grade of one user on a machine: a
student who reaches it (their own grade run as the same user, a shared lab
machine) may rewrite it. A kept case is used only if the strategies could
have generated it and the file carries an HMAC under the grader's secret,
so what a forger writes is ignored and the grade is the one a fresh cache
gives, in every sandbox mode.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os

from helpers import CORPUS, micrograde
from test_replay import ADD_SEARCH, SEARCHES, course

from grader.exercise.cases import Case
from grader.search import engine
from grader.search.generable import Space, generable
from grader.search.replay import ReplayCache
from grader.search.strategies import expressions

POW = Space("pow", 1, ADD_SEARCH.ops)


def test_every_generated_case_is_generable_and_nothing_else_is():
    for space in SEARCHES:
        cases = engine.generate(lambda s=space: expressions(s.target, roots=s.roots, ops=s.ops), 60)
        assert cases and all(generable(case, space) for case in cases), space

    def one(*nodes, **inputs) -> Case:
        return Case((tuple(nodes),), tuple(sorted(inputs.items())))
    a, b = ("leaf", "a"), ("leaf", "b")
    assert generable(one(a, ("pow", 0, 2), a=2.0), POW)
    foreign = [
        one(a, ("pow", 0, 0.5), a=-8.0),  # a value no strategy draws
        one(a, ("pow", 0, 0.5), a=-1.5),  # a drawn value, but outside where pow is safe
        one(a, ("pow", 0, 2.0), a=2.0),  # 2.0 is not the exponent 2
        one(a, ("pow", 0, 4), a=2.0),  # an exponent no strategy draws
        one(("leaf", "x"), ("pow", 0, 2), x=2.0),  # a leaf name no strategy makes
        one(a, ("pow", 0, 2), a=2.0, b=0.5),  # an input no leaf uses
        one(a, ("pow", 0, 2), a=2),  # an int where the strategies draw floats
        one(a, ("tanh", 0), a=2.0),  # not starting with the search's target
        one(a, ("pow", 0, 2), ("sub", 1, 0), a=2.0),  # an op outside the search
        one(a, ("const", 3.0), ("pow", 0, 2), ("mul", 2, 1), a=2.0),  # a constant no strategy draws
        one(a, ("pow", 0, 2), ("tanh", 0), a=2.0),  # the later op does not build on the one before
        one(b, ("pow", 0, 2), b=2.0),  # leaves not named in order
        one(a, *(("pow", i, 1) for i in range(7)), a=2.0),  # more operations than a search makes
        one(a, a=2.0),  # no operation at all
        Case(((a, ("pow", 0, 2)), (a, ("pow", 0, 3))), (("a", 2.0),)),  # two expressions, one root searched
    ]
    assert [case for case in foreign if generable(case, POW)] == []


def forge(path, cases: list[dict], key: str, secret: bytes) -> None:
    """Write a cache file the way the cache does, with ``secret`` (the grader's, or a forger's own)."""
    payload = json.dumps({"cases": cases}).encode()
    header = {"key": key, "mac": hmac.new(secret, key.encode() + b"\0" + payload, hashlib.sha256).hexdigest()}
    path.write_bytes(json.dumps(header).encode() + b"\n" + payload)


def graded(submission, cache, tmp_path, name: str) -> tuple[int, dict]:
    """The grade of ``submission`` in a course of its own (``helpers.OWN_COURSE``), whose openings the cache keeps."""
    out = tmp_path / f"{name}.json"
    result = micrograde("grade", str(submission), "--format", "json", "--output", str(out),
                        "--config", str(course(tmp_path)),
                        env={"MICROGRADE_CACHE_DIR": str(cache), "MICROGRADE_REPLAY": "1"})
    assert result.returncode in (0, 1), result.stderr
    report = json.loads(out.read_text())
    return result.returncode, {k: report[k] for k in ("score", "max_score", "coverage")} | {
        "checks": [(c["id"], c["status"]) for c in report["checks"]]}


def test_forged_openings_grade_as_a_fresh_cache(mode, tmp_path, monkeypatch):
    """A case outside the search (``pow(-8, 0.5)``), even under the grader's own secret, and one easy
    case per search under a forger's key: the grade, its exit status and its coverage are a fresh cache's."""
    cache = tmp_path / "cache"
    fresh = graded(CORPUS / "solution.py", cache, tmp_path, "fresh")
    monkeypatch.setenv("MICROGRADE_CACHE_DIR", str(cache))
    caches = {space: ReplayCache.for_search(space, 20) for space in SEARCHES}
    assert all(c.load() for c in caches.values())  # the files the fresh grade kept
    planted = [{"exprs": [[["leaf", "a"], ["pow", 0, 0.5]]], "inputs": [["a", -8.0]]}]
    forge(caches[POW].path, planted, caches[POW].key, caches[POW].secret)
    assert graded(CORPUS / "solution.py", cache, tmp_path, "planted") == fresh
    for space, kept in caches.items():
        kind = space.target or "add"
        easy = [["leaf", "a"], [kind, 0, *((2,) if kind == "pow" else (0,) if kind in ("add", "mul") else ())]]
        forge(kept.path, [{"exprs": [easy], "inputs": [["a", 2.0]]}], kept.key, os.urandom(32))
    assert graded(CORPUS / "solution.py", cache, tmp_path, "easy") == fresh


def test_a_kept_opening_with_a_case_the_grader_cannot_judge_is_generated_again(tmp_path, monkeypatch):
    monkeypatch.setenv("MICROGRADE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("MICROGRADE_REPLAY", raising=False)
    first = engine.opening(POW, 10)
    path = ReplayCache.for_search(POW, 10).path
    kept = path.stat().st_ino
    assert engine.opening(POW, 10) == first and path.stat().st_ino == kept  # replayed as it is
    calls = []
    monkeypatch.setattr(engine, "generate", lambda *args: calls.append(args) or list(first))
    assert engine.opening(POW, 10, judgeable=lambda case: case != first[3]) == first
    assert len(calls) == 1 and path.stat().st_ino != kept  # generated again, and kept anew
