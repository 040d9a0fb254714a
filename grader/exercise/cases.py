"""The classic targets' checks and their hand-picked cases, and the training data every `train_step` case runs on.

The hand-picked cases are the classic ones a teacher would try first (``a + a``,
``a * a``, ``a ** 3`` at 2, a diamond, two graphs sharing a leaf), so the
classic bugs are always hit before Hypothesis searches further. Input values
are chosen so that no bug can hide behind a coincidence (no 0, no 1).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from functools import cached_property

from grader.exercise.expr import Expr, Sym, compile_sym, exponent, fmt_number, leaf, render
from grader.exercise.ops import OPS
from grader.exercise.space import CONSTANTS, EXPONENTS, INPUTS

_NUMBER = re.compile(r"-?\d+(\.\d+)?")


def simplicity(x: float, table: tuple = ()) -> tuple:
    """How easily a person works with a number: those of ``table`` (one of ``space``'s, simplest
    first) in its order, then whole ones, short, small and positive ones."""
    if x in table:
        return 0, table.index(x)
    return 1, not float(x).is_integer(), len(fmt_number(x)), abs(x), x < 0


@dataclass(frozen=True)
class Case:
    """Expressions to build (several share leaves by name) and the leaves' values."""

    exprs: tuple[Expr, ...]
    inputs: tuple[tuple[str, float], ...]

    @property
    def expr(self) -> Expr:
        return self.exprs[-1]

    @property
    def values(self) -> dict[str, float]:
        return dict(self.inputs)

    @property
    def size(self) -> int:
        return sum(len(e) for e in self.exprs)

    @property
    def label(self) -> str:
        """The expressions as a person writes them, in the order their backward() runs."""
        return " ; then ".join(render(e) for e in self.exprs)

    @cached_property
    def rank(self) -> tuple:
        """How small the case is for a person who checks it by hand: fewer nodes, then easier
        operations (``+`` before ``**`` before ``tanh``), the shape as written, simpler plain
        numbers and exponents, simpler leaf values. Reports show the failing case of lowest
        rank, and shrinking lowers it."""
        nodes = [node for expr in self.exprs for node in expr]
        effort = sum(OPS[node[0]].effort for node in nodes if node[0] in OPS)
        numbers = tuple(simplicity(node[1], CONSTANTS) if node[0] == "const" else simplicity(node[-1], EXPONENTS)
                        for node in nodes if node[0] == "const" or exponent(node) is not None)
        return (self.size, effort, _NUMBER.sub("#", self.label), numbers,
                tuple(simplicity(value, INPUTS) for _, value in self.inputs))


# The model and data every ``train_step`` case runs on: the child's training engine and the reference
# engine get the same MLP, the same starting weights and the same four examples.
MODEL_INPUTS, MODEL_LAYERS = 3, (4, 4, 1)
TRAIN_XS = [[2.0, 3.0, -1.0], [3.0, -1.0, 0.5], [0.5, 1.0, 1.0], [1.0, 1.0, -1.0]]
TRAIN_YS = [1.0, -1.0, -1.0, 1.0]
TRAIN_WEIGHTS = [round(w, 6) for w in (random.Random(2024 + i).uniform(-1, 1) for i in range(41))]


@dataclass(frozen=True)
class TrainCase:
    steps: int
    lr: float

    @property
    def size(self) -> int:
        return self.steps

    @property
    def label(self) -> str:
        return f"{self.steps} step{'s' if self.steps > 1 else ''} of train_step with lr = {self.lr:g}"

    @property
    def rank(self) -> tuple:
        return self.steps, self.label


@dataclass(frozen=True)
class Check:
    id: str
    title: str
    focus: str  # "data": forward values only; "grad": gradients only; "both"
    cases: tuple = ()
    generated: bool = False
    kink: bool = False  # cases sit where the op has no derivative: any one-sided value is right
    code: str | None = None  # the diagnosis a failure of this check alone points to

    @property
    def target(self) -> str:
        return self.id.split(".")[0]


def case(*roots: Sym, **inputs: float) -> Case:
    return Case(tuple(compile_sym(r) for r in roots), tuple(sorted(inputs.items())))


a, b, c = leaf("a"), leaf("b"), leaf("c")


def _doubled(t: Sym) -> Sym:
    """``t + t``: one node used as both operands."""
    return t + t


def _shared(op):
    """A node reached from the root by a short and a long path, in both operand orders."""
    t = op(a, b)
    return [case((t + c) * t, a=1.5, b=-2.0, c=0.5), case(t * (t + c), a=1.5, b=-2.0, c=0.5)]


def _two_users() -> Case:
    """A node used by two nodes, neither above the other: a depth-first pass that lists a node
    before its operands reaches it through one user before the other has run, whatever order
    it takes the operands in (a set, a list, a stack), so that mistake fails on every run."""
    t = a * b
    return case((t * c) + (t + c), a=1.5, b=-2.0, c=0.5)


