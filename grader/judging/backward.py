"""Judging a ``backward()``: the leaves' gradients after the learner's pass on each root, against the reference
engine's and finite differences, and what the order its nodes ran in shows of the pass (a missing seed, a node
skipped or visited twice, operands before their users).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import reference
from grader.exercise.cases import Case
from grader.exercise.expr import Expr, build_values, engine_for, forward_values, leaf_names, observe, operands
from grader.judging.closeness import close
from grader.judging.judge import Tolerance, Verdict, malformed, received_error, reference_values, shown, valid_list
from grader.judging.passes import pass_faults


@functools.lru_cache(maxsize=1024)
def reference_runs(case: Case) -> tuple[list[list], list[float]]:
    """Every node's gradient after each ``backward()`` (roots sharing leaves), and the
    finite-difference slope of the roots' sum for each leaf, in name order."""
    leaves: dict = {}
    runs = []
    engine = engine_for(case.exprs, reference.Value)
    for expr in case.exprs:
        built = build_values(expr, case.values, engine, leaves)
        built[-1].backward()
        runs.append(observe(built, "grad"))

    def forward(values: dict[str, float]) -> float:
        return sum(build_values(expr, values, engine)[-1].data for expr in case.exprs)

    slopes = []
    for name in sorted(leaves):
        x = case.values[name]
        h = 1e-5 * max(1.0, abs(x))
        up, down = forward({**case.values, name: x + h}), forward({**case.values, name: x - h})
        slopes.append((up - down) / (2 * h))
    return runs, slopes


def judge_backward(case: Case, reply: dict, tolerance: Tolerance,
                   expected: Callable[[Case], tuple[list[list], list[float]]] = reference_runs) -> Verdict:
    """Compare the leaves' gradients after the student's ``backward()`` on each root with those ``expected``
    gives (micrograd's own, or a convention's: ``grader.judging.conventions``)."""
    if "error" in reply:
        return Verdict(case, error=received_error(reply["error"]))
    runs = reply.get("runs")
    if not valid_list(runs, len(case.exprs)) or not all(
        isinstance(r, dict) and valid_list(r.get("grads"), len(e)) and isinstance(r.get("trace"), list)
        and all(isinstance(i, int) for i in r["trace"])
        for r, e in zip(runs, case.exprs)
    ):
        return malformed(case, "the reply does not have the expected shape")
    expected_runs, slopes = expected(case)
    verdict = Verdict(case)
    control = runs[-1].get("control") if len(runs) == 1 else None
    if valid_list(control, len(case.expr)) and all(isinstance(control[i], float) for i, node in enumerate(case.expr)
                                                   if node[0] == "leaf"):
        # Nodes of the learner's own ops: the pass is judged against micrograde's own pass over them.
        expected_runs, slopes = [control], [None] * len(slopes)
        verdict.reference = "micrograde's own backward pass over your nodes"
    last_got, last_want = runs[-1]["grads"], expected_runs[-1]
    names = sorted({n for expr in case.exprs for n in leaf_names(expr)})
    final: dict[str, tuple[object, float]] = {}
    for expr, got, want in zip(case.exprs, (r["grads"] for r in runs), expected_runs):
        for i, node in enumerate(expr):
            if node[0] == "leaf":
                final[node[1]] = (got[i], want[i])
    for name, fd_slope in zip(names, slopes):
        got, want = final[name]
        verdict.expected[name] = want
        verdict.actual[name] = shown(got)
        verdict.grads_ok &= close(got, want, tolerance.reference)
        verdict.fd_ok &= fd_slope is None or close(got, fd_slope, tolerance.finite_difference)
    verdict.expected_data = last_want[-1]
    verdict.actual_data = shown(last_got[-1])
    data = reference_values(case)[0]
    verdict.graph = (case.expr, list(zip(data, last_want)), [(d, shown(g)) for d, g in zip(data, last_got)])
    verdict.traces = [run["trace"] for run in runs]
    if not verdict.grads_ok:
        traced = reply.get("traced", True)
        for expr, run in zip(case.exprs, runs):
            if traced:
                verdict.faults |= trace_faults(expr, run["trace"], run["grads"][-1], run.get("seed"))
        if not verdict.faults and (not traced or not reply.get("leaves_traced", True)) and len(case.exprs) == 1:
            # Where the pass's order is not seen (or not its leaves'), what its gradients show; a trace of the
            # operations' nodes rules out a node skipped.
            verdict.faults = pass_faults(case.expr, forward_values(case.expr, case.values), runs[-1]["grads"],
                                         tolerance.reference, runs[-1].get("seed"), internal_traced=traced)
            verdict.details["simulated"] = bool(verdict.faults)
        if not verdict.faults:
            # Every node ran once, in order, from a seeded root: the pass itself replaced gradient it should only
            # have added to. Where the trace shows the nodes of operations only (an engine whose leaves take
            # their gradient without a step of theirs), when the pass reached the leaves is not seen: what this
            # case shows is said by another case, if one shows more (``diagnosis.rules``).
            verdict.faults.add("no-accumulation" if reply.get("leaves_traced", True) else "unexplained")
    return verdict


def trace_faults(expr: Expr, trace: list[int], root_grad: object, seed: object = None) -> set[str]:
    """What is wrong with one backward pass, read from the order its nodes ran in, the root's
    gradient after it and ``seed``, the root's gradient when its own ``_backward`` ran (``None``:
    it never ran): a root seeded only after the pass ends with 1 and passed on nothing."""
    faults = set()
    # An engine that keeps gradients on its leaves alone keeps none on the root (``None``): the seed says it.
    if (root_grad is not None and not close(root_grad, 1.0)) or (seed is not None and not close(seed, 1.0)):
        faults.add("missing-seed")
    internal = [i for i, node in enumerate(expr) if node[0] not in ("leaf", "const")]
    calls = {i: [k for k, j in enumerate(trace) if j == i] for i in internal}
    if any(not calls[i] for i in internal):
        faults.add("incomplete-traversal")
    if any(len(calls[i]) > 1 for i in internal):
        faults.add("repeated-visit")
    if not faults & {"incomplete-traversal", "repeated-visit"}:
        for i in internal:
            for j in operands(expr[i]):
                if j in calls and calls[j] and calls[i] and calls[j][0] < calls[i][0]:
                    faults.add("wrong-order")
    return faults
