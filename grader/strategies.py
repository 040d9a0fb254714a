"""Hypothesis strategies for expressions that stress an autograd engine.

Expressions are grown one operation at a time, each operation taking its
operands from *any* earlier node: so nodes get reused (``a * a``), graphs get
diamonds, and a shared node can be reached by paths of different lengths.
Every choice shrinks towards something simpler (fewer nodes, the most recent
operand, no constant, exponent 2), so a failure shrinks to a small,
readable expression.
"""

from __future__ import annotations

from hypothesis import assume
from hypothesis import strategies as st

from grader.cases import Case
from grader.expr import OPS, Expr, prune, safe_domain

CONSTANTS = (None, 2.0, -1.5, 0.5)
EXPONENTS = (2, 3, -1, 0.5, 0, 1, -2, 1.5)
NAMES = "abc"


@st.composite
def _expressions(draw, target: str | None) -> Case:
    n_leaves = draw(st.integers(1, 3))
    nodes: list = [("leaf", name) for name in NAMES[:n_leaves]]
    kinds = OPS if target is None else (target, *(k for k in OPS if k != target))
    values = list(range(n_leaves))  # nodes that are Values, not plain numbers

    def operand() -> int:
        return values[len(values) - 1 - draw(st.integers(0, len(values) - 1))]

    for step in range(draw(st.integers(1, 5))):
        kind = target if (step == 0 and target) else draw(st.sampled_from(kinds))
        first = operand()
        if kind == "tanh":
            nodes.append(("tanh", first))
        elif kind == "pow":
            nodes.append(("pow", first, draw(st.sampled_from(EXPONENTS))))
        else:
            constant = draw(st.sampled_from(CONSTANTS))
            if constant is None:
                other = operand()
            else:
                nodes.append(("const", constant))
                other = len(nodes) - 1
            pair = (other, first) if draw(st.booleans()) else (first, other)
            nodes.append((kind, *pair))
        values.append(len(nodes) - 1)
    expr: Expr = prune(tuple(nodes))
    assume(target is None or any(node[0] == target for node in expr))
    inputs = {}
    for node in expr:
        if node[0] == "leaf":
            magnitude = draw(st.floats(0.25, 2.0, allow_nan=False, allow_infinity=False))
            inputs[node[1]] = -magnitude if draw(st.booleans()) else magnitude
    assume(safe_domain(expr, inputs))
    return Case((expr,), tuple(sorted(inputs.items())))


def expressions(target: str | None = None) -> st.SearchStrategy[Case]:
    """Cases whose expression contains ``target`` (any op when ``None``)."""
    return _expressions(target)
