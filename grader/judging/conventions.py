"""Conventions a course teaches for ``backward()``, accepted beside micrograd's own (``accept``).

micrograd's ``backward()`` only adds to gradients: a second call on a graph that shares
leaves with the first adds to what the first left there, and resetting is the training
loop's job. Some courses teach otherwise, and their own reference says so: the tutorial's
``backward()`` first sets every gradient in its graph to 0 (``zeroes-first``), so calling it
twice gives the same gradients. A course that accepts such a convention grades a
``backward()`` right when it is right under either; what is wrong under both is judged,
and diagnosed, as micrograd's.

Each convention is the expected gradients after each ``backward()`` of a case, from the
reference engine, and the finite-difference slope each leaf is held to.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import reference
from grader.exercise.cases import Case
from grader.exercise.expr import build_values, leaf_names, observe
from grader.judging.backward import judge_backward
from grader.judging.judge import Tolerance, Verdict


def graph_of(root: reference.Value) -> list[reference.Value]:
    """Every node reachable from ``root`` through ``_prev``."""
    seen, stack = {}, [root]
    while stack:
        node = stack.pop()
        if id(node) not in seen:
            seen[id(node)] = node
            stack.extend(node._prev)
    return list(seen.values())


@functools.lru_cache(maxsize=1024)
def zeroes_first_runs(case: Case) -> tuple[list[list], list[float]]:
    """Every node's gradient after each ``backward()`` that zeroes its graph first, and for each leaf (in name
    order) the finite-difference slope of the last root that uses it: only that root's gradient is left in it."""
    leaves: dict = {}
    runs = []
    for expr in case.exprs:
        built = build_values(expr, case.values, reference.Value, leaves)
        for node in graph_of(built[-1]):
            node.grad = 0.0
        built[-1].backward()
        runs.append(observe(built, "grad"))
    slopes = []
    for name in sorted(leaves):
        expr = next(e for e in reversed(case.exprs) if name in leaf_names(e))
        x = case.values[name]
        h = 1e-5 * max(1.0, abs(x))
        up = build_values(expr, {**case.values, name: x + h}, reference.Value)[-1].data
        down = build_values(expr, {**case.values, name: x - h}, reference.Value)[-1].data
        slopes.append((up - down) / (2 * h))
    return runs, slopes


RUNS: dict[str, Callable[[Case], tuple[list[list], list[float]]]] = {"zeroes-first": zeroes_first_runs}


def judge_backward_accepting(case: Case, reply: dict, tolerance: Tolerance, accept: tuple[str, ...]) -> Verdict:
    """micrograd's verdict on a ``backward()`` case, unless it fails there and is right under a convention the
    course accepts (``accept``), whose verdict it then gets."""
    verdict = judge_backward(case, reply, tolerance)
    if verdict.grads_ok or verdict.error is not None:
        return verdict
    for name in accept:
        other = judge_backward(case, reply, tolerance, RUNS[name])
        if other.grads_ok and other.fd_ok:
            return other
    return verdict
