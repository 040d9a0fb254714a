"""Judging a gradient the learner derived: what their function returned at a point, against the course's
function's exact derivatives (the reference) and a central difference of it (the second oracle)."""

from __future__ import annotations

from grader.exercise.formula import Formula
from grader.exercise.gradients import PointCase
from grader.judging.judge import Tolerance, Verdict, close, received_error, shown


def partials(case: PointCase) -> list[str]:
    """How a report names each partial derivative: ``df/da``."""
    return [f"df/d{name}" for name, _ in case.inputs]


def judge_gradient(case: PointCase, reply: dict, formula: Formula, tolerance: Tolerance) -> Verdict:
    """The verdict on what the learner's function returned at ``case``'s point: every partial derivative, in
    the order of the inputs, right up to the reference tolerance."""
    if "error" in reply:
        return Verdict(case, error=received_error(reply["error"]))
    exact = formula.gradient(*case.point)
    estimate = formula.central_difference(*case.point)
    result = reply["result"]
    if not isinstance(result, list):
        raise ValueError("no result")
    names = partials(case)
    got = [result[i] if i < len(result) else None for i in range(len(names))]
    verdict = Verdict(case, expected=dict(zip(names, exact)), actual={n: shown(x) for n, x in zip(names, got)},
                      reference="the exact derivatives")
    verdict.grads_ok = len(result) == len(names) and all(close(x, y, tolerance.reference) for x, y in zip(got, exact))
    verdict.fd_ok = len(result) == len(names) and all(close(x, y, tolerance.finite_difference)
                                                      for x, y in zip(got, estimate))
    if len(result) != len(names):
        verdict.faults.add("length")  # not one number per input
    return verdict
