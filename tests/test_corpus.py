"""The mutation corpus: real buggy submissions get exactly the right diagnosis, on the right target."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from grader.grade import Options, grade

CORPUS = Path(__file__).parent / "corpus"
SOLUTION = (CORPUS / "solution.py").read_text()
MUTANTS = tomllib.loads((CORPUS / "mutants.toml").read_text())["mutant"]


def mutate(source: str, replacements: list[list[str]]) -> str:
    for old, new in replacements:
        assert source.count(old) == 1, f"{old!r} must occur exactly once in solution.py"
        source = source.replace(old, new)
    return source


METHODS = {"add": "__add__", "mul": "__mul__", "pow": "__pow__", "tanh": "tanh", "backward": "backward",
           "train_step": "train_step"}


def assert_diagnosed(report, expect: dict[str, list[str]], source: str) -> None:
    """Exactly the expected codes on exactly the expected targets, each pointing at its method."""
    scores = report.target_scores()
    for target in report.targets:
        score, max_score = scores[target]
        if target in expect:
            assert score < max_score, f"{target} should lose points"
            assert sorted(report.codes(target)) == sorted(expect[target]), target
        else:
            assert score == max_score, f"{target} lost points it should not"
            assert report.codes(target) == [], target
    assert sorted(report.codes("submission")) == sorted(expect.get("submission", []))
    lines = source.splitlines()
    for diagnosis in report.diagnoses:
        if diagnosis.target != "submission":
            assert lines[diagnosis.line - 1].strip().startswith(f"def {METHODS[diagnosis.target]}("), diagnosis


def test_corpus_is_big_enough():
    assert len(CORRECT) >= 6
    codes = {code for m in MUTANTS for codes in m["expect"].values() for code in codes}
    assert len(MUTANTS) >= 30
    assert codes >= {
        "not-implemented", "crash", "timeout", "wrong-forward", "wrong-local-grad", "grad-overwrite",
        "constant-operand", "missing-seed", "incomplete-traversal", "wrong-order", "repeated-visit",
        "no-accumulation", "missing-zero-grad", "zero-grad-misplaced", "wrong-update", "load-error",
    }
    assert sum(1 for m in MUTANTS if len(set(m["expect"]) - {"submission"}) == 2) >= 3


@pytest.mark.parametrize("mutant", MUTANTS, ids=[m["name"] for m in MUTANTS])
def test_mutant_is_diagnosed(mutant, tmp_path):
    path = tmp_path / "submission.py"
    source = mutate(SOLUTION, mutant["replace"])
    path.write_text(source)
    report = grade(path, Options(timeout=mutant.get("timeout", 10.0)))
    assert_diagnosed(report, mutant["expect"], source)


CORRECT = sorted((CORPUS / "correct").glob("*.py")) + [CORPUS / "solution.py", CORPUS / "correct_dir"]


@pytest.mark.parametrize("path", CORRECT, ids=lambda p: p.name)
def test_correct_solution_gets_full_marks(path):
    report = grade(path)
    assert report.diagnoses == []
    assert report.score == report.max_score == 100.0
