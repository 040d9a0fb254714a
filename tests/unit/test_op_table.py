"""Every op fact is on the op's row (``grader.exercise.ops``), and every place that knows ops agrees with the table.

Adding an op is its row, its rule in the reference engine and its tests (docs/internals.md): the checks, the
labels a learner's graph is read by, what the scaffold imports, all come from the row; the one place that
cannot read the table, the engine training code runs on inside the child, must give each op's value and local
derivatives as the row does.
"""

from __future__ import annotations

import math

import pytest

import reference
from grader.child.inside import training
from grader.exercise.checks import checks_for
from grader.exercise.config import parse
from grader.exercise.ops import BUILT_IN, OPS
from grader.exercise.targets import Exercise
from grader.judging import composition
from grader.staff.scaffold import needs_math

POINTS = (0.7, 1.3, 2.1)


@pytest.mark.parametrize("name", BUILT_IN)
def test_every_op_has_checks_made_from_its_row(name):
    spec = OPS[name]
    checks = checks_for(name)
    assert checks and all(c.id.startswith(f"{name}.") for c in checks)
    assert [c.id for c in checks if c.code] == [f"{name}.{e.name}" for e in spec.edges if e.code]
    for edge in spec.edges:  # an edge of the row is a check of the op's, at exactly the row's inputs
        [check] = [c for c in checks if c.id == f"{name}.{edge.name}"]
        assert [c.values["a"] for c in check.cases] == [*edge.values, *edge.reused, *(x for x, _ in edge.scaled)]
    if spec.inputs:
        forward = next(c for c in checks if c.id == f"{name}.forward")
        assert [c.values["a"] for c in forward.cases] == list(spec.inputs)


@pytest.mark.parametrize("name", [n for n in BUILT_IN if not OPS[n].number_first and not OPS[n].exponent])
def test_a_learners_graph_is_read_by_every_label_of_the_row(name):
    spec = OPS[name]
    for label in (name, spec.label, *spec.spellings):
        assert composition.labelled(label, spec.arity) == name, label


def test_the_scaffold_imports_math_exactly_for_the_ops_the_row_says():
    for name in BUILT_IN:
        exercise = Exercise(parse({"targets": {name: {"points": 1}}}, "one op"))
        assert needs_math(exercise) is OPS[name].uses_math, name


@pytest.mark.parametrize("name", [n for n in BUILT_IN if hasattr(training.Value, OPS[n].method)])
def test_the_childs_training_engine_gives_each_op_as_its_row_does(name):
    """The engine training code runs on inside the child cannot import the table: numbers tell that it agrees."""
    spec = OPS[name]
    for x in POINTS:
        args = [x, 1.7] if spec.arity == 2 else [x]
        exponent = [3.0] if spec.exponent else []
        nodes = [training.Value(v) for v in args]
        applied = [*nodes, *exponent] if not spec.number_first else [args[0], nodes[1]]
        how, _, method = spec.call.partition(".")
        out = (getattr(__import__("operator"), method)(*applied) if how == "operator"
               else getattr(applied[0], method)(*applied[1:]))
        out.backward()
        want = spec.forward(*args, *exponent)
        local = spec.local(*args, *exponent, want)
        assert math.isclose(out.data, want, rel_tol=1e-12), (name, x)
        got = [n.grad for n in nodes][1:] if spec.number_first else [n.grad for n in nodes]
        assert all(math.isclose(g, d, rel_tol=1e-12, abs_tol=1e-12)
                   for g, d in zip(got, local[1:] if spec.number_first else local)), (name, x)


@pytest.mark.parametrize("name", BUILT_IN)
def test_the_reference_engine_has_a_rule_for_every_op(name):
    assert getattr(reference.Value, OPS[name].method, None) is not None
