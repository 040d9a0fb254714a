"""The checks of a training function with the course's own signature: a step, an epoch or a short loop.

The course writes the call its notebook makes (``train_one_epoch(model,
criterion, optimizer, xs, ys, batch_size=2)``, ``train(model, xs, ys, epochs,
lr)``) and names the loss. The function is training code, so it runs on the
grader's model (the reference MLP on the training engine, called on one example
or a batch), criterion and optimizer; the grader watches every ``backward()``
it runs, so each step is checked against the reference's, not only the end.
What the grader passes for each name of the call:

- ``model``: the MLP; ``criterion``: the course's loss as an object
  (``criterion(outputs, targets)``); ``optimizer``: plain SGD over the model's
  parameters at the case's ``lr``; ``params``: the model's parameters;
- ``xs``, ``ys``: the examples and their targets (numpy arrays where the
  submission uses numpy); ``lr``: the case's learning rate;
- ``epochs``: 2, ``batch_size``: 2, where the call names them (a number written
  in the call is passed as written, and counts the same).
"""

from __future__ import annotations

import functools
import random
from dataclasses import dataclass
from functools import cached_property

from grader.exercise.calls import Call, parse
from grader.exercise.cases import TRAIN_XS, TRAIN_YS, Check
from grader.exercise.expr import fmt_number

NAMES = ("model", "criterion", "optimizer", "params", "xs", "ys", "lr", "epochs", "batch_size")
LOSSES = ("sum-of-squares", "mse", "hinge", "cross-entropy")
RETURNS = ("loss", "mean", "last", "losses", "nothing")
DEFAULT_EPOCHS, DEFAULT_BATCH = 2, 2
CLASSES = 3  # cross-entropy's model has this many outputs, one per class
EXAMPLES = 6  # cross-entropy's examples (a regression's are the classic exercise's four)


@dataclass(frozen=True)
class LoopCase:
    """Calls of the learner's training function, one after another, from the same start."""

    call: str  # as the course writes it
    calls: int
    lr: float
    loss: str
    returns: str
    sizes: tuple[int, ...]  # the model's: inputs, then each layer's neurons
    activation: str

    @property
    def parsed(self) -> Call:
        return parse(self.call, NAMES)

    @property
    def label(self) -> str:
        return (f"{self.calls} call{'s' if self.calls > 1 else ''} of {self.parsed.text} with lr = "
                f"{fmt_number(self.lr)}, on the grader's MLP{list(self.sizes)} and {len(data(self)[0])} examples")

    @property
    def values(self) -> dict[str, float]:
        return {}

    @property
    def size(self) -> int:
        return self.calls

    @property
    def steps(self) -> int:
        return self.calls

    @cached_property
    def rank(self) -> tuple:
        return self.calls, self.label

    def setting(self, name: str, default: int) -> int:
        """What the call gives for ``epochs`` or ``batch_size``: a number it writes, the grader's, or none (1
        epoch; every example in one batch)."""
        given = self.parsed.given(name)
        if given is None:
            return default if name == "epochs" else len(data(self)[0])
        return int(given) if not isinstance(given, str) else (DEFAULT_EPOCHS if name == "epochs" else DEFAULT_BATCH)

    def schedule(self) -> list[list[int]]:
        """The examples of every step of one call, in order: each epoch's batches."""
        count = len(data(self)[0])
        size = max(1, self.setting("batch_size", 0))
        batches = [list(range(start, min(start + size, count))) for start in range(0, count, size)]
        return [batch for _ in range(max(1, self.setting("epochs", 1))) for batch in batches]


def classifies(loss: str) -> bool:
    return loss == "cross-entropy"


def default_sizes(loss: str) -> tuple[int, ...]:
    return (2, 4, CLASSES) if classifies(loss) else (3, 4, 4, 1)


def data(case: LoopCase) -> tuple[tuple[tuple[float, ...], ...], tuple[float, ...]]:
    """The examples and targets: the classic exercise's four for a regression on three inputs, else numbers
    the same on every machine (a class per example for cross-entropy, in turn)."""
    return examples(case.sizes[0], case.sizes[-1], classifies(case.loss))


@functools.cache
def examples(nin: int, nout: int, classes: bool) -> tuple[tuple[tuple[float, ...], ...], tuple[float, ...]]:
    if not classes and nin == 3 and nout == 1:
        return tuple(map(tuple, TRAIN_XS)), tuple(TRAIN_YS)
    rng = random.Random(f"examples:{nin}:{nout}")
    xs = tuple(tuple(round(rng.uniform(-2, 2), 2) for _ in range(nin)) for _ in range(EXAMPLES))
    ys = tuple(float(k % nout) for k in range(EXAMPLES)) if classes else \
        tuple(rng.choice((1.0, -1.0)) for _ in range(EXAMPLES))
    return xs, ys


def initial_weights(sizes: tuple[int, ...]) -> list[float]:
    """The model's starting parameters, in its order (for the classic MLP, the classic exercise's)."""
    count = sum((a + 1) * b for a, b in zip(sizes, sizes[1:]))
    return [round(random.Random(2024 + i).uniform(-1, 1), 6) for i in range(count)]


def checks(name: str, options: dict) -> list[Check]:
    """The checks of the training target ``name``: one call, calls in a row, what it returns, the rate."""
    if not {"lr", "optimizer"} & parse(options["call"], NAMES).names():
        raise ValueError("call: pass lr, or an optimizer, to the function: the grader must know its learning rate")
    loss = options["loss"]
    returns = options.get("returns", "loss")
    sizes = tuple(options.get("sizes", default_sizes(loss)))
    activation = options.get("activation", "tanh")

    def case(calls: int, lr: float) -> tuple[LoopCase]:
        return (LoopCase(options["call"], calls, lr, loss, returns, sizes, activation),)

    found = [Check(f"{name}.single-call", "each step moves every parameter by -lr * grad", "both", case(1, 0.05)),
             Check(f"{name}.repeated-calls", "gradients are reset between steps and calls", "both", case(3, 0.05))]
    if returns != "nothing":
        found.append(Check(f"{name}.returns", f"returns {RETURNED[returns]}", "both", case(2, 0.05)))
    found.append(Check(f"{name}.learning-rate", "the step size follows lr", "both", case(1, 0.2)))
    return found


# What a training function should return, as its check and a wrong-loss diagnosis say it.
RETURNED = {"loss": "the loss before the update, as a number", "mean": "the mean of its steps' losses, as a number",
            "last": "the last step's loss, as a number", "losses": "every step's loss, in order, as numbers",
            "nothing": "the course's loss of the model's outputs"}
