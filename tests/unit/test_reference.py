"""The reference engine against two independent oracles: finite differences and sympy."""

from __future__ import annotations

import math

import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

import reference
from grader.exercise.expr import Expr, evaluate, leaf_names
from grader.search.strategies import expressions

SETTINGS = settings(max_examples=150, deadline=None, derandomize=True, database=None)


def symbolic(expr: Expr) -> tuple[sympy.Expr, dict[str, sympy.Symbol]]:
    symbols = {name: sympy.Symbol(name, real=True) for name in leaf_names(expr)}
    built: list = []
    for node in expr:
        kind = node[0]
        if kind == "leaf":
            built.append(symbols[node[1]])
        elif kind == "const":
            built.append(sympy.Float(node[1]))
        elif kind == "add":
            built.append(built[node[1]] + built[node[2]])
        elif kind == "mul":
            built.append(built[node[1]] * built[node[2]])
        elif kind == "pow":
            built.append(built[node[1]] ** sympy.nsimplify(node[2]))
        else:
            built.append(sympy.tanh(built[node[1]]))
    return built[-1], symbols


def reference_leaf_grads(case) -> dict[str, float]:
    _, grads = evaluate(case.expr, case.values, reference.Value)
    return {node[1]: g for node, g in zip(case.expr, grads) if node[0] == "leaf"}


@SETTINGS
@given(expressions())
def test_reference_matches_sympy(case):
    root, symbols = symbolic(case.expr)
    point = {symbols[n]: v for n, v in case.values.items()}
    data, _ = evaluate(case.expr, case.values, reference.Value)
    assert math.isclose(data[-1], float(root.subs(point)), rel_tol=1e-9, abs_tol=1e-9)
    for name, grad in reference_leaf_grads(case).items():
        exact = float(sympy.diff(root, symbols[name]).subs(point))
        assert math.isclose(grad, exact, rel_tol=1e-9, abs_tol=1e-9), name


@SETTINGS
@given(expressions())
def test_reference_matches_finite_differences(case):
    def f(values):
        return evaluate(case.expr, values, reference.Value)[0][-1]

    for name, grad in reference_leaf_grads(case).items():
        x = case.values[name]
        h = 1e-6 * max(1.0, abs(x))
        slope = (f({**case.values, name: x + h}) - f({**case.values, name: x - h})) / (2 * h)
        assert math.isclose(grad, slope, rel_tol=1e-5, abs_tol=1e-6), name


@given(st.floats(-3, 3), st.floats(-3, 3))
@settings(deadline=None, derandomize=True, database=None)
def test_derived_operators(x, y):
    a, b = reference.Value(x), reference.Value(y)
    assert math.isclose((a - b).data, x - y, abs_tol=1e-12)
    assert math.isclose((2 - a).data, 2 - x, abs_tol=1e-12)
    assert math.isclose((-a).data, -x, abs_tol=1e-12)
    assert math.isclose((3 * a).data, 3 * x, abs_tol=1e-12)
    if abs(y) > 0.1:
        assert math.isclose((a / b).data, x / y, rel_tol=1e-12, abs_tol=1e-12)
        assert math.isclose((1 / b).data, 1 / y, rel_tol=1e-12)
    assert math.isclose(a.exp().data, math.exp(x), rel_tol=1e-12)
    assert a.relu().data == max(x, 0.0)


def test_exp_and_relu_gradients():
    a = reference.Value(0.7)
    (a.exp() * a.relu()).backward()
    assert math.isclose(a.grad, math.exp(0.7) * 0.7 + math.exp(0.7), rel_tol=1e-12)
    b = reference.Value(-0.5)
    b.relu().backward()
    assert b.grad == 0.0


def test_worked_example():
    # L = (a*b + c) * f, the classic first example, computed by hand.
    a, b, c, f = (reference.Value(v) for v in (2.0, -3.0, 10.0, -2.0))
    L = (a * b + c) * f
    L.backward()
    assert (L.data, a.grad, b.grad, c.grad, f.grad) == (-8.0, 6.0, -4.0, -2.0, 4.0)


def test_mlp_shapes_and_zero_grad():
    model = reference.MLP(3, [4, 4, 1])
    assert len(model.parameters()) == 4 * 4 + 4 * 5 + 5
    out = model([1.0, -2.0, 0.5])
    assert isinstance(out, reference.Value)
    out.backward()
    assert any(p.grad != 0 for p in model.parameters())
    model.zero_grad()
    assert all(p.grad == 0 for p in model.parameters())
    layer_out = reference.Layer(3, 2)([1.0, 2.0, 3.0])
    assert isinstance(layer_out, list) and len(layer_out) == 2


def test_train_step_lowers_the_loss():
    xs = [[2.0, 3.0, -1.0], [3.0, -1.0, 0.5], [0.5, 1.0, 1.0], [1.0, 1.0, -1.0]]
    ys = [1.0, -1.0, -1.0, 1.0]
    model = reference.MLP(3, [4, 4, 1])
    losses = [reference.train_step(model, xs, ys, 0.05) for _ in range(30)]
    assert all(isinstance(loss, float) for loss in losses)
    assert losses[-1] < losses[0] / 2
