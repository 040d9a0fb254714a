"""Hypothesis strategies for expressions that stress an autograd engine.

An expression is a list of operations, each taking the previous result as its
first operand, so every operation lies on the path to the root and the graph
is as deep as the list is long. The second operand of ``+`` and ``*`` may be
any earlier node or a plain number: that is where reuse (``a * a``),
diamonds and shared nodes reached by paths of different lengths come from.
Hypothesis only generates from these strategies: a failure is shrunk by
``grader.search.shrink``, on the expression itself.
"""

from __future__ import annotations

import functools

from hypothesis import assume
from hypothesis import strategies as st

from grader.exercise.cases import Case
from grader.exercise.expr import Expr, prune, safe_domain
from grader.exercise.ops import CLASSIC, OPS
from grader.exercise.space import EXPONENTS, INPUTS, NAMES, OTHER_OPERAND


def _operations(kinds: tuple[str, ...]) -> st.SearchStrategy:
    """One operation: (kind, which earlier node, the other operand, exponent)."""
    return st.tuples(st.sampled_from(kinds), st.integers(0, 7), st.sampled_from(OTHER_OPERAND),
                     st.sampled_from(EXPONENTS))


def interpret(operations: list[tuple], target: str | None, n_leaves: int = len(NAMES)) -> Expr:
    """The expression a list of operations describes; the first one is ``target`` when given."""
    nodes: list = [("leaf", name) for name in NAMES[:n_leaves]]
    values = list(range(n_leaves))  # nodes that are Values, not plain numbers
    for step, (kind, pick, (constant, swapped), exponent) in enumerate(operations):
        kind = target if step == 0 and target else kind
        spec = OPS[kind]
        earlier = values[len(values) - 1 - pick % len(values)]
        first = earlier if step == 0 else values[-1]
        if spec.arity == 1:
            nodes.append((kind, first, *((exponent,) if spec.exponent else ())))
        elif spec.number_first:
            nodes.append(("const", 2.0 if constant is None else constant))
            nodes.append((kind, len(nodes) - 1, first))
        else:
            # A plain number goes left only where Python then calls the op's own method back
            # (2 + a is __radd__ calling __add__); 2 - a would grade __rsub__ instead of __sub__.
            swapped = swapped and kind in ("add", "mul")
            if constant is not None:
                nodes.append(("const", constant))
                earlier = len(nodes) - 1
            nodes.append((kind, *((earlier, first) if swapped else (first, earlier))))
        values.append(len(nodes) - 1)
    return rename_leaves(prune(tuple(nodes)))


def rename_leaves(expr: Expr) -> Expr:
    """Name the leaves a, b, c in the order they appear, so ``(c * c)`` reads ``(a * a)``."""
    names = iter(NAMES)
    return tuple(("leaf", next(names)) if node[0] == "leaf" else node for node in expr)


_n_leaves = st.sampled_from((3, 2, 1))  # most first: the more distinct inputs, the more a wrong operand shows
_input = st.sampled_from(INPUTS)


@st.composite
def _cases(draw, target: str | None, roots: st.SearchStrategy) -> Case:
    n_leaves = draw(_n_leaves)
    exprs = tuple(interpret(ops, target, n_leaves) for ops in draw(roots))
    used = sorted({node[1] for expr in exprs for node in expr if node[0] == "leaf"})
    inputs = {name: draw(_input) for name in used}
    assume(all(safe_domain(expr, inputs) for expr in exprs))
    return Case(exprs, tuple(sorted(inputs.items())))


@functools.cache
def expressions(target: str | None = None, roots: int = 1, ops: tuple[str, ...] = CLASSIC) -> st.SearchStrategy[Case]:
    """Cases whose expression starts with ``target`` (any of ``ops`` when ``None``).

    With ``roots=2`` a case may hold two expressions that share their leaves,
    for a second ``backward()`` that must add to the first one's gradients.
    """
    kinds = ops if target is None else (target, *(k for k in ops if k != target))
    operations = st.lists(_operations(kinds), min_size=1, max_size=6)
    lists = operations.map(lambda ops: [ops]) if roots == 1 else st.lists(operations, min_size=1, max_size=roots)
    return _cases(target, lists)
