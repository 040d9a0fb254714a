"""What the search can generate: expressions made from lists of operations, and the exact test of it.

The strategies (``grader.search.strategies``) draw lists of operations and
make expressions of them with ``interpret``, which lives here, away from
Hypothesis, so that a grade replaying a kept opening (``grader.search.replay``)
can check without importing Hypothesis that every kept case is one the
strategies could have drawn: the same leaf names and values, plain numbers,
exponents, ops, number of operations and shape (``generable``). The test reads
the operations back from the expression, one step of ``interpret`` at a time,
and accepts only what interpreting them again gives exactly (the same types
too: ``2`` is not ``2.0``), so it can never accept a case the strategies could
not make.
"""

from __future__ import annotations

import itertools
from typing import NamedTuple

from grader.exercise.cases import Case
from grader.exercise.expr import Expr, prune, safe_domain
from grader.exercise.ops import OPS
from grader.exercise.space import EXPONENTS, INPUTS, NAMES, OTHER_OPERAND

MAX_OPERATIONS = 6  # operations in one expression
PICKS = 8  # how far back an operation may reach for its other operand


class Space(NamedTuple):
    """One search's strategy: the op every expression starts with (``None``: any of ``ops``), how many
    expressions a case may hold, the ops drawn, and whether a plain number stays on the target's right
    (``apart``: its reflected op is graded on its own). ``key`` names it, in the cache too."""

    target: str | None
    roots: int
    ops: tuple[str, ...]
    apart: bool = False

    @classmethod
    def of(cls, target, ops: tuple[str, ...]) -> Space:
        """The search of ``target``'s generated check: expressions that start with its op, or (``backward``)
        two graphs that share leaves (one, where the engine's pass returns its gradients)."""
        return cls(target.op_name, 1, ops, target.apart) if target.kind.name == "op" else cls(None, target.passes, ops)

    @property
    def key(self) -> str:
        return f"{self.target}:{self.roots}:{','.join(self.ops)}" + (":apart" if self.apart else "")

    @property
    def kinds(self) -> tuple[str, ...]:
        """The ops an operation may be, the target first."""
        return self.ops if self.target is None else (self.target, *(k for k in self.ops if k != self.target))


def step(nodes: list, values: list[int], kind: str, operation: tuple, first_step: bool,
         right: str | None = None) -> None:
    """Append to ``nodes`` what one operation ``(kind, pick, (constant, swapped), exponent)`` makes;
    ``values`` lists the nodes that are Values, not plain numbers (the new result is added). A plain number
    never goes left of the op ``right`` (whose reflected method is graded apart)."""
    _, pick, (constant, swapped), exponent = operation
    spec = OPS[kind]
    earlier = values[len(values) - 1 - pick % len(values)]
    first = earlier if first_step else values[-1]
    if spec.arity == 1:
        nodes.append((kind, first, *((exponent,) if spec.exponent else ())))
    elif spec.number_first:
        nodes.append(("const", 2.0 if constant is None else constant))
        nodes.append((kind, len(nodes) - 1, first))
    else:
        # A plain number goes left only where Python then calls the op's own method back
        # (2 + a is __radd__ calling __add__); 2 - a would grade __rsub__ instead of __sub__.
        swapped = swapped and kind in ("add", "mul") and not (constant is not None and kind == right)
        if constant is not None:
            nodes.append(("const", constant))
            earlier = len(nodes) - 1
        nodes.append((kind, *((earlier, first) if swapped else (first, earlier))))
    values.append(len(nodes) - 1)


def interpret(operations: list[tuple], target: str | None, n_leaves: int = len(NAMES), apart: bool = False) -> Expr:
    """The expression a list of operations describes; the first one is ``target`` when given (with ``apart``,
    never with a plain number on its left)."""
    nodes: list = [("leaf", name) for name in NAMES[:n_leaves]]
    values = list(range(n_leaves))
    for number, operation in enumerate(operations):
        step(nodes, values, target if number == 0 and target else operation[0], operation, number == 0,
             target if apart else None)
    return rename_leaves(prune(tuple(nodes)))


def rename_leaves(expr: Expr) -> Expr:
    """Name the leaves a, b, c in the order they appear, so ``(c * c)`` reads ``(a * a)``."""
    names = iter(NAMES)
    return tuple(("leaf", next(names)) if node[0] == "leaf" else node for node in expr)


def _exact(a: object, b: object) -> bool:
    """Equal, and of the same types all the way down (``repr`` tells ``2`` from ``2.0``)."""
    return a == b and repr(a) == repr(b)


def expression_generable(expr: Expr, space: Space) -> bool:
    """Whether ``interpret`` makes ``expr`` from some list of operations of ``space``."""
    leaves = next((i for i, node in enumerate(expr) if node[0] != "leaf"), len(expr))
    if not 1 <= leaves <= len(NAMES) or not _exact(expr[:leaves], tuple(("leaf", n) for n in NAMES[:leaves])):
        return False
    nodes, values = list(expr[:leaves]), list(range(leaves))
    for number in range(MAX_OPERATIONS):
        if len(nodes) == len(expr):
            break
        at = len(nodes) + (expr[len(nodes)][0] == "const")
        kind = expr[at][0] if at < len(expr) else None
        if kind not in space.kinds or (number == 0 and space.target not in (None, kind)):
            return False
        exponents = [k for k in EXPONENTS if _exact(k, expr[at][-1])] if OPS[kind].exponent else EXPONENTS[:1]
        for pick, other, exponent in itertools.product(range(PICKS), OTHER_OPERAND, exponents):
            trial, trial_values = nodes.copy(), values.copy()
            step(trial, trial_values, kind, (kind, pick, other, exponent), number == 0,
                 space.target if space.apart else None)
            if _exact(tuple(trial), expr[:len(trial)]):
                nodes, values = trial, trial_values
                break
        else:
            return False
    return len(nodes) == len(expr) > leaves and _exact(rename_leaves(prune(tuple(nodes))), expr)


def generable(case: object, space: Space) -> bool:
    """Whether the strategy of ``space`` could have drawn ``case``: its expressions, their leaves'
    values (one of ``INPUTS`` for each leaf used, and no other), all where the ops are safe."""
    if not isinstance(case, Case) or not 1 <= len(case.exprs) <= space.roots:
        return False
    used = sorted({node[1] for expr in case.exprs for node in expr if node[0] == "leaf"})
    return (all(expression_generable(expr, space) for expr in case.exprs)
            and [name for name, _ in case.inputs] == used
            and all(any(_exact(value, allowed) for allowed in INPUTS) for _, value in case.inputs)
            and all(safe_domain(expr, case.values) for expr in case.exprs))
