"""The checks of a gradient the learner derives by hand: a function of the course's inputs.

A course gives a function of a few numbers (``f(a, b, c)``, a ``Formula``) and asks
for its gradient as a function (``gradf(a, b, c)`` returns ``[df/da, df/db, df/dc]``).
The course's own notebook checks it at one point; a human grader also asks whether
the answer follows the function elsewhere. So it is checked at the course's points
and at other points of the function's domain, where a wrong term shows however the
numbers happened to fall, and numbers pasted from the expected output do not follow.

A derivation is exact: it agrees with the function's derivatives up to rounding, at any
point. A finite difference of the function only comes near them, nearer or farther as
its step and the point fall. So the answer is held to ``DERIVATION_TOLERANCE`` (far
below what any finite difference reaches, far above rounding), and the other points
include some of every scale where every usual finite difference of the function (one
side or both, steps from 1e-3 to 1e-9, absolute or scaled by the input) misses the
derivatives by more than that: a gradient computed by differences fails there, and is
named for what it is (``finite-difference``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

from grader.exercise.cases import Check
from grader.exercise.expr import fmt_number
from grader.exercise.formula import Formula, parse

# Where to look beside the course's points: each input moved by these amounts in turn, then all together,
# kept where the function and its gradient are defined, finite and of a size a person reads.
SHIFTS = (0.5, -0.5, 1.25, 2.0, -1.0)
OTHER_POINTS = 4
DERIVATION_TOLERANCE = 1e-10  # relative (absolute below 1): rounding is near 1e-15, a finite difference above
# Inputs of every scale for the points where finite differences show: large ones make the function's rounding
# large beside a step, small ones its curvature large beside it.
SCALES = (1234.5, -317.25, 0.0371, -0.00523, 48.125, 0.61, -2.875, 9.5)
DERIVATION_POINTS = 4
STEPS = (1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9)
LINE_STEP, LINE_POINTS = 0.0625, 48  # candidates along each input's line through the course's point
TRIED_POINTS = 12  # candidates tried for ``telling``, those where a partial derivative is smallest first


class AtPoint:
    """A case at one point of the course's inputs: ``inputs`` holds each one's name and value."""

    inputs: tuple[tuple[str, float], ...]

    @property
    def values(self) -> dict[str, float]:
        return dict(self.inputs)

    @property
    def point(self) -> tuple[float, ...]:
        return tuple(x for _, x in self.inputs)

    @property
    def size(self) -> int:
        return len(self.inputs)

    def simplicity(self) -> tuple:
        """Simpler points first: whole numbers, then small ones."""
        return tuple((not float(x).is_integer(), abs(x)) for x in self.point)


@dataclass(frozen=True)
class PointCase(AtPoint):
    """A call of the learner's function at one point."""

    function: str  # the learner's function's name, as the course names it
    inputs: tuple[tuple[str, float], ...]
    telling: bool = False  # a point where every usual finite difference of the function misses (``telling``)

    @property
    def label(self) -> str:
        """The call, with the inputs by name: their values go beside it (``gradf(a, b, c)`` with ``a = 2``...)."""
        return f"{self.function}({', '.join(name for name, _ in self.inputs)})"

    @cached_property
    def rank(self) -> tuple:
        return self.simplicity(), [fmt_number(x) for x in self.point]


def formula_of(options: dict) -> Formula:
    return parse(options["of"], tuple(options["inputs"]))


def usable(formula: Formula, point: tuple[float, ...]) -> bool:
    """Whether the function and its gradient are defined at ``point``, finite and not huge there."""
    try:
        found = (formula(*point), *formula.gradient(*point))
    except (ArithmeticError, ValueError):
        return False
    return all(math.isfinite(x) and abs(x) < 1e6 for x in found)


def other_points(formula: Formula, course: list[tuple[float, ...]]) -> list[tuple[float, ...]]:
    """Points of the function's domain beside the course's, a few, the same on every machine."""
    start = course[0] if course else tuple(1.5 + i for i in range(len(formula.inputs)))
    found: list[tuple[float, ...]] = []
    candidates = [tuple(x + shift * (i == j) for j, x in enumerate(start))
                  for shift in SHIFTS for i in range(len(start))]
    candidates += [tuple(x + shift for x in start) for shift in SHIFTS]
    for point in candidates:
        if point not in course and point not in found and usable(formula, point):
            found.append(point)
        if len(found) == OTHER_POINTS:
            break
    return found


