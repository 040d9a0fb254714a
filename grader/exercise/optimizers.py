"""The checks of an optimizer the learner writes: its ``step`` and its ``zero_grad``, as the course names them.

An optimizer is training code, so it is graded on the grader's own parameters
(the training engine's Values, with the data and gradients each case gives):
built with the course's constructor (``SGD(params, lr=lr)``), its method called
one or more times, the parameters read after each call. Plain gradient descent
is the reference: ``step`` moves every ``p.data`` by ``-lr * p.grad``, the gradient
as it is at that step, and leaves gradients alone; ``zero_grad`` sets every
gradient to 0 and leaves the data alone.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property

from grader.exercise.calls import Call, parse
from grader.exercise.cases import Check
from grader.exercise.expr import fmt_number

# What the course's constructor may be given: the parameters, and the learning rate.
NAMES = ("params", "lr")


@dataclass(frozen=True)
class StepCase:
    """An optimizer built on a few parameters, and its method called once per entry of ``grads``."""

    init: str  # the constructor's call, as the course writes it
    method: str  # "step" or "zero_grad"
    data: tuple[float, ...]
    grads: tuple[tuple[float, ...], ...]  # every parameter's gradient before each call
    lr: float

    @property
    def call(self) -> Call:
        return parse(self.init, NAMES)

    @property
    def calls(self) -> int:
        return len(self.grads)

    @property
    def label(self) -> str:
        grads = ", then ".join(map(numbers, self.grads))
        times = "" if self.calls == 1 else f", {self.calls} times (gradients {grads})"
        first = f" and gradients {numbers(self.grads[0])}" if self.calls == 1 else ""
        return (f"opt = {self.call.text} on parameters with data {numbers(self.data)}{first}, lr = "
                f"{fmt_number(self.lr)}; opt.{self.method}(){times}")

    @property
    def values(self) -> dict[str, float]:
        return {}

    @property
    def size(self) -> int:
        return len(self.data) * self.calls

    @property
    def steps(self) -> int:
        return self.calls

    @cached_property
    def rank(self) -> tuple:
        return self.size, self.label


def numbers(xs: tuple[float, ...]) -> str:
    return "[" + ", ".join(fmt_number(x) for x in xs) + "]"


def expected(case: StepCase) -> list[tuple[list[float], list[float]]]:
    """Every parameter's data and gradient after each call, by plain gradient descent."""
    data, found = list(case.data), []
    for grads in case.grads:
        if case.method == "step":
            data = [d - case.lr * g for d, g in zip(data, grads)]
            found.append((list(data), list(grads)))
        else:
            found.append((list(data), [0.0] * len(data)))
    return found


def checks(name: str, options: dict) -> list[Check]:
    """The checks of the optimizer target ``name``: its ``step`` or its ``zero_grad``."""
    init = options["init"]
    method = options["method"]

    def case(data: tuple, grads: tuple, lr: float = 0.1) -> StepCase:
        return StepCase(init, method, data, grads, lr)

    if method == "zero_grad":
        return [
            Check(f"{name}.resets", "every gradient is 0 afterwards, the data as it was", "both",
                  (case((0.5, -1.5), ((2.0, -0.5),)), case((1.0, 2.0, -3.0), ((0.25, -4.0, 1.5),)))),
            Check(f"{name}.again", "called again after new gradients, it resets them again", "both",
                  (case((0.5, -1.5), ((2.0, -0.5), (-1.0, 3.0))),)),
        ]
    return [
        Check(f"{name}.one-step", "each parameter's data moves by -lr times its gradient", "both",
              (case((0.5, -1.5), ((2.0, -0.5),)), case((1.0, 2.0, -3.0), ((0.25, -4.0, 1.5),)))),
        Check(f"{name}.each-step", "every step uses the gradients as they are then", "both",
              (case((0.5, -1.5), ((2.0, -0.5), (-1.0, 3.0))), case((1.0,), ((2.0,), (2.0,), (-6.0,))))),
        Check(f"{name}.learning-rate", "the step size follows lr", "both",
              (case((0.5, -1.5), ((2.0, -0.5),), lr=0.5), case((2.0,), ((-3.0,),), lr=0.02))),
        Check(f"{name}.zero-gradient", "a parameter whose gradient is 0 stays where it is", "both",
              (case((0.5, -1.5, 3.0), ((0.0, 2.0, 0.0),)),)),
    ]


@dataclass(frozen=True)
class GraphCase(StepCase):
    """A method of a graph's output that reaches its whole graph (``out.zero_grad()``, ``out.step(lr)``): the output
    a sum of the parameters, each a leaf of the learner's class, the method called as the course calls it
    (``init`` is that call)."""

    @property
    def label(self) -> str:
        grads = ", then ".join(map(numbers, self.grads))
        times = "" if self.calls == 1 else f", {self.calls} times (gradients {grads})"
        first = f" and gradients {numbers(self.grads[0])}" if self.calls == 1 else ""
        return (f"out = the sum of leaves with data {numbers(self.data)}{first}, lr = {fmt_number(self.lr)}; "
                f"{self.init}{times}")


GRAPH_CALLS = {"zero_grad": "out.zero_grad()", "step": "out.step(lr)"}


def graph_checks(name: str, options: dict) -> list[Check]:
    """The checks of a graph method target: as an optimizer's, on leaves of the learner's class, the method called
    as the course calls it (``call``; by default ``out.zero_grad()``, ``out.step(lr)``)."""
    call = options.get("call", GRAPH_CALLS[options["method"]])
    return [replace(check, cases=tuple(GraphCase(call, c.method, c.data, c.grads, c.lr) for c in check.cases))
            for check in checks(name, {"init": "SGD(params, lr=lr)", "method": options["method"]})]
