"""Replaying kept openings: the same reports as generating them with Hypothesis, and a cache that cannot mislead.

The default course's openings ship with micrograde (``grader.search.shipped``); the cache keeps
those of every other search. The tests of the cache therefore either take the shipped openings
away (``cache_dir``) or grade a course of their own (``helpers.OWN_COURSE``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from helpers import CORPUS, OWN_COURSE, ROOT, SOLUTION, needs_root

from grader import keyfile
from grader.exercise.config import default
from grader.exercise.targets import Exercise
from grader.grade import grade
from grader.search import replay, shipped
from grader.search.generable import Space, generable
from grader.search.replay import ReplayCache

MUTANTS = tomllib.loads((CORPUS / "mutants.toml").read_text())["mutant"]
SEARCHED = {"add", "mul", "pow", "tanh", "backward"}  # the targets with a generated check
OPS = ("add", "mul", "pow", "tanh")
ADD_SEARCH = Space("add", 1, OPS)  # the search of the generated check of add
SEARCHES = [Space(op, 1, OPS) for op in OPS] + [Space(None, 2, OPS)]  # every search of the default course


def mutate(replacements: list[list[str]]) -> str:
    source = SOLUTION
    for old, new in replacements:
        source = source.replace(old, new)
    return source


@pytest.fixture
def cache_dir(tmp_path, monkeypatch) -> Path:
    """A fresh cache directory, and no shipped openings: the default course's searches go through the cache,
    as a course's own do."""
    directory = tmp_path / "cache"
    monkeypatch.setenv("MICROGRADE_CACHE_DIR", str(directory))
    monkeypatch.delenv("MICROGRADE_REPLAY", raising=False)
    monkeypatch.setattr(shipped, "opening", lambda space, max_examples: None)
    return directory


