"""The checks of a gradient the learner derives by hand: a function of the course's inputs.

A course gives a function of a few numbers (``f(a, b, c)``, a ``Formula``) and asks
for its gradient as a function (``gradf(a, b, c)`` returns ``[df/da, df/db, df/dc]``).
The course's own notebook checks it at one point; a human grader also asks whether
the answer follows the function elsewhere. So it is checked at the course's points
and at other points of the function's domain, where a wrong term shows however the
numbers happened to fall, and numbers pasted from the expected output do not follow.
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


def checks(name: str, options: dict) -> list[Check]:
    """The checks of the gradient target ``name``: at the course's points (where it gives some), elsewhere."""
    formula = formula_of(options)
    inputs = tuple(options["inputs"])
    course = [tuple(float(x) for x in p) for p in options.get("at", ())]

    def cases(points: list[tuple[float, ...]]) -> tuple[PointCase, ...]:
        return tuple(PointCase(options["function"], tuple(zip(inputs, point))) for point in points)

    found = []
    if course:
        found.append(Check(f"{name}.course-point", "the gradient where the course's notebook checks it", "grad",
                           cases(course)))
    found.append(Check(f"{name}.other-points", "the gradient at other points: it follows the function", "grad",
                       cases(other_points(formula, course))))
    return found
