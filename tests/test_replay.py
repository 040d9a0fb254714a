"""Replaying stored examples: the same reports as a full Hypothesis search, and a cache that cannot mislead."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from helpers import CORPUS, ROOT, SOLUTION

from grader.grade import grade
from grader.search import replay
from grader.search.replay import ReplayCache
from grader.spec.config import default

MUTANTS = tomllib.loads((CORPUS / "mutants.toml").read_text())["mutant"]
SEARCHED = {"add", "mul", "pow", "tanh", "backward"}  # the targets with a generated check
ADD_SEARCH = "add:1:add,mul,pow,tanh"  # the cache key grade.py gives the generated check of add


def mutate(replacements: list[list[str]]) -> str:
    source = SOLUTION
    for old, new in replacements:
        source = source.replace(old, new)
    return source


@pytest.fixture
def cache_dir(tmp_path, monkeypatch) -> Path:
    directory = tmp_path / "cache"
    monkeypatch.setenv("MICROGRADE_CACHE_DIR", str(directory))
    monkeypatch.delenv("MICROGRADE_REPLAY", raising=False)
    return directory


def test_replay_reports_equal_full_search_on_the_mutation_corpus(cache_dir, tmp_path, monkeypatch):
    """The solution and the mutants, graded with replay (searches first recorded, then replayed) and without.

    One mutant for each distinct expectation that names a searched target, so
    every target and every diagnosis of theirs is covered in a CI-sized time;
    the others fail no search (their searches pass, as the solution's do). The
    mutants that hang are left out: they hang before any search runs.
    """
    chosen: dict[str, dict] = {}
    for m in MUTANTS:
        if "timeout" not in m and set(m["expect"]) & SEARCHED:
            chosen.setdefault(json.dumps(m["expect"], sort_keys=True), m)
    subjects = [("solution", SOLUTION)] + [(m["name"], mutate(m["replace"])) for m in chosen.values()]
    for name, source in subjects:
        (tmp_path / f"{name}.py").write_text(source)
    recorded = {name: grade(tmp_path / f"{name}.py").to_json() for name, _ in subjects}
    assert len(list(cache_dir.glob("*.json"))) == 5  # the four ops and backward
    replayed = {name: grade(tmp_path / f"{name}.py").to_json() for name, _ in subjects}
    monkeypatch.setenv("MICROGRADE_REPLAY", "0")
    without = {name: grade(tmp_path / f"{name}.py").to_json() for name, _ in subjects}
    for name, _ in subjects:
        assert recorded[name] == without[name], name
        assert replayed[name] == without[name], name
    # the comparison covers real shrinking, on every target Hypothesis searches
    shrunk = [c for report in without.values() for c in report["checks"]
              if c["id"].endswith(".generated") and c["counterexample"]]
    assert {c["target"] for c in shrunk} == SEARCHED
    assert len(shrunk) >= 20


def test_the_cache_is_written_atomically_and_never_next_to_the_submission(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    (work / "submission.py").write_text(SOLUTION)
    env = {k: v for k, v in os.environ.items() if k not in ("MICROGRADE_CACHE_DIR", "MICROGRADE_REPLAY")}
    env["XDG_CACHE_HOME"] = str(tmp_path / "xdg")
    result = subprocess.run([sys.executable, "-m", "grader", "grade", "submission.py"], capture_output=True,
                            text=True, cwd=work, env={**env, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in work.iterdir()) == ["submission.py"]
    cache = tmp_path / "xdg" / "micrograde"
    trees = [p for p in cache.iterdir() if p.name != "hypothesis"]
    assert len(trees) == 5 and all(p.suffix == ".json" and not p.name.startswith(".") for p in trees)
    # Hypothesis's own home (the constants it parsed out of local modules), as private as the cache
    assert sorted(p.name for p in cache.iterdir()) == sorted([*(p.name for p in trees), "hypothesis"])
    assert oct(cache.stat().st_mode & 0o777) == oct((cache / "hypothesis").stat().st_mode & 0o777) == "0o700"


def passing_path(tree: replay.SearchTree) -> list:
    """The examples a submission that passes them all is shown, in order."""
    examples, node = [], tree.following(None, False)
    while node >= 0:
        examples.append(tree.case(node))
        node = tree.following(node, False)
    assert node == replay.END
    return examples


def a_cache(cache_dir: Path) -> tuple[ReplayCache, list]:
    """The cache of the ``add`` search, filled by a real grade, and the examples of its passing path."""
    grade(CORPUS / "solution.py")
    cache = ReplayCache.for_search(ADD_SEARCH, default().examples)
    examples = passing_path(cache.load())
    assert len(examples) >= default().examples and cache.path.parent == cache_dir
    return cache, examples


def test_a_stored_cache_holds_the_examples_exactly(cache_dir):
    cache, examples = a_cache(cache_dir)
    assert all(replay.storable(e) for e in examples)
    assert len({e.exprs for e in examples}) > 10
    stale = ReplayCache.for_search(ADD_SEARCH, default().examples + 1)
    assert stale.path != cache.path and stale.load() is None


def test_a_failing_search_is_replayed_the_second_time_without_hypothesis(tmp_path):
    env = {**os.environ, "MICROGRADE_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("MICROGRADE_REPLAY", None)
    buggy = tmp_path / "buggy.py"
    buggy.write_text(mutate(next(m["replace"] for m in MUTANTS if m["name"] == "tanh-derivative-one-minus-t")))
    program = ("import sys; from grader.cli import main; code = main(['grade', sys.argv[1], '--format', 'json',"
               " '--output', sys.argv[2]]); print(code, 'hypothesis' in sys.modules)")
    runs = [subprocess.run([sys.executable, "-c", program, str(buggy), str(tmp_path / f"{i}.json")],
                           capture_output=True, text=True, cwd=ROOT, env=env, timeout=120) for i in range(2)]
    assert [r.stdout.split() for r in runs] == [["1", "True"], ["1", "False"]], runs[-1].stderr
    reports = [json.loads((tmp_path / f"{i}.json").read_text()) for i in range(2)]
    assert reports[0] == reports[1]
    [generated] = [c for c in reports[1]["checks"] if c["id"] == "tanh.generated"]
    assert generated["status"] == "failed" and generated["counterexample"]["expression"]


@pytest.mark.parametrize("damage", ["garbage", "truncated", "wrong-key", "wrong-checksum", "bad-case", "bad-link",
                                    "world-writable", "not-ours", "symlink"])
def test_a_corrupt_stale_or_hostile_cache_is_ignored_and_replaced(cache_dir, damage, tmp_path):
    cache, examples = a_cache(cache_dir)
    good = cache.path.read_bytes()
    header, payload = json.loads(good.split(b"\n")[0]), json.loads(good.split(b"\n")[1])
    # one example, then the end: a tree that would let a buggy submission through unnoticed
    fewer = {"root": 0, "nodes": [[0, replay.END, replay.END]], "cases": payload["cases"][:1]}

    def write(tree: dict, key: str = header["key"], checked: bool = True) -> None:
        text = json.dumps(tree).encode()
        sum_of = text if checked else json.dumps(payload).encode()
        cache.path.write_bytes(json.dumps({"key": key, "checksum": replay.checksum(sum_of)}).encode() + b"\n" + text)

    if damage == "garbage":
        cache.path.write_bytes(b"\x00\xff not json")
    elif damage == "truncated":
        cache.path.write_bytes(good[: len(good) // 2])
    elif damage == "wrong-key":
        write(fewer, key=header["key"].replace("add:1", "mul:1"))
    elif damage == "wrong-checksum":
        write(fewer, checked=False)
    elif damage == "bad-case":
        write({**fewer, "cases": [{"exprs": [[["leaf", "a"], ["add", 0, 5]]], "inputs": [["a", 2.0]]}]})
    elif damage == "bad-link":
        write({**fewer, "nodes": [[0, 7, replay.END]]})
    else:
        write(fewer)
        assert len(passing_path(cache.load())) == 1  # well formed: only where it is says no
        if damage == "world-writable":
            os.chmod(cache.path, 0o666)
        elif damage == "not-ours":
            os.chown(cache.path, os.geteuid() + 1, -1)
        else:
            elsewhere = tmp_path / "elsewhere.json"
            cache.path.rename(elsewhere)
            cache.path.symlink_to(elsewhere)
    tree = cache.load()
    assert tree is None or damage == "bad-case" and tree.case(0) is None
    source = mutate(next(m["replace"] for m in MUTANTS if m["name"] == "add-overwrite"))
    (tmp_path / "buggy.py").write_text(source)
    report = grade(tmp_path / "buggy.py")
    assert report.codes("add") == ["grad-overwrite"]
    assert not cache.path.is_symlink()
    grade(CORPUS / "solution.py")
    assert passing_path(cache.load()) == examples  # replaced by the real examples


def test_an_unsafe_cache_directory_is_not_used(cache_dir):
    cache_dir.mkdir(mode=0o777)
    os.chmod(cache_dir, 0o777)
    assert ReplayCache.for_search("add:1", 20) is None
    report = grade(CORPUS / "solution.py")
    assert report.score == report.max_score and list(cache_dir.iterdir()) == []


def test_replay_can_be_turned_off(cache_dir, monkeypatch):
    monkeypatch.setenv("MICROGRADE_REPLAY", "0")
    assert ReplayCache.for_search("add:1", 20) is None
    grade(CORPUS / "solution.py")
    assert not cache_dir.exists()


def test_a_search_stopped_by_the_shrink_budget_is_replayed_the_same(cache_dir, monkeypatch):
    """No mutant shrinks for that long, so here a smaller budget meets an erratic failure (a checksum of the case)."""
    import zlib

    from grader.judging.judge import Verdict
    from grader.search import engine
    from grader.search.strategies import expressions

    def runs(evaluated: list):
        def evaluate_many(cases: list) -> list[Verdict]:
            evaluated.extend(cases)
            return [Verdict(case, error={"type": "Erratic"} if zlib.crc32(repr(case).encode()) % 3 == 0
                            and len(case.expr) > 2 else None) for case in cases]
        return engine.search(lambda: expressions("mul"), evaluate_many, "both", 30, key="erratic")

    monkeypatch.setattr(engine, "SHRINK_BUDGET", 20)
    hypothesis_runs = []
    full_search = engine.full_search
    monkeypatch.setattr(engine, "full_search", lambda *args: hypothesis_runs.append(1) or full_search(*args))
    seen = [[], [], []]
    first = runs(seen[0])
    assert hypothesis_runs == [1]
    second = runs(seen[1])
    assert hypothesis_runs == [1]  # walked from the cache alone
    monkeypatch.setenv("MICROGRADE_REPLAY", "0")
    alone = runs(seen[2])
    assert seen[0] == seen[1] == seen[2]
    assert [v.case for v in first] == [v.case for v in second] == [v.case for v in alone]
    assert len(seen[2]) - 30 == 20  # the whole opening, then the examples the budget allows
