"""Judging a gradient the learner derived: what their function returned at a point, against the course's
function's exact derivatives (the reference) and a central difference of it (the second oracle)."""

from __future__ import annotations

from grader.exercise.formula import Formula
from grader.exercise.gradients import DERIVATION_TOLERANCE, PointCase, estimates
from grader.judging.judge import Tolerance, Verdict, close, received_error, shown


def partials(case: PointCase) -> list[str]:
    """How a report names each partial derivative: ``df/da``."""
    return [f"df/d{name}" for name, _ in case.inputs]


def judge_gradient(case: PointCase, reply: dict, formula: Formula, tolerance: Tolerance) -> Verdict:
    """The verdict on what the learner's function returned at ``case``'s point: every partial derivative, in
    the order of the inputs, right up to rounding, as a derivation is (``DERIVATION_TOLERANCE``, or the course's
    tighter reference tolerance). One right only up to the finite-difference tolerance is an estimate, not a
    derivation (``details["estimate"]``)."""
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
    strict = min(tolerance.reference, DERIVATION_TOLERANCE)
    verdict.grads_ok = len(result) == len(names) and all(close(x, y, strict) for x, y in zip(got, exact))
    verdict.fd_ok = len(result) == len(names) and all(close(x, y, tolerance.finite_difference)
                                                      for x, y in zip(got, estimate))
    if not verdict.grads_ok and len(result) == len(names) and estimated(got, exact, formula, case, tolerance):
        verdict.details = {"estimate": True}
    if len(result) != len(names):
        verdict.faults.add("length")  # not one number per input
    return verdict


def estimated(got: list, exact: tuple[float, ...], formula: Formula, case: PointCase, tolerance: Tolerance) -> bool:
    """Whether numbers that are not the derivatives are an estimate of them: near them (the finite-difference
    tolerance), or, where differences miss them (``case.telling``), near one of the usual finite differences."""
    if all(close(x, y, tolerance.finite_difference) for x, y in zip(got, exact)):
        return True
    return case.telling and any(all(close(x, y, tolerance.finite_difference) for x, y in zip(got, estimate))
                                for estimate in estimates(formula, case.point))
