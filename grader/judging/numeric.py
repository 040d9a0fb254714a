"""Judging a numerical estimate of a derivative: the number the learner's code gave, and where it evaluated f.

The child ran the learner's code with the grader's function in place of the course's
and sent back what it computed and every point it evaluated the function at. From
those points the grading process reads, for each input, which difference the code
could have taken (the points that differ from the course's point along that input
only) and recomputes every such difference quotient from the course's formula: so it
knows the step ``h`` and which difference the estimate is (forward, symmetric, or
one divided by the wrong length), and the error that difference must have with that
``h``. An estimate is right when it is at least as good as the difference asked for
with its step (to rounding) and, for a value, within the course's tolerance of the
exact derivative. Both oracles of a gradient judge it: the formula's exact
derivatives and a central difference of it.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass

from grader.exercise.formula import Formula
from grader.exercise.numeric import EstimateCase, own_points
from grader.judging.judge import Tolerance, Verdict, received_error, shown

EPS = sys.float_info.epsilon
ROUNDING = 8  # rounding errors of f's values a difference quotient may carry (each divided by its span)
ACCEPTED = {"forward": {"forward", "backward", "symmetric", "other"}, "symmetric": {"symmetric"}}


@dataclass(frozen=True)
class Reading:
    """What one estimated derivative is: ``code`` None when right, else the misconception it shows; the step
    and difference it was found to take."""

    code: str | None
    step: float | None = None
    difference: str | None = None  # forward, backward, symmetric or other
    error: float | None = None  # how far it is from the exact derivative
    length: float | None = None  # what the difference of f was divided by, where that is the wrong length


def axis_points(calls: list, point: tuple[float, ...], i: int) -> tuple[list[float], bool]:
    """The offsets along input ``i`` of the points evaluated that differ from ``point`` only there, and whether
    ``point`` itself was evaluated."""
    offsets, centre = set(), False
    for call in calls:
        if not (isinstance(call, list) and len(call) == len(point) and all(isinstance(x, float) for x in call)):
            continue
        if any(x != y for j, (x, y) in enumerate(zip(call, point)) if j != i):
            continue
        if call[i] == point[i]:
            centre = True
        elif math.isfinite(call[i]):
            offsets.add(call[i] - point[i])
    return sorted(offsets), centre


def kind_of(d1: float, d2: float, x: float) -> str:
    """The difference between the points ``x + d1`` and ``x + d2`` (``d1 > d2``) takes (``x + h - x`` is ``h`` only
    to within rounding of ``x``)."""
    if d2 == 0.0:
        return "forward"
    if d1 == 0.0:
        return "backward"
    if abs(d1 + d2) <= 4 * math.ulp(x) + 1e-9 * d1:
        return "symmetric"
    return "other"


class Axis:
    """The course's function along one input, at the course's point: its values where the learner's code
    evaluated it, and the difference quotients they make."""

    def __init__(self, formula: Formula, point: tuple[float, ...], i: int, offsets: list[float]):
        self.formula, self.point, self.i = formula, point, i
        self.values = {d: f for d in offsets if (f := self.at(d)) is not None}
        self.offsets = sorted(self.values)
        self.scale = max([abs(f) for f in self.values.values()] + [1.0])

    def at(self, d: float) -> float | None:
        moved = list(self.point)
        moved[self.i] += d
        try:
            value = self.formula(*moved)
        except (ArithmeticError, ValueError):
            return None
        return value if math.isfinite(value) else None

    def noise(self, length: float, size: float) -> float:
        """How far rounding can take a quotient of span ``length`` and size ``size`` (f's values, and a step that
        is ``x + h - x`` rather than ``h``)."""
        return (ROUNDING * EPS * self.scale + 4 * math.ulp(self.point[self.i]) * abs(size)) / abs(length) \
            + 1e-12 * max(1.0, abs(size))

    def pairs(self) -> list[tuple[float, float]]:
        return [(d1, d2) for k, d1 in enumerate(self.offsets) for d2 in self.offsets[:k]][::-1]

    def quotient(self, d1: float, d2: float, length: float) -> float:
        return (self.values[d1] - self.values[d2]) / length

    def asked(self, method: str, h: float) -> float | None:
        """The largest error the asked difference has with step ``h`` here (forward: any of forward, backward and
        symmetric), to rounding; ``None`` where f is not defined a step away."""
        up, down, centre = self.at(h), self.at(-h), self.at(0.0)
        if up is None or down is None or centre is None:
            return None
        exact = self.formula.gradient(*self.point)[self.i]
        quotients = [(up - down) / (2 * h)] + ([(up - centre) / h, (centre - down) / h] if method == "forward" else [])
        return max(abs(q - exact) for q in quotients) + self.noise(h, exact)

    def accepts(self, d1: float, d2: float, tolerance: float) -> bool:
        """Whether the course's own check accepts the difference over ``x + d1`` and ``x + d2`` here: within its
        tolerance of the exact derivative, as the course's notebook checks it (on the very numbers it computes, so
        with no allowance for rounding: a step whose rounding misses the tolerance there fails the check)."""
        if d1 not in self.values or d2 not in self.values:
            return False
        exact = self.formula.gradient(*self.point)[self.i]
        return abs(self.quotient(d1, d2, d1 - d2) - exact) <= tolerance


def read(axis: Axis, got: object, exact: float, method: str, tolerance: float | None, given: float | None,
         course: Axis | None = None) -> Reading:
    """What one estimated derivative ``got`` is, against the ``exact`` one (see the module's docstring).

    ``course`` is the course's own function along the same input at the course's point, where ``axis`` is another
    function's: the course's tolerance is the course's check's, on its function, so a step that check accepts there
    is right here too, though rounding grows with this function's size (a forward difference with a tiny step)."""
    if not isinstance(got, float):
        return Reading("wrong-derivative")
    if not any(d != 0.0 for d in axis.offsets):
        return Reading("pasted-constants", error=abs(got - exact))
    error = abs(got - exact)
    step = given or min(abs(d) for d in axis.offsets if d != 0.0)
    bound = axis.asked(method, step)
    matched = [(kind_of(d1, d2, axis.point[axis.i]), d1, d2) for d1, d2 in axis.pairs()
               if abs(got - axis.quotient(d1, d2, d1 - d2)) <= axis.noise(d1 - d2, got)]
    accepted = [(kind, d1, d2) for kind, d1, d2 in matched if kind in ACCEPTED[method]]
    accurate = tolerance is None or error <= tolerance
    good = bound is not None and error <= bound  # at least as good as the difference asked for, with this step
    if accepted:  # the difference asked for: right if its step makes it close enough (a value's is its own)
        kind, d1, d2 = accepted[0]
        h = abs(d1 - d2) / (2 if kind == "symmetric" else 1)
        accurate = accurate or (course is not None and tolerance is not None and course.accepts(d1, d2, tolerance))
        return Reading(None if accurate and (given is None or good) else "wrong-step", h, kind, error)
    if matched:  # a difference of the learner's points, but not the one asked for
        kind, d1, d2 = matched[0]
        return Reading("one-sided-difference", abs(d1 - d2), kind, error)
    if accurate and good:  # another estimate, at least as good as the one asked for with this step
        return Reading(None, step, None, error)
    for d1, d2 in axis.pairs():
        span = d1 - d2
        for length in wrong_lengths(span):
            if abs(got - axis.quotient(d1, d2, length)) <= axis.noise(length, got):
                kind = kind_of(d1, d2, axis.point[axis.i])
                return Reading("wrong-difference-quotient", abs(span), kind, error, length)
    return Reading("wrong-derivative", step, None, error)


def wrong_lengths(span: float) -> list[float]:
    """What a difference of f over ``span`` is divided by when it is divided by the wrong length: twice or half
    it or its half (``h`` for a symmetric difference, ``2h`` for a forward one), its negative, nothing, or, by a
    slip of precedence (``/ 2*h``), the inverse of one of them."""
    bases = (span, span / 2)
    found = [k * b for b in bases for k in (2.0, 0.5, -1.0, -2.0)] + [k / b for b in bases for k in (1.0, 2.0)]
    return [length for length in dict.fromkeys([*found, 1.0]) if length != span]


def judge_estimate(case: EstimateCase, reply: dict, formula: Formula, method: str, accuracy: float | None,
                   tolerance: Tolerance, course: tuple[Formula, tuple[float, ...]] | None = None) -> Verdict:
    """The verdict on what the learner's code computed at ``case``: every derivative, in the order of the inputs,
    read against the exact derivatives and against a central difference of the formula (``course``, the course's
    function and point, where the case's function is another: see ``read``)."""
    if "error" in reply:
        return Verdict(case, error=received_error(reply["error"]))
    result, calls = reply["result"], reply["calls"]
    if not isinstance(result, list) or not isinstance(calls, list):
        raise ValueError("no result")
    names = case.partials()
    point = case.point
    exact = formula.gradient(*point)
    second = formula.central_difference(*point)
    got = [result[i] if i < len(result) else None for i in range(len(names))]
    verdict = Verdict(case, expected={n: exact[i] for n, i in zip(names, case.axes())},
                      actual={n: shown(x) for n, x in zip(names, got)},
                      reference="the exact derivatives")
    readings, seconds = {}, {}
    for k, (i, name) in enumerate(zip(case.axes(), names)):
        offsets, centre = axis_points(calls, point, i)
        moved = [0.0, *offsets] if centre else offsets
        axis = Axis(formula, point, i, moved)
        own = Axis(course[0], course[1], i, moved) if course is not None else None
        readings[name] = read(axis, got[k], exact[i], method, accuracy, case.step, own)
        seconds[name] = read(axis, got[k], second[i], method, accuracy, case.step, own)
    verdict.grads_ok = len(result) == len(names) and all(r.code is None for r in readings.values())
    verdict.fd_ok = len(result) == len(names) and all(r.code is None for r in seconds.values())
    if len(result) != len(names):
        verdict.faults.add("length")  # not one number per input
    verdict.details = {"readings": readings, "evaluated": isinstance(reply.get("count"), int) and reply["count"] > 0}
    if (changed := edited(reply.get("own"), formula, own_points(point))) is not None:
        verdict.details["edited"] = changed
    return verdict


def edited(own: object, formula: Formula, points: tuple[tuple[float, ...], ...]
           ) -> tuple[tuple[float, ...], float | None, float] | None:
    """Where the learner's own function of the course's name (its values ``own`` at ``points``, as the child
    read them) is not the course's: the first such point, its value there and the course's; ``None`` where it is
    the course's, to rounding, or the code binds none."""
    if not isinstance(own, list):
        return None
    for at, mine in zip(points, own):
        try:
            want = formula(*at)
        except (ArithmeticError, ValueError):
            continue
        if not math.isfinite(want):
            continue
        if not isinstance(mine, float) or abs(mine - want) > 1e-9 * max(1.0, abs(want)):
            return at, mine if isinstance(mine, float) else None, want
    return None