def estimates(formula: Formula, point: tuple[float, ...]) -> list[tuple[float, ...]]:
    """The gradient at ``point`` as the usual finite differences of the function give it: forward, backward and
    central, each step of ``STEPS`` taken as it is and scaled by the input, those that can be taken."""
    found = []
    for step in STEPS:
        for scaled in (False, True):
            for kind in ("forward", "backward", "central"):
                partials = []
                for i, x in enumerate(point):
                    h = step * max(1.0, abs(x)) if scaled else step
                    up = tuple(y + h * (i == j and kind != "backward") for j, y in enumerate(point))
                    down = tuple(y - h * (i == j and kind != "forward") for j, y in enumerate(point))
                    try:
                        partials.append((formula(*up) - formula(*down)) / (x + h * (kind != "backward")
                                                                          - (x - h * (kind != "forward"))))
                    except (ArithmeticError, ValueError):
                        break
                if len(partials) == len(point):
                    found.append(tuple(partials))
    return found


def derivation_tolerated(got: float, want: float) -> bool:
    """Whether ``got`` is ``want`` up to rounding, as a derivation gives it (``DERIVATION_TOLERANCE``)."""
    return abs(got - want) <= DERIVATION_TOLERANCE * max(1.0, abs(got), abs(want))


def telling(formula: Formula, point: tuple[float, ...]) -> bool:
    """Whether every usual finite difference of the function misses its gradient at ``point`` (``estimates``)."""
    exact = formula.gradient(*point)
    return all(not all(map(derivation_tolerated, estimate, exact)) for estimate in estimates(formula, point))


def derivation_points(formula: Formula, course: list[tuple[float, ...]]) -> list[tuple[float, ...]]:
    """Points of every scale where finite differences of the function show (``telling``), a few, the same on every
    machine. Where they show is where the function is large beside one of its partial derivatives: its rounding,
    divided by a step, then outweighs that derivative. So the candidates are each input set to each of
    ``SCALES`` in turn, then all at once, rotated, and each input moved along a line through the course's point;
    those where a partial derivative is smallest beside the function are tried first."""
    start = course[0] if course else tuple(1.5 + i for i in range(len(formula.inputs)))
    n = len(start)
    candidates = [tuple(scale if i == j else x for j, x in enumerate(start)) for scale in SCALES for i in range(n)]
    candidates += [tuple(SCALES[(k + j) % len(SCALES)] for j in range(n)) for k in range(len(SCALES))]
    candidates += [tuple(x + LINE_STEP * k if i == j else x for j, x in enumerate(start))
                   for i in range(n) for k in range(-LINE_POINTS, LINE_POINTS + 1) if k]
    weighed = []
    for point in dict.fromkeys(candidates):
        if point in course or not wide(formula, point):
            continue
        value, gradient = formula(*point), formula.gradient(*point)
        weighed.append((min(abs(d) for d in gradient) / max(abs(value), 1e-300), point))
    found: list[tuple[float, ...]] = []
    for _, point in sorted(weighed)[:TRIED_POINTS]:
        if telling(formula, point):
            found.append(point)
        if len(found) == DERIVATION_POINTS:
            break
    return found


def wide(formula: Formula, point: tuple[float, ...]) -> bool:
    """Whether the function and its gradient are defined and finite at ``point``, however large."""
    try:
        found = (formula(*point), *formula.gradient(*point))
    except (ArithmeticError, ValueError):
        return False
    return all(math.isfinite(x) and abs(x) < 1e12 for x in found)


def checks(name: str, options: dict) -> list[Check]:
    """The checks of the gradient target ``name``: at the course's points (where it gives some), elsewhere."""
    formula = formula_of(options)
    inputs = tuple(options["inputs"])
    course = [tuple(float(x) for x in p) for p in options.get("at", ())]

    def cases(points: list[tuple[float, ...]], tells: bool = False) -> tuple[PointCase, ...]:
        return tuple(PointCase(options["function"], tuple(zip(inputs, point)), tells) for point in points)

    found = []
    if course:
        found.append(Check(f"{name}.course-point", "the gradient where the course's notebook checks it", "grad",
                           cases(course)))
    found.append(Check(f"{name}.other-points", "the gradient at other points: it follows the function exactly, as a "
                       "derivation does", "grad", cases(other_points(formula, course))
                       + cases(derivation_points(formula, course), True)))
    return found
