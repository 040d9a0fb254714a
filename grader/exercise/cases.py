"""The checks of every target and their hand-picked cases.

The hand-picked cases are the classic ones a teacher would try first (``a + a``,
``a * a``, ``a ** 3`` at 2, a diamond, two graphs sharing a leaf), so the
classic bugs are always hit before Hypothesis searches further. Input values
are chosen so that no bug can hide behind a coincidence (no 0, no 1).
"""

from __future__ import annotations

import functools
import random
import re
from dataclasses import dataclass, replace
from functools import cached_property

from grader.exercise.expr import Expr, Sym, compile_sym, exponent, fmt_number, leaf, render, safe_domain
from grader.exercise.ops import OPS, Edge, Op
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


def _unary_checks(name: str, symbol: str, at: tuple[float, ...], special: list[Check]) -> list[Check]:
    """The checks of a one-operand op, at three inputs ``at`` where it is smooth and not trivial (the first
    two on either side of a kink, where it has one). Its operand is a leaf, the op's own result, and a node
    of another op (whose own ``_backward`` must still run) in the regions of both ``x`` and ``y``."""
    x, y, z = at

    def u(s: Sym) -> Sym:
        return s.apply(name) if name != "neg" else -s

    checks = [
        Check(f"{name}.forward", f"{symbol} computes its value", "data",
              (case(u(a), a=x), case(u(a), a=y), case(u(a) * b, a=z, b=1.5))),
        Check(f"{name}.local-grad", f"the local derivative of {symbol}, times out.grad", "grad",
              (case(u(a), a=x), case(u(a) * b, a=y, b=-3.0), case(u(u(a)), a=z),
               case(u(a + b), a=x + 0.5, b=-0.5), case(u(a + b), a=y + 0.5, b=-0.5))),
        Check(f"{name}.reused-node", "a node used twice gets both contributions", "grad",
              (case(u(a) + a, a=x), case(u(a) * u(a), a=y))),
    ]
    return [*checks, *special,
            Check(f"{name}.generated", f"generated expressions with {symbol}", "both", generated=True)]


def _binary_checks(name: str, symbol: str) -> list[Check]:
    """The checks of a two-operand op (``-``, ``/``), with inputs away from its singularities; each operand
    is a leaf, and a node of another op (whose own ``_backward`` must still run), in one case each."""

    def f(x: object, y: object) -> Sym:
        return x.apply(name, y) if isinstance(x, Sym) else Sym(name, (Sym("const", (float(x),)), y))

    return [
        Check(f"{name}.forward", f"a {symbol} b computes its value", "data",
              (case(f(a, b), a=2.0, b=-3.0), case(f(f(a, b), c), a=0.5, b=4.0, c=-1.5))),
        Check(f"{name}.local-grad", f"the local derivatives of a {symbol} b, times out.grad", "grad",
              (case(f(a, b), a=2.0, b=-3.0), case(f(a, b) * c, a=2.0, b=-3.0, c=-2.0),
               case(f(a, b).tanh(), a=0.3, b=0.5), case(f(a + b, c), a=2.5, b=-0.5, c=-1.5),
               case(f(c, a + b), a=2.5, b=-0.5, c=-1.5))),
        Check(f"{name}.reused-node", "a node used twice gets both contributions", "grad",
              (case(f(a, a), a=2.0), case(f(a * b, a), a=2.0, b=-3.0), case(f(a, b) + a, a=1.5, b=-2.0))),
        Check(f"{name}.constant-operand", f"a plain number on the right of {symbol}", "both",
              (case(f(a, 2.0), a=1.5), case(f(a, 2.0) * b, a=1.5, b=-2.0))),
        Check(f"{name}.generated", f"generated expressions with {symbol}", "both", generated=True),
    ]


def _number_first_checks(name: str, symbol: str) -> list[Check]:
    """The checks of a reflected op (``2 + a`` through ``__radd__``); its Value is a leaf, and a node of
    another op (whose own ``_backward`` must still run)."""

    def f(s: Sym, n: float = 2.0) -> Sym:
        return s.apply(name, n)

    return [
        Check(f"{name}.forward", f"n {symbol} a computes its value", "data",
              (case(f(a), a=1.5), case(f(a, -3.0), a=0.5))),
        Check(f"{name}.local-grad", f"the local derivative of n {symbol} a, times out.grad", "grad",
              (case(f(a), a=1.5), case(f(a) * b, a=1.5, b=-2.0), case(f(a, 0.5).tanh(), a=0.3),
               case(f(a + b), a=2.5, b=-0.5))),
        Check(f"{name}.reused-node", "a node used twice gets both contributions", "grad",
              (case(f(a) + a, a=2.0), case(f(a * b) * a, a=2.0, b=-3.0))),
        Check(f"{name}.generated", f"generated expressions with {symbol}", "both", generated=True),
    ]


def reaches_reflection(case: Case, target: str) -> bool:
    """Whether ``case`` applies ``target`` with a plain number first (``2 + a``), which Python sends to the
    reflected method (``__radd__``), not to the target's own."""
    if target not in OPS or OPS[target].number_first:
        return False
    return any(node[0] == target and expr[node[1]][0] == "const" for expr in case.exprs for node in expr)


# What stands in for an op a course's value class lacks, in a hand-picked case: an op of the same arity, the
# smooth ones first (relu passes nothing back below 0).
SUBSTITUTES = {1: ("tanh", "sigmoid", "exp", "neg", "log", "relu"), 2: ("mul", "add", "sub", "truediv")}


