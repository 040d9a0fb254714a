"""The checks of a module the learner writes on their own ``Value``: a neuron, a layer, an MLP, a linear layer,
an activation or a loss, as the course names and builds it.

A module is checked as a course's notebook uses it: built with the course's
constructor (``Neuron(3)``, ``Linear(3, 2)``), its ``parameters()`` read, its
parameters' data set to numbers the grader chose, called on inputs, and
differentiated by the learner's own ``backward()``. Any consistent order of
``parameters()`` is right: which parameter is which is found from how each is
used (``grader.judging.modules``), then the outputs and gradients are compared
with the reference engine's for the same weights. Cases are small and
hand-picked first (every shape the course's notebook uses, a negative input
where an activation has a kink), then generated ones of other sizes.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import cached_property

from grader.exercise.cases import Check
from grader.exercise.expr import fmt_number


@dataclass(frozen=True)
class Structure:
    """What a kind of module computes, as the grader builds its reference."""

    name: str
    layered: bool  # weights and biases in layers of neurons (it has parameters)
    batch: bool = False  # called on a batch of rows, one output row per input row
    values_in: bool = False  # called on Values (an activation, a loss), not on plain numbers
    summary: str = ""


STRUCTURES: dict[str, Structure] = {s.name: s for s in (
    Structure("neuron", True, summary="Neuron(nin): activation(w . x + b), or w . x + b when its nonlinearity is off"),
    Structure("layer", True, summary="Layer(nin, nout): nout neurons side by side, each given the same input"),
    Structure("mlp", True, summary="MLP(nin, nouts): layers chained, every one but the last nonlinear"),
    Structure("linear", True, batch=True, summary="Linear(nin, nout): Y = X W + b on a batch X of rows"),
    Structure("relu", False, batch=True, values_in=True, summary="ReLU(): relu of every Value of an array"),
    Structure("cross-entropy", False, batch=True, values_in=True,
              summary="CrossEntropyLoss()(logits, targets): the mean over the rows of -log softmax(row)[target]"),
    Structure("base", False, summary="Module(): no parameters (parameters() is empty); zero_grad() runs"),
)}

# The numbers a person can check by hand that cases use, weights first: no 0 and no 1, so that no bug hides
# behind a coincidence; the inputs give relu units on both sides of the kink.
WEIGHTS = (0.5, -1.5, 2.0, -0.5, 1.5, -2.0, 0.25, -0.75, 3.0, -1.0, 0.75, -0.25)
INPUTS = (2.0, -1.0, 0.5, 3.0, -2.0, 1.5, -0.5, 2.5)
LOGITS = (1.0, -2.0, 0.5, 3.0, -1.0, 2.0, -0.5, 1.5)
# The loss a gradient check backpropagates from: each output times one of these, summed. None is 1, so that an
# op passing its local derivative on without out.grad shows; they differ, so that outputs taken for one
# another show.
COEFFICIENTS = (1.5, -2.0, 0.5, 3.0, -0.75, 2.5, -1.25, 0.25)
GENERATED = 4  # generated cases of each module target


@dataclass(frozen=True)
class ModuleCase:
    """One module built, its parameters set, and run on a few inputs (as one request to the child)."""

    part: str  # the learner's class, as the course names it
    structure: str
    args: tuple  # what its constructor is given
    sizes: tuple[int, ...]  # layered: [nin, n1, ...]; an activation or a loss: (rows, columns) of its input
    activations: tuple[str, ...] = ()  # layered: each layer's ("none" for a linear one)
    points: tuple[tuple, ...] = ()  # the inputs it is called on: a row, or a batch of rows
    targets: tuple[tuple[int, ...], ...] = ()  # a loss: the target class of every row, per point
    weights: tuple[float, ...] = ()  # the parameters' data, in the order its parameters() gives them
    observe: str = "forward"  # "parameters", "forward", "gradients" or "zero-grad"

    @property
    def expected_parameters(self) -> int:
        return sum((n_in + 1) * n_out for n_in, n_out in zip(self.sizes, self.sizes[1:])) if self.layered else 0

    @property
    def layered(self) -> bool:
        return STRUCTURES[self.structure].layered

    @property
    def call(self) -> str:
        """How the course's notebook builds it: ``Neuron(3, False)``."""
        return f"{self.part}({', '.join(shown(a) for a in self.args)})"

    @property
    def label(self) -> str:
        """The case as the learner reruns it: the module, its parameters' data and the input."""
        parts = [self.call]
        if self.observe == "zero-grad":
            count = self.expected_parameters
            return f"{self.call} with its parameters' gradients set to {shown(list(self.weights[:count]))}, then " \
                   "zero_grad()"
        if self.layered and self.observe != "parameters":
            parts.append(f"with its parameters() set to {shown(list(self.weights[:self.expected_parameters]))}")
        if self.points and self.observe != "parameters":
            given = shown(list(self.points[0]))
            if self.targets:
                given += f" and targets {shown(list(self.targets[0]))}"
            parts.append(f"called on {given}")
        return " ".join(parts)

    @property
    def values(self) -> dict[str, float]:
        return {}

    @property
    def size(self) -> int:
        return self.expected_parameters + sum(len(flat(p)) for p in self.points)

    @cached_property
    def rank(self) -> tuple:
        return self.size, self.label

    @property
    def steps(self) -> int:
        return 1


