"""The checks of a numerical estimate of the course's function's derivatives.

Two kinds of target ask for one: a value the learner's code computes (Karpathy's
``numerical_grad = [...]``, the course's ``f(a, b, c)`` nudged one input at a time)
and a function that estimates a derivative (``numerical_derivative(f, x, h)``). In
both, the function the learner's code evaluates is the grader's own, built in the
child from the course's formula (``of``): it records every point it is evaluated at,
so the step ``h`` the estimate used, and the difference it took, are known, and with
them the error that difference must have (a forward difference's ``h/2 f''``, a
symmetric one's ``h**2/6 f'''``). Knowing what a gradient is means more than matching
numbers once: the same code is run again with the course's function replaced by
another of the same inputs (a ``variant``: the course's own, or one micrograde derives),
and its answer must follow. Numbers pasted from the expected output, or worked out for
another function, do not.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from grader.errors import ConfigError
from grader.exercise.cases import Check
from grader.exercise.expr import fmt_number
from grader.exercise.formula import Formula, FormulaError, parse
from grader.exercise.gradients import AtPoint, usable

METHODS = ("forward", "symmetric")  # what a course asks for; a symmetric difference is accepted for a forward one
TOLERANCE = 1e-5  # how close a numerical gradient must come to the exact one (absolute, as a notebook checks it)
STEP = 1e-4  # the h a numerical derivative function is given when the course names none
ARGUMENTS = ("f", "x", "h")  # what a numerical derivative function is called with, in its order by default
# What the course's call of a numerical derivative of a function of several inputs may pass: the function, the point
# (one argument each, ``*vals``, or the moved input's value, ``x``), which input it is moved along, and the step.
CALL_NAMES = ("f", "*vals", "vals", "x", "i", "h")
EXTRA = "sin({x}) + exp({x} / 4)"  # a second function of one input besides the derived one, for a derivative
SHIFTS = (0.5, -0.75, 1.25)  # where a derivative is also estimated: the course's point moved by these
OWN_SHIFT = 0.375  # where, besides the course's point, the learner's own function is compared with the course's


@dataclass(frozen=True)
class EstimateCase(AtPoint):
    """The learner's code run with the grader's function in place of the course's, at one point.

    For a value (``arguments`` empty) the code is the submission's, run again; for a function, one call of it
    with ``f``, ``x`` and ``h`` in the order ``arguments`` gives."""

    part: str  # the learner's name for what is graded: numerical_grad, numerical_derivative
    calls: str  # the name the course's function has in the learner's code (a value's), or "f" (a function's)
    formula: str  # the function the child builds and gives the learner's code
    inputs: tuple[tuple[str, float], ...]  # the point, by the course's names for the inputs
    step: float | None = None  # the h a numerical derivative function is given
    arguments: tuple[str, ...] = ()  # a function's arguments, in order
    variant: bool = False  # another function than the course's own
    argument: int | None = None  # a function of several inputs: which input the derivative is along
    call: str = ""  # then the course's call, as it writes it

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.inputs)

    @property
    def values(self) -> dict[str, float]:
        return {}  # the point is in the label, written the way the learner's code is called or run

    @property
    def label(self) -> str:
        """How the learner reruns it: the call itself, or the value with the function it was computed for."""
        signature = f"{self.calls}({', '.join(self.names)})"
        if self.argument is not None:
            at = ", ".join(f"{name} = {fmt_number(x)}" for name, x in self.inputs)
            return (f"{self.call} with i = {self.argument} ({self.names[self.argument]}), h = {fmt_number(self.step)}"
                    f" at {at}, and {signature} = {self.formula}")
        if self.arguments:
            given = {"f": self.calls, "x": fmt_number(self.point[0]), "h": fmt_number(self.step or STEP)}
            return f"{self.part}({', '.join(given[a] for a in self.arguments)}) with {signature} = {self.formula}"
        at = ", ".join(f"{name} = {fmt_number(x)}" for name, x in self.inputs)
        function = f"{signature} = {self.formula}" if self.variant else f"{signature} as the course gives it"
        return f"{self.part} at {at}, with {function}"

    @cached_property
    def rank(self) -> tuple:
        """The course's own function first, then simpler points, then larger steps (easier to check by hand)."""
        return self.variant, len(self.formula), self.simplicity(), -(self.step or 0.0), self.label

    def partials(self) -> list[str]:
        """How a report names each derivative: ``df/da``."""
        return [f"d{self.calls}/d{self.names[i]}" for i in self.axes()]

    def axes(self) -> list[int]:
        """The inputs the estimate is of, by position: every input, or the one a call moves."""
        return list(range(len(self.names))) if self.argument is None else [self.argument]


