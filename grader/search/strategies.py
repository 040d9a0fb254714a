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
from grader.exercise.expr import safe_domain
from grader.exercise.ops import CLASSIC
from grader.exercise.space import EXPONENTS, INPUTS, OTHER_OPERAND
from grader.search.generable import MAX_OPERATIONS, PICKS, interpret


def _operations(kinds: tuple[str, ...]) -> st.SearchStrategy:
    """One operation: (kind, which earlier node, the other operand, exponent)."""
    return st.tuples(st.sampled_from(kinds), st.integers(0, PICKS - 1), st.sampled_from(OTHER_OPERAND),
                     st.sampled_from(EXPONENTS))


_n_leaves = st.sampled_from((3, 2, 1))  # most first: the more distinct inputs, the more a wrong operand shows
_input = st.sampled_from(INPUTS)


@st.composite
def _cases(draw, target: str | None, roots: st.SearchStrategy, apart: bool = False) -> Case:
    n_leaves = draw(_n_leaves)
    exprs = tuple(interpret(ops, target, n_leaves, apart) for ops in draw(roots))
    used = sorted({node[1] for expr in exprs for node in expr if node[0] == "leaf"})
    inputs = {name: draw(_input) for name in used}
    assume(all(safe_domain(expr, inputs) for expr in exprs))
    return Case(exprs, tuple(sorted(inputs.items())))


@functools.cache
def expressions(target: str | None = None, roots: int = 1, ops: tuple[str, ...] = CLASSIC,
                apart: bool = False) -> st.SearchStrategy[Case]:
    """Cases whose expression starts with ``target`` (any of ``ops`` when ``None``); with ``apart``, no
    plain number on the target's left (its reflected op is graded on its own).

    With ``roots=2`` a case may hold two expressions that share their leaves,
    for a second ``backward()`` that must add to the first one's gradients.
    """
    kinds = ops if target is None else (target, *(k for k in ops if k != target))
    operations = st.lists(_operations(kinds), min_size=1, max_size=MAX_OPERATIONS)
    lists = operations.map(lambda ops: [ops]) if roots == 1 else st.lists(operations, min_size=1, max_size=roots)
    return _cases(target, lists, apart)