def flat(x: object) -> list:
    return [v for item in x for v in flat(item)] if isinstance(x, (list, tuple)) else [x]


def shown(x: object) -> str:
    """A constructor argument or an input as Python writes it, numbers short (``[2, -1, 0.5]``)."""
    if isinstance(x, bool):
        return str(x)
    if isinstance(x, (int, float)):
        return fmt_number(float(x))
    if isinstance(x, (list, tuple)):
        return "[" + ", ".join(shown(v) for v in x) + "]"
    return repr(x)


def cycled(pool: tuple[float, ...], count: int, start: int = 0) -> tuple[float, ...]:
    return tuple(pool[(start + i) % len(pool)] for i in range(count))


@dataclass(frozen=True)
class Shape:
    """One way of building a module of a structure: its constructor's arguments and what it then computes."""

    args: tuple
    sizes: tuple[int, ...]
    activations: tuple[str, ...] = ()


def shapes(structure: str, activation: str, flag: bool) -> list[Shape]:
    """The hand-picked shapes of a structure, smallest first: those its course's notebook uses among them."""
    if structure == "neuron":
        found = [Shape((2,), (2, 1), (activation,)), Shape((3,), (3, 1), (activation,))]
        if flag:
            found.insert(1, Shape((2, False), (2, 1), ("none",)))
        return found
    if structure == "layer":
        return [Shape((2, 1), (2, 1), (activation,)), Shape((3, 2), (3, 2), (activation,))]
    if structure == "mlp":
        return [Shape((2, (2, 1)), (2, 2, 1), (activation, "none")),
                Shape((3, (4, 4, 1)), (3, 4, 4, 1), (activation, activation, "none"))]
    if structure == "linear":
        return [Shape((2, 1), (2, 1), ("none",)), Shape((3, 2), (3, 2), ("none",))]
    if structure in ("relu", "cross-entropy"):
        return [Shape((), (1, 3)), Shape((), (2, 3))]
    return [Shape((), ())]


def case_for(part: str, structure: str, shape: Shape, observe: str, offset: int = 0,
             pool: tuple[float, ...] = WEIGHTS) -> ModuleCase:
    """A case of ``shape``: its weights and inputs taken from the pools from ``offset`` on."""
    spec = STRUCTURES[structure]
    count = sum((a + 1) * b for a, b in zip(shape.sizes, shape.sizes[1:])) if spec.layered else 0
    weights = cycled(pool, count, offset)
    if structure == "base":
        points: tuple = ()
    elif spec.values_in:
        rows, columns = shape.sizes
        numbers = LOGITS if structure == "cross-entropy" else INPUTS
        points = (tuple(cycled(numbers, columns, offset + columns * r) for r in range(rows)),)
    elif spec.batch:
        points = (tuple(cycled(INPUTS, shape.sizes[0], offset + r) for r in range(2)),)
    else:  # an input and its opposite: each first-layer neuron's w . x is positive at one of them
        x = cycled(INPUTS, shape.sizes[0], offset)
        points = (x, tuple(-v for v in x))
    targets = (tuple((offset + r) % shape.sizes[1] for r in range(shape.sizes[0])),) \
        if structure == "cross-entropy" else ()
    return ModuleCase(part, structure, shape.args, shape.sizes, shape.activations, points, targets, weights, observe)