def in_course(case: Case | TrainCase, target: str, have: frozenset[str]) -> Case | TrainCase | None:
    """``case`` written with the ops the course's value class has (``have``), so that the student can run
    every counterexample they are shown: each other op replaced by the first of ``SUBSTITUTES`` of its
    arity that the class has and that keeps the case well defined; ``None`` where none does. (A training
    case runs on the grader's own engine: it stays as it is.)"""
    if isinstance(case, TrainCase):
        return case
    exprs = []
    for expr in case.exprs:
        nodes = list(expr)
        for i, node in enumerate(nodes):
            kind = node[0]
            if kind in ("leaf", "const", target) or kind in have:
                continue
            spec = OPS[kind]
            if spec.exponent or spec.number_first:
                return None
            for other in SUBSTITUTES[spec.arity]:
                trial = (other, *node[1:])
                # Safe with what uses it too: a log of the substitute's value must still be defined.
                if other in have and other != target and safe_domain(tuple(nodes[:i] + [trial] + nodes[i + 1:]),
                                                                     case.values):
                    nodes[i] = trial
                    break
            else:
                return None
        exprs.append(tuple(nodes))
    return replace(case, exprs=tuple(exprs))


def course_checks(target: str, apart: bool, have: frozenset[str] | None = None) -> list[Check]:
    """Every check of ``target`` as a course grades it: with ``apart`` (the course grades its reflected op as
    a target of its own), without the cases that reach the reflected method, so that a bug there costs the
    reflected op alone; and every hand-picked case written with the ops the course's value class has
    (``have``; see ``in_course``), a case no op of it can stand in for left out, unless that would leave the
    check without a case."""
    checks = []
    for check in checks_for(target):
        cases = [c for c in check.cases if not (apart and reaches_reflection(c, target))]
        if have is not None:
            written = [c for c in (in_course(c, target, have) for c in cases) if c is not None]
            cases = list(dict.fromkeys(written)) or cases
        checks.append(replace(check, cases=tuple(cases)) if tuple(cases) != check.cases else check)
    return checks


def _comparison_checks(name: str, symbol: str) -> list[Check]:
    """The checks of a comparison (``a < b``): 1 where it holds and 0 where not, with a plain number on its right,
    and no gradient through it (whether it gives a node, a truth value or a number)."""
    def f(x: Sym, y: object) -> Sym:
        return x.apply(name, y)

    return [
        Check(f"{name}.forward", f"a {symbol} b gives 1 where it holds, else 0", "data",
              (case(f(a, b), a=2.0, b=-3.0), case(f(a, b), a=-1.5, b=2.0), case(f(a + b, c), a=0.5, b=0.25, c=-4.0))),
        Check(f"{name}.constant-operand", f"a plain number on the right of {symbol}", "data",
              (case(f(a, 2.0), a=1.5), case(f(a, 2.0), a=3.5))),
        Check(f"{name}.no-gradient", "a comparison passes no gradient back to its operands", "grad",
              (case(f(a, b), a=2.0, b=-3.0), case(f(a * b, c), a=1.5, b=2.0, c=0.5))),
    ]


# Inputs a course's own unary op is checked at (three of them, as ``_unary_checks`` takes), where its row gives none:
# the first of these triples where the op is well defined.
UNARY_INPUTS = ((1.5, -2.0, 0.7), (2.5, 0.5, 4.0), (0.5, 0.25, 0.8))


def symbol(spec: Op) -> str:
    """How a check's title writes the op: ``-`` for a negation, a method's name (``relu``), an operator's label."""
    if spec.arity == 1 and spec.call.startswith("operator."):
        return spec.template.replace("{0}", "").strip("()")
    return spec.method if spec.arity == 1 else spec.label


def edge_check(name: str, edge: Edge) -> Check:
    """An op's own edge (its row's ``edges``) as a check of its cases."""
    def u(s: Sym) -> Sym:
        return s.apply(name)

    cases = (*(case(u(a), a=x) for x in edge.values), *(case(u(a) + a, a=x) for x in edge.reused),
             *(case(u(a) * b, a=x, b=y) for x, y in edge.scaled))
    return Check(f"{name}.{edge.name}", edge.title, "both", cases, kink=edge.kink, code=edge.code)


@functools.cache
def row_checks(name: str) -> list[Check]:
    """The checks of an op that is not the classic exercise's, made from its row of the op table: a comparison's, a
    reflected op's, a one-operand op's at its hand-picked inputs with its own edges, a two-operand op's; an op a
    course names with its formula, every case where it is well defined."""
    spec = OPS[name]
    if spec.comparison:
        return _comparison_checks(name, spec.label)
    if spec.number_first:
        return _number_first_checks(name, spec.label)
    if spec.arity == 2:
        checks = _binary_checks(name, symbol(spec))
    else:
        at = spec.inputs or next((t for t in UNARY_INPUTS if all(spec.safe(x) and spec.safe(x + 0.5) for x in t)),
                                 UNARY_INPUTS[0])
        checks = _unary_checks(name, symbol(spec), at, [edge_check(name, edge) for edge in spec.edges])
    if not spec.formula:
        return checks
    kept = []
    for check in checks:
        cases = tuple(c for c in check.cases if all(safe_domain(e, c.values) for e in c.exprs))
        if cases or check.generated:
            kept.append(replace(check, cases=cases))
    return kept


def checks_for(target: str) -> list[Check]:
    """Every check of ``target``, in the order they run."""
    for table in (CLASSIC_CHECKS, GIVEN_CHECKS):
        if target in table:
            return table[target]
    if target in OPS:
        return row_checks(target)
    raise KeyError(target)