def derived(of: str, inputs: tuple[str, ...]) -> str:
    """A function of the same inputs as ``of`` that the course did not show: it plus the products of neighbouring
    inputs (plus its input, for one), so that every partial derivative changes while its curvature along each
    input, and so the error a difference quotient has there, stays the course's function's."""
    if len(inputs) == 1:
        return f"({of}) + {inputs[0]}"
    pairs = [(inputs[i], inputs[(i + 1) % len(inputs)]) for i in range(len(inputs) if len(inputs) > 2 else 1)]
    return f"({of}) + " + " + ".join(f"{x}*{y}" for x, y in pairs)


def variants(options: dict) -> tuple[str, ...]:
    """The other functions a target's code must follow: the course's ``variants``, else micrograde's own."""
    inputs = tuple(options["inputs"])
    if "variants" in options:
        return tuple(options["variants"])
    found = (derived(options["of"], inputs),)
    if "value" not in options:  # a derivative function is given a transcendental one too
        found += (EXTRA.format(x=inputs[0]),)
    return found


def course_point(options: dict) -> tuple[float, ...]:
    """Where the course's own check evaluates an estimate: its point (a value's, or a function's first)."""
    if "at" in options:
        at = options["at"]
        return tuple(float(x) for x in at) if len(options["inputs"]) > 1 or "value" in options else (float(at[0]),)
    return (1.5,) * len(options["inputs"])


def own_points(point: tuple[float, ...]) -> tuple[tuple[float, ...], ...]:
    """Where the learner's own function of the course's name is compared with the course's: the course's point
    and one beside it (a function changed by a term that vanishes at the point still differs there)."""
    return point, tuple(x + OWN_SHIFT for x in point)


def formula(text: str, inputs: tuple[str, ...], key: str) -> Formula:
    try:
        return parse(text, inputs)
    except FormulaError as exc:
        raise ConfigError(f"{key}: {exc}") from None


def method(options: dict) -> str:
    return options.get("method", METHODS[0])


def tolerance(options: dict) -> float:
    return float(options.get("tolerance", TOLERANCE))


def usable_at(options: dict, point: tuple[float, ...], key: str) -> None:
    """``ConfigError`` unless the course's function and every variant are defined, with their gradients, at
    ``point``."""
    inputs = tuple(options["inputs"])
    for text in (options["of"], *variants(options)):
        if not usable(formula(text, inputs, "variants"), point):
            what = "of" if text == options["of"] else "variants"
            raise ConfigError(f"{key}: {what} {text!r} has no finite gradient at "
                              f"({', '.join(fmt_number(x) for x in point)})")


def value_checks(name: str, options: dict) -> list[Check]:
    """The checks of a numerical gradient a notebook cell (or a module's top level) computes: with the course's
    function, then with each variant in its place."""
    inputs = tuple(options["inputs"])
    point = tuple(float(x) for x in options["at"])
    if len(point) != len(inputs):
        raise ConfigError(f"at: one number for each of inputs ({', '.join(inputs)}), got {len(point)}")
    usable_at(options, point, "at")

    def case(text: str, variant: bool) -> EstimateCase:
        return EstimateCase(options["value"], options["calls"], text, tuple(zip(inputs, point)), variant=variant)

    return [Check(f"{name}.course-function", "the estimate of the course's function's gradient", "grad",
                  (case(options["of"], False),)),
            Check(f"{name}.other-function", "the same code for another function: the estimate follows it", "grad",
                  tuple(case(text, True) for text in variants(options)))]


