"""The mutation corpus: buggy submissions get exactly the right diagnosis, on the right target, at the mutated line."""

from __future__ import annotations

import pytest
from golden import CORRECT, MUTANTS, SOLUTION, mutate, report_of


def mutated_lines(source: str, replacements: list[list[str]]) -> set[int]:
    """The lines of the mutated file that a mutation wrote, and where it deleted lines, the line now in their place."""
    marks = [chr(0xE000 + i) for i in range(len(replacements))]  # private-use characters, one per replacement
    marked = mutate(source, [[old, new.replace("\n", mark + "\n") + mark]
                             for (old, new), mark in zip(replacements, marks)])
    lines = set()
    for (old, new), mark in zip(replacements, marks):
        written = {number for number, line in enumerate(marked.splitlines(), 1) if mark in line}
        if old.count("\n") > new.count("\n"):
            written.add(max(written) + 1)
        lines |= written
    return lines


def expected_line(mutant: dict, target: str) -> int:
    line = mutant["line"]
    return line[target] if isinstance(line, dict) else line


def assert_diagnosed(report: dict, mutant: dict) -> None:
    """Exactly the expected codes on exactly the expected targets, each pointing at the mutated line."""
    expect = mutant["expect"]
    codes = {}
    for diagnosis in report["diagnoses"]:
        codes.setdefault(diagnosis["target"], []).append(diagnosis["code"])
    for target, points in report["targets"].items():
        if target in expect:
            assert points["score"] < points["max_score"], f"{target} should lose points"
            assert sorted(codes.get(target, [])) == sorted(expect[target]), target
        else:
            assert points["score"] == points["max_score"], f"{target} lost points it should not"
            assert codes.get(target, []) == [], target
    assert set(expect) - {"submission"} <= set(report["targets"])
    assert sorted(codes.get("submission", [])) == sorted(expect.get("submission", []))
    for diagnosis in report["diagnoses"]:
        assert diagnosis["line"] == expected_line(mutant, diagnosis["target"]), diagnosis


def test_corpus_is_big_enough():
    assert len(CORRECT) >= 6
    codes = {code for m in MUTANTS for codes in m["expect"].values() for code in codes}
    assert len(MUTANTS) >= 80
    assert codes >= {
        "not-implemented", "crash", "timeout", "wrong-forward", "wrong-local-grad", "grad-overwrite",
        "constant-operand", "missing-seed", "incomplete-traversal", "wrong-order", "repeated-visit",
        "no-accumulation", "missing-zero-grad", "zero-grad-misplaced", "wrong-update", "load-error",
        "missing-child", "detached-backward", "missing-backward", "missing-update",
    }
    assert sum(1 for m in MUTANTS if len(set(m["expect"]) - {"submission"}) == 2) >= 3
    assert sum(1 for m in MUTANTS if not m["expect"]) >= 5, "correct rewrites keep full marks"


@pytest.mark.parametrize("mutant", [m for m in MUTANTS if m["expect"]], ids=lambda m: m["name"])
def test_mutant_line_is_the_mutated_statement(mutant):
    """Each expected line is one the mutation wrote: the corpus stays right when solution.py changes."""
    lines = mutated_lines(SOLUTION, mutant["replace"])
    wanted = mutant["line"].values() if isinstance(mutant["line"], dict) else [mutant["line"]]
    assert set(wanted) <= lines, f"{sorted(wanted)} not among the mutated lines {sorted(lines)}"


@pytest.mark.parametrize("mutant", MUTANTS, ids=[m["name"] for m in MUTANTS])
def test_mutant_is_diagnosed(mutant):
    """Graded in this process, under the mutant's course configuration if it names one (``golden.report``),
    as ``micrograde grade`` does: the command line itself is tested elsewhere."""
    assert_diagnosed(report_of(f"mutant/{mutant['name']}"), mutant)


@pytest.mark.parametrize("path", CORRECT, ids=lambda p: p.name)
def test_correct_solution_gets_full_marks(path):
    report = report_of(f"correct/{path.name}")
    assert report["diagnoses"] == []
    assert report["score"] == report["max_score"] == 100.0
