"""Judging an optimizer's method: every parameter's data and gradient after each call, against plain SGD's."""

from __future__ import annotations

import functools

from grader.exercise.optimizers import StepCase, expected
from grader.judging.judge import Tolerance, Verdict, close, received_error, shown, valid_list


@functools.cache
def optimizer_request(case: StepCase, kind: str, needs: str) -> dict:
    """The child's request for an optimizer case (made once a process)."""
    return {"kind": kind, "needs": needs, "init": case.call.as_request(), "method": case.method,
            "data": list(case.data), "grads": [list(g) for g in case.grads], "lr": case.lr}


@functools.cache
def graph_request(case: StepCase, kind: str, needs: str) -> dict:
    """The child's request for a graph method's case: the leaves' data, each call's gradients, the call (a form)."""
    from grader.exercise.forms import parse

    return {"kind": kind, "needs": needs, "call": parse(case.init, "call", ("out", "lr")), "method": case.method,
            "data": list(case.data), "grads": [list(g) for g in case.grads], "lr": case.lr}


def judge_optimizer(case: StepCase, reply: dict, tolerance: Tolerance) -> Verdict:
    """What each call left: ``right_steps`` (every number as plain SGD leaves it), ``moved`` (some data changed
    since the call before), ``touched`` (some gradient changed by the call), as the rules read them."""
    if "error" in reply:
        return Verdict(case, error=received_error(reply["error"]))
    calls = reply["calls"]
    want = expected(case)
    if not (valid_list(calls, case.calls) and all(valid_list(c["data"], len(case.data))
                                                  and valid_list(c["grad"], len(case.data)) for c in calls)):
        raise ValueError("not every parameter after every call")
    right, moved, touched = [], [], []
    before = list(case.data)
    verdict = Verdict(case, reference="plain gradient descent")
    for k, (got, (data, grads), given) in enumerate(zip(calls, want, case.grads)):
        ok = [close(x, y, tolerance.reference) for x, y in zip(got["data"] + got["grad"], data + grads)]
        right.append(all(ok))
        moved.append(any(not close(x, y, tolerance.reference) for x, y in zip(got["data"], before)))
        touched.append(any(not close(x, y, tolerance.reference) for x, y in zip(got["grad"], given)))
        if not all(ok) and not verdict.expected:
            i = ok.index(False)
            what = "data" if i < len(data) else "grad"
            name = f"params[{i % len(data)}].{what} after call {k + 1}"
            verdict.expected = {name: (data + grads)[i]}
            verdict.actual = {name: shown((got["data"] + got["grad"])[i])}
        before = got["data"]
    verdict.grads_ok = all(right)
    verdict.train = {"right_steps": right, "moved": moved, "touched": touched}
    return verdict