def generated(part: str, structure: str, activation: str, seed: str) -> tuple[ModuleCase, ...]:
    """Cases of other sizes, weights and inputs, the same on every machine."""
    rng = random.Random(f"{seed}:{structure}")
    found = []
    for _ in range(GENERATED):
        nin, nout = rng.randint(1, 4), rng.randint(1, 3)
        if structure == "neuron":
            shape = Shape((nin,), (nin, 1), (activation,))
        elif structure == "layer":
            shape = Shape((nin, nout), (nin, nout), (activation,))
        elif structure == "mlp":
            hidden = [rng.randint(2, 3) for _ in range(rng.randint(1, 2))]  # a layer of one gives a Value, not a row
            shape = Shape((nin, (*hidden, nout)), (nin, *hidden, nout), (*(activation for _ in hidden), "none"))
        elif structure == "linear":
            shape = Shape((nin, nout), (nin, nout), ("none",))
        else:
            shape = Shape((), (rng.randint(1, 3), rng.randint(2, 4)))
        pool = tuple(round(rng.uniform(-2, 2), 2) or 0.5 for _ in range(16))
        found.append(case_for(part, structure, shape, "gradients", offset=rng.randint(0, 7), pool=pool))
    return tuple(found)


def checks(name: str, options: dict) -> list[Check]:
    """The checks of the module target ``name``: its parameters, its outputs, its gradients, ``zero_grad``."""
    part, structure = options["class"], options["module"]
    activation = options.get("activation", "relu")
    spec = STRUCTURES[structure]
    picked = shapes(structure, activation, options.get("nonlin", True))

    def cases(observe: str) -> tuple[ModuleCase, ...]:
        return tuple(case_for(part, structure, shape, observe, offset=k) for k, shape in enumerate(picked))

    if structure == "base":
        return [Check(f"{name}.parameters", "parameters() of a module without parameters is empty", "both",
                      cases("parameters")),
                Check(f"{name}.zero-grad", "zero_grad() runs on a module without parameters", "both",
                      cases("zero-grad"))]
    found = []
    if spec.layered:
        found.append(Check(f"{name}.parameters", "parameters() is one flat list of every weight and bias, once each",
                           "both", cases("parameters")))
    found.append(Check(f"{name}.forward", "the outputs, with the grader's numbers in its parameters", "data",
                       cases("forward")))
    found.append(Check(f"{name}.gradients", "the gradients after backward() from each output", "both",
                       cases("gradients")))
    if spec.layered:
        found.append(Check(f"{name}.zero-grad", "zero_grad() resets every parameter's gradient", "both",
                           cases("zero-grad")[-1:]))
    found.append(Check(f"{name}.generated", "generated sizes, weights and inputs", "both",
                       generated(part, structure, activation, name)))
    return found


# How the grader finds which of the learner's parameters is which: every parameter set to a distinct small
# positive number, the module called on a few inputs of distinct positive numbers (so that every relu unit is
# on, no tanh saturates, and no input is 1, a bias's own factor), the gradient of each output taken.
PROBES = 2


def base_values(count: int) -> tuple[float, ...]:
    """The parameters' numbers while the grader finds which is which: distinct, in 0.05..0.35."""
    return tuple(round(0.05 + 0.3 * ((k * 0.6180339887498949) % 1.0), 9) for k in range(count))


def base_pool(case: ModuleCase) -> tuple[float, ...]:
    """The numbers the child gives the learner's parameters while the grader finds which is which, in their
    order (repeated from the start past the end: a module with more parameters than it should have)."""
    return base_values(case.expected_parameters + 8)


def probe_inputs(case: ModuleCase) -> tuple[tuple[float, ...], ...]:
    """The inputs the grader calls the module on while it finds which parameter is which."""
    nin = case.sizes[0] if case.sizes else 0
    return tuple(tuple(round(1.25 + 0.5 * i + 0.3 * m * (i + 1), 9) for i in range(nin)) for m in range(PROBES))