CLASSIC_CHECKS: dict[str, list[Check]] = {
    "add": [
        Check("add.forward", "a + b computes the sum", "data",
              (case(a + b, a=2.0, b=-3.0), case((a + b) + c, a=0.5, b=0.25, c=-4.0))),
        Check("add.local-grad", "a + b passes its gradient to both operands", "grad",
              (case(a + b, a=2.0, b=-3.0), case((a + b) * c, a=2.0, b=-3.0, c=-2.0),
               case((a + b).tanh(), a=0.3, b=0.2), case(c + (a * b), a=2.0, b=-3.0, c=0.5))),
        Check("add.reused-node", "a node used twice gets both contributions", "grad",
              (case(a + a, a=2.0), case((a + b) + a, a=2.0, b=-3.0),
               case(_doubled(a * b), a=2.0, b=-3.0))),
        Check("add.constant-operand", "a plain number on either side of +", "both",
              (case(a + 2, a=1.5), case(2 + a, a=1.5), case((a + 2) * b, a=1.5, b=-2.0))),
        Check("add.generated", "generated expressions with +", "both", generated=True),
    ],
    "mul": [
        Check("mul.forward", "a * b computes the product", "data",
              (case(a * b, a=2.0, b=-3.0), case((a * b) * c, a=0.5, b=4.0, c=-1.5))),
        Check("mul.local-grad", "a * b gives each operand the other's value times out.grad", "grad",
              (case(a * b, a=2.0, b=-3.0), case((a * b) * c, a=2.0, b=-3.0, c=-2.0),
               case((a * b).tanh(), a=0.3, b=0.5), case(c * (a + b), a=2.0, b=-3.0, c=0.5))),
        Check("mul.reused-node", "a node used twice gets both contributions", "grad",
              (case(a * a, a=2.0), case((a * b) * a, a=2.0, b=-3.0),
               case((a * b) + (a * c), a=2.0, b=-3.0, c=0.5))),
        Check("mul.constant-operand", "a plain number on either side of *", "both",
              (case(a * 3, a=1.5), case(3 * a, a=1.5), case((a * 2) + b, a=1.5, b=-2.0))),
        Check("mul.generated", "generated expressions with *", "both", generated=True),
    ],
    "pow": [
        Check("pow.forward", "a ** n computes the power", "data",
              (case(a**2, a=3.0), case(a**3, a=-2.0), case(a**-1, a=4.0), case(a**0.5, a=2.25))),
        Check("pow.local-grad", "the power rule: n * x ** (n - 1) times out.grad", "grad",
              (case(a**3, a=2.0), case((a**2) * b, a=1.5, b=-2.0), case((a**-1).tanh(), a=2.0),
               case((a + b) ** 3, a=2.5, b=-0.5))),
        Check("pow.reused-node", "a node used twice gets both contributions", "grad",
              (case((a**2) + (a**3), a=1.5), case((a**2) * a, a=-2.0))),
        Check("pow.exponents", "zero, negative and fractional exponents", "both",
              (case(a**0, a=1.5), case(a**-2, a=0.5), case(a**1.5, a=2.0), case(a**-0.5, a=4.0))),
        Check("pow.generated", "generated expressions with **", "both", generated=True),
    ],
    "tanh": [
        Check("tanh.forward", "tanh computes the hyperbolic tangent", "data",
              (case(a.tanh(), a=1.0), case(a.tanh(), a=-2.5), case(a.tanh(), a=0.0))),
        Check("tanh.local-grad", "d tanh(x)/dx = 1 - tanh(x) ** 2, times out.grad", "grad",
              (case(a.tanh(), a=0.5), case(a.tanh() * b, a=0.5, b=-3.0), case(a.tanh().tanh(), a=0.8),
               case((a + b).tanh(), a=1.0, b=-0.5))),
        Check("tanh.reused-node", "a node used twice gets both contributions", "grad",
              (case(a.tanh() + a, a=0.5), case(a.tanh() * a.tanh(), a=-0.7))),
        Check("tanh.saturation", "large inputs, where tanh is flat", "both",
              (case(a.tanh(), a=5.0), case(a.tanh(), a=-8.0), case(a.tanh() * b, a=20.0, b=2.0))),
        Check("tanh.generated", "generated expressions with tanh", "both", generated=True),
    ],
}

GIVEN_CHECKS: dict[str, list[Check]] = {
    "backward": [
        Check("backward.seed", "the output's own gradient starts at 1", "grad",
              (case(a * b, a=2.0, b=-3.0), case(a, a=2.0))),
        Check("backward.chain", "gradients flow along every path, past nodes of equal value", "grad",
              (case((((a * b) + c).tanh()) * 2, a=0.5, b=-1.5, c=0.25),
               case((a + b) * c, a=2.0, b=-3.0, c=10.0),
               case((a * b) + (b * a), a=1.5, b=-2.0))),
        Check("backward.shared-node", "a node reached by paths of different lengths, or used by two nodes",
              "grad", (*_shared(lambda x, y: x * y), _two_users())),
        Check("backward.accumulates", "a second backward() adds to shared leaves", "grad",
              (case(a * b, a + c, a=2.0, b=-3.0, c=0.5), case(a * a, (a * b).tanh(), a=0.5, b=2.0))),
        Check("backward.generated", "generated expressions", "grad", generated=True),
    ],
    "train_step": [
        Check("train_step.single-step", "one step moves every parameter by -lr * grad", "both",
              (TrainCase(steps=1, lr=0.05),)),
        Check("train_step.repeated-steps", "gradients are reset between steps", "both",
              (TrainCase(steps=3, lr=0.05),)),
        Check("train_step.returns-loss", "returns the loss before the update", "both",
              (TrainCase(steps=2, lr=0.05),)),
        Check("train_step.learning-rate", "the step size follows lr", "both",
              (TrainCase(steps=1, lr=0.2),)),
    ],
}
