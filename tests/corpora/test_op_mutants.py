"""Every op a course can grade, with every classic bug: generated mutants (``opmutants``), each graded under
two course configurations, must cost that op alone, with the same code under both, at the right line.

The engine is written from a table and each bug is made from it by rule, so every op of
``grader.exercise.ops`` meets every bug class that applies to it: forgetting ``out.grad``, ``=`` for
``+=``, a wrong local derivative (of either operand), a wrong forward value, a plain number not wrapped,
no ``return``, the closure attached to an operand, an operand left out of the children.
"""

from __future__ import annotations

import json

import pytest
from helpers import micrograde
from opmutants import WRITTEN, engine, mutants

from grader.exercise.config import parse
from grader.exercise.ops import BUILT_IN, OPS
from grader.grade import Options, grade

MUTANTS = mutants()


def every_op() -> object:
    """Every op of the table, and backward."""
    return parse({"targets": {**{name: {"points": 5} for name in BUILT_IN}, "backward": {"points": 10}}}, "every op")


def docs_course(op: str) -> object:
    """The docs' own course (relu and division, no tanh, a hidden check, 1.25 points a check of truediv),
    with ``op`` added where it does not grade it."""
    targets = {"add": {"points": 15}, "mul": {"points": 15}, "pow": {"points": 10}, "relu": {"points": 15},
               "truediv": {"points": 6.25}}
    targets.setdefault(op, {"points": 5})
    targets["backward"] = {"points": 20, "hidden": ["generated"]}
    return parse({"targets": targets}, "docs course")


CONFIGS = {"every op": lambda op: every_op(), "docs course": docs_course}


def outcome(path, config) -> tuple[list[str], list[tuple[str, str, int | None]], float, float]:
    """The targets that lost points, the diagnoses (target, code, line), the score and the maximum."""
    report = grade(path, Options(config=config, audience="staff"))
    lost = sorted(t for t, (score, most) in report.target_scores().items() if score < most)
    return lost, sorted((d.target, d.code, d.line) for d in report.diagnoses), report.score, report.max_score


def test_every_op_meets_every_bug_class_that_applies():
    """The table covers the op table, and every op gets every bug its shape allows."""
    assert set(WRITTEN) == set(BUILT_IN)
    made = {(m.op, m.bug) for m in MUTANTS}
    for name, spec in ((n, OPS[n]) for n in BUILT_IN):
        bugs = {bug for op, bug in made if op == name}
        assert {"forgets-out-grad", "overwrites-grad", "wrong-local-grad", "wrong-forward", "returns-none",
                "closure-on-self", "children-miss-self"} <= bugs, name
        if spec.arity == 2:
            assert "number-not-wrapped" in bugs, name
        if spec.arity == 2 and not spec.number_first:
            assert {"wrong-other-local-grad", "overwrites-other-grad", "closure-on-other", "children-miss-other",
                    "children-self-twice"} <= bugs, name
    assert len(MUTANTS) >= 110


@pytest.mark.parametrize("config", list(CONFIGS))
def test_the_engine_the_mutants_come_from_gets_full_marks(tmp_path, config):
    path = tmp_path / "engine.py"
    path.write_text(engine())
    for op in BUILT_IN:
        lost, diagnoses, score, most = outcome(path, CONFIGS[config](op))
        assert lost == [] and diagnoses == [] and score == most, (op, diagnoses)
        if config == "every op":
            break


@pytest.mark.parametrize("mutant", MUTANTS, ids=[m.name for m in MUTANTS])
def test_a_bug_costs_its_op_alone_with_one_code_under_every_course(tmp_path, mutant):
    path = tmp_path / "engine.py"
    path.write_text(mutant.source)
    for config in CONFIGS:
        lost, diagnoses, _, _ = outcome(path, CONFIGS[config](mutant.op))
        assert lost == [mutant.op], (config, diagnoses)
        assert diagnoses == [(mutant.op, mutant.code, mutant.line)], config


def test_the_docs_course_relu_that_forgets_out_grad_is_graded_not_crashed(tmp_path):
    """The most common relu bug, in the docs' course, through the real command: exit 1, never 3."""
    relu = next(m for m in MUTANTS if m.name == "relu-forgets-out-grad")
    path = tmp_path / "engine.py"
    path.write_text(relu.source)
    config = tmp_path / "micrograde.toml"
    config.write_text("[targets.add]\npoints = 15\n[targets.relu]\npoints = 15\n[targets.truediv]\npoints = 5\n"
                      '[targets.backward]\npoints = 20\nhidden = ["generated"]\n')
    result = micrograde("grade", str(path), "--config", str(config), "--format", "json")
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    assert [(d["target"], d["code"]) for d in report["diagnoses"]] == [("relu", "wrong-local-grad")]
    assert "you forgot `out.grad`" in report["diagnoses"][0]["message"]