def course(tmp_path: Path) -> Path:
    path = tmp_path / "course.toml"
    path.write_text(OWN_COURSE)
    return path


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
    result = subprocess.run([sys.executable, "-m", "grader", "grade", "submission.py", "--config", course(tmp_path)],
                            capture_output=True,
                            text=True, cwd=work, env={**env, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in work.iterdir()) == ["submission.py"]
    cache = tmp_path / "xdg" / "micrograde"
    trees = [p for p in cache.iterdir() if p.name not in ("hypothesis", replay.SECRET_NAME)]
    assert len(trees) == 5 and all(p.suffix == ".json" and not p.name.startswith(".") for p in trees)
    # Hypothesis's own home (the constants it parsed out of local modules), as private as the cache
    assert sorted(p.name for p in cache.iterdir()) == sorted([*(p.name for p in trees), "hypothesis",
                                                              replay.SECRET_NAME])
    assert oct((cache / replay.SECRET_NAME).stat().st_mode & 0o777) == "0o600"
    assert oct(cache.stat().st_mode & 0o777) == oct((cache / "hypothesis").stat().st_mode & 0o777) == "0o700"


def a_cache(cache_dir: Path) -> tuple[ReplayCache, list]:
    """The cache of the ``add`` search, filled by a real grade, and the opening it holds."""
    grade(CORPUS / "solution.py")
    cache = ReplayCache.for_search(ADD_SEARCH, default().examples)
    examples = cache.load()
    assert examples and cache.path.parent == cache_dir
    return cache, examples


def test_a_stored_cache_holds_the_opening_hypothesis_generates(cache_dir):
    from grader.search import engine
    from grader.search.strategies import expressions

    cache, examples = a_cache(cache_dir)
    assert all(replay.storable(e) for e in examples)
    ops = Exercise(default()).generated_ops
    assert examples == engine.generate(lambda: expressions("add", ops=ops), default().examples)
    assert len(set(examples)) == len(examples) > 10  # each example once
    stale = ReplayCache.for_search(ADD_SEARCH, default().examples + 1)
    assert stale.path != cache.path and stale.load() is None


@pytest.mark.parametrize("own_course", [False, True], ids=["default-course", "own-course"])
def test_once_the_openings_are_kept_no_grade_imports_hypothesis_not_even_a_failing_one(tmp_path, own_course):
    """The default course never needs Hypothesis, not even on a machine that never graded; a course of
    its own needs it for its first grade on a machine, which keeps the openings. After that, a submission
    whose searches fail is graded (and shrunk) without Hypothesis, the same every time."""
    env = {**os.environ, "MICROGRADE_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("MICROGRADE_REPLAY", None)
    buggy = tmp_path / "buggy.py"
    buggy.write_text(mutate(next(m["replace"] for m in MUTANTS if m["name"] == "mul-overwrite")))
    config = f", '--config', {str(course(tmp_path))!r}" if own_course else ""
    program = ("import sys; from grader.cli import main; code = main(['grade', sys.argv[1], '--format', 'json',"
               f" '--output', sys.argv[2]{config}]); print(code, 'hypothesis' in sys.modules)")
    subjects = [CORPUS / "solution.py", buggy, buggy]
    runs = [subprocess.run([sys.executable, "-c", program, str(subject), str(tmp_path / f"{i}.json")],
                           capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)
            for i, subject in enumerate(subjects)]
    first = ["0", str(own_course)]
    assert [r.stdout.split() for r in runs] == [first, ["1", "False"], ["1", "False"]], runs[-1].stderr
    reports = [json.loads((tmp_path / f"{i}.json").read_text()) for i in (1, 2)]
    assert reports[0] == reports[1]
    [generated] = [c for c in reports[1]["checks"] if c["id"] == "mul.generated"]
    assert generated["status"] == "failed" and generated["counterexample"]["expression"] == "(a * a)"


@pytest.mark.parametrize("damage", ["garbage", "truncated", "wrong-key", "wrong-mac", "bad-case", "bad-shape",
                                    "empty", "world-writable", "not-ours", "symlink", "secret-readable",
                                    "secret-not-ours", "secret-replaced"])
def test_a_corrupt_stale_or_hostile_cache_is_ignored_and_replaced(cache_dir, damage, tmp_path):
    if damage in ("not-ours", "secret-not-ours"):
        needs_root("giving a file to another user")
    cache, examples = a_cache(cache_dir)
    good = cache.path.read_bytes()
    header, payload = json.loads(good.split(b"\n")[0]), json.loads(good.split(b"\n")[1])
    # one example: an opening that would let a buggy submission through unnoticed
    fewer = {"cases": payload["cases"][:1]}

    def write(opening: dict, key: str = header["key"], checked: bool = True) -> None:
        text = json.dumps(opening).encode()
        mac = keyfile.mac(cache.secret, replay.signed(key, text if checked else json.dumps(payload).encode()))
        cache.path.write_bytes(json.dumps({"key": key, "mac": mac}).encode() + b"\n" + text)

    if damage == "garbage":
        cache.path.write_bytes(b"\x00\xff not json")
    elif damage == "truncated":
        cache.path.write_bytes(good[: len(good) // 2])
    elif damage == "wrong-key":
        write(fewer, key=header["key"].replace("add:1", "mul:1"))
    elif damage == "wrong-mac":
        write(fewer, checked=False)
    elif damage == "bad-case":
        write({"cases": [*fewer["cases"], {"exprs": [[["leaf", "a"], ["add", 0, 5]]], "inputs": [["a", 2.0]]}]})
    elif damage == "bad-shape":
        write({**fewer, "ended": True})
    elif damage == "empty":
        write({"cases": []})
    else:
        write(fewer)
        assert len(cache.load()) == 1  # well formed: only where it is says no
        secret = cache_dir / replay.SECRET_NAME
        if damage == "world-writable":
            os.chmod(cache.path, 0o666)
        elif damage == "secret-readable":
            os.chmod(secret, 0o644)
        elif damage == "secret-not-ours":
            os.chown(secret, os.geteuid() + 1, -1)
        elif damage == "secret-replaced":  # by someone who knows their own secret, not the grader's
            secret.write_bytes(os.urandom(len(cache.secret)))
        elif damage == "not-ours":
            os.chown(cache.path, os.geteuid() + 1, -1)
        else:
            elsewhere = tmp_path / "elsewhere.json"
            cache.path.rename(elsewhere)
            cache.path.symlink_to(elsewhere)
    cache = ReplayCache.for_search(ADD_SEARCH, default().examples)
    assert cache.load() is None
    source = mutate(next(m["replace"] for m in MUTANTS if m["name"] == "add-overwrite"))
    (tmp_path / "buggy.py").write_text(source)
    report = grade(tmp_path / "buggy.py")
    assert report.codes("add") == ["grad-overwrite"]
    assert not cache.path.is_symlink()
    grade(CORPUS / "solution.py")
    cache = ReplayCache.for_search(ADD_SEARCH, default().examples)
    assert cache.load() == examples  # replaced by the real opening
    assert oct((cache_dir / replay.SECRET_NAME).stat().st_mode & 0o777) == "0o600"


def test_an_unsafe_cache_directory_is_not_used(cache_dir):
    cache_dir.mkdir(mode=0o777)
    os.chmod(cache_dir, 0o777)
    assert ReplayCache.for_search(ADD_SEARCH, 20) is None
    report = grade(CORPUS / "solution.py")
    assert report.score == report.max_score and list(cache_dir.iterdir()) == []


def test_replay_can_be_turned_off(cache_dir, monkeypatch):
    monkeypatch.setenv("MICROGRADE_REPLAY", "0")
    assert ReplayCache.for_search(ADD_SEARCH, 20) is None
    grade(CORPUS / "solution.py")
    assert not cache_dir.exists()


def test_the_default_course_ships_one_opening_of_distinct_generable_cases_for_each_search():
    searches = shipped.default_searches()
    assert sorted(space.key for space, _ in searches) == sorted(space.key for space in SEARCHES)
    for space, examples in searches:
        opening = shipped.opening(space, examples)
        assert opening is not None and len(opening) == len(set(opening)) == examples, space
        assert all(generable(case, space) for case in opening), space
        assert shipped.opening(space, examples + 1) is None
    coverage = grade(CORPUS / "solution.py").to_json()["coverage"]  # no fewer graphs than a generated opening gave
    least = {"add": 38, "mul": 37, "pow": 37, "tanh": 30, "backward": 37}
    assert all(coverage[target]["graphs"] >= graphs for target, graphs in least.items()), coverage


def test_the_shipped_openings_are_what_the_installed_hypothesis_generates():
    """``python -m grader.staff.openings --check`` in a fresh process (Hypothesis draws constants from the
    modules a process has imported, so not in this one)."""
    import hypothesis

    made_with = json.loads(shipped.FILE.read_text())["hypothesis"]
    if hypothesis.__version__ != made_with:
        pytest.skip(f"the openings were generated with Hypothesis {made_with}; {hypothesis.__version__} is installed")
    result = subprocess.run([sys.executable, "-m", "grader.staff.openings", "--check"], capture_output=True,
                            text=True, cwd=ROOT, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