def several_checks(name: str, options: dict) -> list[Check]:
    """The checks of a numerical derivative of a function of several inputs, called as the course calls it
    (``central_difference(f, *vals, arg=i, epsilon=h)``): along each input at the course's point, with its step and
    a tenth of it; other functions at other points."""
    from grader.exercise.calls import parse as parse_call

    inputs = tuple(options["inputs"])
    call = parse_call(options["call"], CALL_NAMES)
    if not {"f"} <= call.names() or not call.names() & {"*vals", "vals", "x"}:
        raise ConfigError("call: the course's call passes f and the point (*vals, vals or x)")
    point = tuple(float(x) for x in options.get("at", (1.5,) * len(inputs)))
    if len(point) != len(inputs):
        raise ConfigError(f"at: one number for each of inputs ({', '.join(inputs)}), got {len(point)}")
    usable_at(options, point, "at")
    step = float(options.get("step", STEP))
    steps = (step, step / 10) if "h" in call.names() else (None,)

    def cases(text: str, at: tuple[float, ...], variant: bool) -> tuple[EstimateCase, ...]:
        if not usable(formula(text, inputs, "variants"), at):
            return ()
        return tuple(EstimateCase(options["function"], "f", text, tuple(zip(inputs, at)), h, (), variant, i,
                                  options["call"]) for i in range(len(inputs)) for h in steps)

    others = [tuple(x + shift for x in point) for shift in SHIFTS[:2]]
    return [Check(f"{name}.course-function", "the course's function, along each input, where its notebook calls it",
                  "grad", cases(options["of"], point, False)),
            Check(f"{name}.other-functions", "other functions at other points: it follows the function it is "
                  "given", "grad", tuple(c for text in variants(options) for at in others
                                         for c in cases(text, at, True)))]


def derivative_checks(name: str, options: dict) -> list[Check]:
    """The checks of a numerical derivative function: the course's function where the course calls it, with its
    step and a tenth of it; other functions at other points."""
    if "call" in options:
        return several_checks(name, options)
    inputs = tuple(options["inputs"])
    if len(inputs) != 1:
        raise ConfigError(f"inputs: a numerical derivative is of a function of one input, got {len(inputs)}")
    arguments = tuple(options.get("arguments", ARGUMENTS))
    if not set(arguments) <= set(ARGUMENTS) or not {"f", "x"} <= set(arguments):
        raise ConfigError(f"arguments: the call's arguments are f, x and (if the function takes it) h, in the "
                          f"function's order; got {', '.join(arguments)}")
    step = float(options.get("step", STEP))
    steps = (step, step / 10) if "h" in arguments else (None,)
    course = [float(x) for x in options.get("at", (1.5,))]
    for x in course:
        usable_at(options, (x,), "at")
    others = [x + shift for shift in SHIFTS for x in course[:1]]

    def cases(text: str, points: list[float], variant: bool) -> tuple[EstimateCase, ...]:
        function = formula(text, inputs, "variants")
        return tuple(EstimateCase(options["function"], "f", text, ((inputs[0], x),), h, arguments, variant)
                     for x in points if usable(function, (x,)) for h in steps)

    return [Check(f"{name}.course-function", "the course's function, where its notebook calls it", "grad",
                  cases(options["of"], course, False)),
            Check(f"{name}.other-functions", "other functions at other points: it follows the function it is "
                  "given", "grad", tuple(c for text in variants(options) for c in cases(text, others, True)))]
