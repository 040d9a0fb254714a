"""Shrinking a failing case to the smallest one that still fails.

Shrinking works on the expressions themselves, not on the random choices
that made them: every candidate is a case a student could have been shown,
one step simpler than the current one. A step drops a second expression, puts
an operand in place of the operation that used it, has an operation use
another earlier node instead of one of its operands (``a * 2`` becomes
``a * a``) or take its two operands the other way round, makes two leaves one
(``a * b`` becomes ``a * a``: that is how a node used twice appears), or picks
a simpler plain number, exponent or leaf value. A candidate is kept only if
it still fails, in the same way (``symptom``), and is smaller by ``Case.rank``, the same measure that chooses
which failure a report shows, so shrinking always ends, and it ends at a case
none of whose simpler neighbours fails (or when its budget is spent).

Candidates go to the child a few at a time, smallest first, ahead of their
replies; the smallest failing one of the first few that hold a failure is
kept. Which cases are tried depends only on the verdicts, so a submission
that always answers the same way is always shown the same cases.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from grader.exercise.cases import Case
from grader.exercise.expr import Expr, exponent, operands, prune, safe_domain, with_operands
from grader.exercise.ops import OPS
from grader.exercise.space import CONSTANTS, EXPONENTS, INPUTS, NAMES
from grader.judging.judge import Verdict

BUDGET = 120  # cases tried after the first failure, so shrinking stays quick
CHUNK = 8  # candidates sent to the child at once


def shrink(failure: Verdict, evaluate_many: Callable[[list], list[Verdict]], focus: str,
           target: str | None, budget: int = BUDGET) -> list[Verdict]:
    """The failures found while shrinking the case of ``failure``, in the order they were found.

    ``target`` is the op every candidate must still contain (``None``: any op).
    ``evaluate_many`` answering fewer cases than it was given ends the shrinking.
    """
    best = failure
    seen = {failure.case}
    found: list[Verdict] = []
    while budget > 0:
        candidates = [c for c in sorted(set(simpler(best.case)) - seen, key=lambda c: c.rank)
                      if c.rank < best.case.rank and allowed(c, target)]
        kept = None
        for start in range(0, len(candidates), CHUNK):
            chunk = candidates[start:start + min(CHUNK, budget)]
            if not chunk:
                break
            budget -= len(chunk)
            seen.update(chunk)
            verdicts = evaluate_many(chunk)
            failing = [v for v in verdicts if not v.passed(focus) and symptom(v) == symptom(failure)]
            found.extend(failing)
            if len(verdicts) < len(chunk):
                return found
            if failing:
                kept = min(failing, key=lambda v: v.case.rank)
                break
        if kept is None:
            return found
        best = kept
    return found


def symptom(verdict: Verdict) -> tuple:
    """How a case fails: the exception it raised, or which values were wrong. Shrinking keeps it,
    so a smaller case shows the same mistake, never another one met on the way (a wrong value
    that makes some other input crash)."""
    if verdict.error is not None:
        return "error", verdict.error.get("type")
    return "wrong", verdict.forward_ok, verdict.grads_ok


def allowed(case: Case, target: str | None) -> bool:
    """Whether ``case`` is one the search could show: every expression an operation whose inputs
    are safe, and ``target`` (if any) among the operations."""
    values = case.values
    return (all(expr[-1][0] not in ("leaf", "const") and safe_domain(expr, values) for expr in case.exprs)
            and (target is None or any(node[0] == target for expr in case.exprs for node in expr)))


def simpler(case: Case) -> Iterator[Case]:
    """Every case one step simpler than ``case`` (some may not be smaller by rank: the caller filters)."""
    exprs, values = case.exprs, case.values
    if len(exprs) > 1:
        for k in range(len(exprs)):
            yield canonical(exprs[:k] + exprs[k + 1:], values)
    for k, expr in enumerate(exprs):
        for i, node in enumerate(expr):
            used = operands(node)
            changed = [redirect(expr, i, j) for j in used if expr[j][0] != "const"]  # a Value for a Value
            # (the plain number of a reflected op, 2 + a through __radd__, stays a plain number)
            own = [j for j in set(used) if not (expr[j][0] == "const" and OPS[node[0]].number_first)]
            changed += [replace(expr, i, with_operands(node, {j: other})) for j in own
                        for other in range(i) if expr[other][0] != "const" and other != j]
            if len(used) == 2 and all(expr[j][0] != "const" for j in used):
                changed.append(replace(expr, i, with_operands(node, {used[0]: used[1], used[1]: used[0]})))
            if node[0] == "const":
                changed += [replace(expr, i, ("const", number)) for number in CONSTANTS]
            elif exponent(node) is not None:
                changed += [replace(expr, i, (*node[:-1], power)) for power in EXPONENTS]
            for new in changed:
                yield canonical(exprs[:k] + (new,) + exprs[k + 1:], values)
    names = sorted(values)
    for n, name in enumerate(names):
        for other in names[:n]:
            yield canonical(tuple(rename(expr, name, other) for expr in exprs), values)
        for number in INPUTS:
            yield canonical(exprs, {**values, name: number})


def canonical(exprs: tuple[Expr, ...], values: dict[str, float]) -> Case:
    """The case of ``exprs`` with every leaf once per expression, nodes nobody uses dropped,
    and the leaves named a, b, c in the order they first appear."""
    exprs = tuple(prune(merge_leaves(expr)) for expr in exprs)
    order = list(dict.fromkeys(node[1] for expr in exprs for node in expr if node[0] == "leaf"))
    names = dict(zip(order, NAMES))
    exprs = tuple(tuple(("leaf", names[n[1]]) if n[0] == "leaf" else n for n in expr) for expr in exprs)
    return Case(exprs, tuple(sorted((names[name], float(values[name])) for name in order)))


def merge_leaves(expr: Expr) -> Expr:
    """``expr`` with a leaf named twice made one node (the first), used wherever either was."""
    first: dict[str, int] = {}
    to: dict[int, int] = {}
    for i, node in enumerate(expr):
        if node[0] == "leaf":
            to[i] = first.setdefault(node[1], i)
    return tuple(with_operands(node, to) for node in expr)


def redirect(expr: Expr, i: int, j: int) -> Expr:
    """``expr`` with node ``j`` (an operand of node ``i``) used wherever node ``i`` was."""
    if i == len(expr) - 1:
        return prune(expr[:j + 1])
    return prune(tuple(with_operands(node, {i: j}) for node in expr))


def replace(expr: Expr, i: int, node: tuple) -> Expr:
    return expr[:i] + (node,) + expr[i + 1:]


def rename(expr: Expr, name: str, to: str) -> Expr:
    return tuple(("leaf", to) if node == ("leaf", name) else node for node in expr)
