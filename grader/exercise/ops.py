"""Every operation a course can ask students to write, described once.

An ``Op`` says what the student writes (the method), how the child applies it
(a Python operator, so reflected methods are reached the way Python reaches
them, or a method call), its forward rule and local derivatives (from which the
grader computes the nodes the student did not write), how a person writes it,
and where its inputs are numerically safe. Everything op-specific in the
grader (cases, strategies, the child's requests, judging, the report and the
scaffold) is derived from this table: adding an op is one entry here, its rule
in the reference engine, and its tests.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Edge:
    """A check of an op's own edge: the op at each of ``values``, the op beside its operand (``reused``: ``f(a) +
    a``) and times another leaf (``scaled``: ``f(a) * b`` at ``(a, b)``); at a kink any one-sided gradient is right,
    and a failure there alone is ``code``."""

    name: str
    title: str
    values: tuple[float, ...] = ()
    reused: tuple[float, ...] = ()
    scaled: tuple[tuple[float, float], ...] = ()
    kink: bool = False
    code: str | None = None


@dataclass(frozen=True)
class Op:
    name: str
    method: str  # what the student writes: "__add__", "tanh"
    call: str  # how the child applies it: "operator.add" or "method.tanh"
    arity: int  # operands (Values or plain numbers)
    forward: Callable[..., float]  # operand values (and the exponent of pow) -> output
    local: Callable[..., tuple[float, ...]]  # operand values, exponent, output -> d output / d operand
    template: str  # how a person writes it: "({0} + {1})", "{0}.tanh()", "({0} ** {k})"
    label: str  # the ``_op`` label a node of this op carries
    safe: Callable[..., bool] = lambda *values: True  # inputs where floating point is well behaved
    exponent: bool = False  # takes a plain-number parameter (pow's exponent)
    number_first: bool = False  # the first operand is always a plain number (radd, rmul)
    summary: str = ""  # one line for the scaffold's docstring: what the method returns
    rule: str = ""  # the local derivative, as the scaffold's docstring states it
    uses: tuple[str, ...] = ()  # ops the scaffold's given code for this method calls
    effort: int = 3  # how hard a person finds it to work out by hand: 1 (+, *) to 3 (tanh); ranks cases
    formula: str = ""  # an op a course names with its formula of a (and b): that formula (``[ops.NAME]``)
    comparison: bool = False  # gives 1 or 0 (as a node, a truth value or a number), never a gradient
    spellings: tuple[str, ...] = ()  # labels learners give its nodes beside its own and its name ("div" for /)
    inputs: tuple[float, ...] = ()  # a one-operand op's hand-picked inputs: either side of a kink, then a third
    edges: tuple[Edge, ...] = ()  # its own edge cases, each a check of its own
    uses_math: bool = False  # the scaffold's code for it needs ``import math``

    def render(self, operands: list[str], exponent: float | None = None) -> str:
        return self.template.format(*operands, k=exponent)


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def _power_safe(x: float, k: float) -> bool:
    return abs(x) >= 0.2 and (x > 0 or float(k).is_integer())


OPS: dict[str, Op] = {op.name: op for op in (
    Op("add", "__add__", "operator.add", 2, lambda x, y: x + y, lambda x, y, out: (1.0, 1.0),
       "({0} + {1})", "+", summary="self + other",
       rule="d(a + b)/da = 1 and d(a + b)/db = 1", effort=1),
    Op("mul", "__mul__", "operator.mul", 2, lambda x, y: x * y, lambda x, y, out: (y, x),
       "({0} * {1})", "*", summary="self * other",
       rule="d(a * b)/da = b and d(a * b)/db = a", effort=1),
    Op("pow", "__pow__", "operator.pow", 1, lambda x, k: x**k, lambda x, k, out: (k * x ** (k - 1),),
       "({0} ** {k})", "**", safe=_power_safe, exponent=True,
       summary="self ** other, where other is a plain int or float",
       rule="(power rule) d(x ** n)/dx = n * x ** (n - 1)", effort=2),
    Op("tanh", "tanh", "method.tanh", 1, math.tanh, lambda x, out: (1.0 - out * out,),
       "{0}.tanh()", "tanh", summary="the hyperbolic tangent of self",
       rule="if t = tanh(x), then dt/dx = 1 - t ** 2", uses_math=True),
    Op("relu", "relu", "method.relu", 1, lambda x: x if x > 0 else 0.0, lambda x, out: (1.0 if x > 0 else 0.0,),
       "{0}.relu()", "ReLU", safe=lambda x: abs(x) >= 0.05, summary="max(0, self)",
       rule="d relu(x)/dx = 1 where x > 0 and 0 where x < 0", effort=1, inputs=(1.5, -2.0, 0.7),
       edges=(Edge("at-zero", "relu at exactly 0, where any gradient between 0 and 1 is right", (0.0,), (0.0,),
                   kink=True, code="relu-at-zero"),)),
    Op("exp", "exp", "method.exp", 1, math.exp, lambda x, out: (out,),
       "{0}.exp()", "exp", safe=lambda x: abs(x) <= 3.0, summary="e ** self",
       rule="if e = exp(x), then de/dx = e", inputs=(1.5, -2.0, 0.3), uses_math=True),
    Op("log", "log", "method.log", 1, math.log, lambda x, out: (1.0 / x,),
       "{0}.log()", "log", safe=lambda x: x >= 0.2, summary="the natural logarithm of self (self > 0)",
       rule="d log(x)/dx = 1 / x", inputs=(2.5, 0.5, 4.0), uses_math=True,
       edges=(Edge("domain", "small and large positive inputs", (0.05, 40.0), scaled=((0.1, 2.0),)),)),
    Op("sigmoid", "sigmoid", "method.sigmoid", 1, _sigmoid, lambda x, out: (out * (1.0 - out),),
       "{0}.sigmoid()", "sigmoid", safe=lambda x: abs(x) <= 10.0, summary="1 / (1 + e ** -self)",
       rule="if s = sigmoid(x), then ds/dx = s * (1 - s)", inputs=(1.5, -2.0, 0.7), uses_math=True,
       edges=(Edge("saturation", "large inputs, where sigmoid is flat", (8.0, -9.0)),)),
    Op("neg", "__neg__", "operator.neg", 1, lambda x: -x, lambda x, out: (-1.0,),
       "(-{0})", "neg", summary="-self", rule="d(-a)/da = -1", uses=("mul",), effort=1, inputs=(1.5, -2.0, 0.7)),
    Op("sub", "__sub__", "operator.sub", 2, lambda x, y: x - y, lambda x, y, out: (1.0, -1.0),
       "({0} - {1})", "-", summary="self - other",
       rule="d(a - b)/da = 1 and d(a - b)/db = -1", uses=("add", "neg"), effort=1),
    Op("truediv", "__truediv__", "operator.truediv", 2, lambda x, y: x / y,
       lambda x, y, out: (1.0 / y, -x / (y * y)), "({0} / {1})", "/", spellings=("div",),
       safe=lambda x, y: abs(y) >= 0.2, summary="self / other",
       rule="d(a / b)/da = 1 / b and d(a / b)/db = -a / b ** 2", uses=("mul", "pow"), effort=2),
    Op("radd", "__radd__", "operator.add", 2, lambda x, y: x + y, lambda x, y, out: (1.0, 1.0),
       "({0} + {1})", "+", number_first=True, summary="other + self, for a plain number other",
       rule="d(n + a)/da = 1", uses=("add",), effort=1),
    Op("rmul", "__rmul__", "operator.mul", 2, lambda x, y: x * y, lambda x, y, out: (y, x),
       "({0} * {1})", "*", number_first=True, summary="other * self, for a plain number other",
       rule="d(n * a)/da = n", uses=("mul",), effort=1),
)}

def _comparison(name: str, method: str, symbol: str, test: Callable[[float, float], bool]) -> Op:
    return Op(name, method, f"operator.{name}", 2, lambda x, y: 1.0 if test(x, y) else 0.0,
              lambda x, y, out: (0.0, 0.0), f"({{0}} {symbol} {{1}})", symbol, safe=lambda x, y: abs(x - y) >= 0.05,
              summary=f"1 where self {symbol} other, else 0 (a node, a truth value or a number)",
              rule="a comparison passes no gradient back: its local derivatives are 0", effort=1, comparison=True)


BUILT_IN = tuple(OPS)  # micrograde's own ops; a course may add others to the table (``register``)
# Ops a course adds by naming them (a target, or ``[ops.NAME]``): comparisons, which pass no gradient.
ON_REQUEST: dict[str, Op] = {c.name: c for c in (
    _comparison("lt", "__lt__", "<", lambda x, y: x < y), _comparison("gt", "__gt__", ">", lambda x, y: x > y),
    _comparison("le", "__le__", "<=", lambda x, y: x <= y), _comparison("ge", "__ge__", ">=", lambda x, y: x >= y),
    _comparison("eq", "__eq__", "==", lambda x, y: x == y))}


def register(new: Op) -> None:
    """Add an op a course names with its formula (``grader.exercise.engine``): from then on it is an op like the
    others, for every grade of the process."""
    OPS.setdefault(new.name, new)


def formula_op(name: str, method: str, arity: int, formula: Callable, text: str) -> Op:
    """The op of a course's ``formula`` (``grader.exercise.formula``, of ``a`` and ``b``): its value and exact
    local derivatives from the formula itself; safe where the formula and its derivatives are finite a little
    way either side."""
    def forward(*args: float) -> float:
        return formula(*args, *(0.0,) * (2 - len(args)))

    def local(*args: float) -> tuple[float, ...]:
        return formula.gradient(*args[:arity], *(0.0,) * (2 - arity))[:arity]

    def safe(*args: float) -> bool:
        try:
            return all(math.isfinite(forward(*shifted)) and all(math.isfinite(d) for d in local(*shifted, 0.0))
                       for shifted in (args, [x + 0.05 for x in args], [x - 0.05 for x in args]))
        except (ArithmeticError, ValueError):
            return False

    template = f"{{0}}.{method}()" if arity == 1 else f"{{0}}.{method}({{1}})"
    return Op(name, method, f"method.{method}", arity, forward, lambda *args: local(*args[:arity]), template, name,
              safe=safe, summary=re.sub(r"\bb\b", "other", re.sub(r"\ba\b", "self", text)),
              rule=f"the derivative of {text}", formula=text)


CLASSIC = ("add", "mul", "pow", "tanh")  # the ops of micrograd's classic exercise, in their order


def op(name: str) -> Op:
    """The op called ``name``; a ``KeyError`` naming the known ops otherwise."""
    try:
        return OPS[name]
    except KeyError:
        raise KeyError(f"unknown op {name!r} (known: {', '.join(OPS)})") from None


def reflection(name: str) -> str | None:
    """The op Python reaches for ``name`` with a plain number first (``radd`` for ``add``: ``2 + a`` is
    ``a.__radd__(2)``), if the table has one."""
    return next((op.name for op in OPS.values() if op.number_first and op.uses == (name,)), None)


def available(graded) -> frozenset[str]:
    """The ops a course's value class has: those it grades, and those its scaffold gives written with them
    (``neg`` as ``self * -1`` where ``mul`` is graded: each op's ``uses``)."""
    have = set(graded)
    while True:
        more = {op.name for op in OPS.values() if op.uses and op.name not in have and set(op.uses) <= have}
        if not more:
            return frozenset(have)
        have |= more


def method_name(target: str) -> str:
    """How the student knows ``target``: the method or function they wrote (``__mul__``, ``train_step``)."""
    if target in OPS:
        return OPS[target].method
    return "the submission" if target == "submission" else target


def operand_count(node: tuple) -> int:
    """How many operand indices follow the kind in a node tuple."""
    return 0 if node[0] in ("leaf", "const") else OPS[node[0]].arity


def local_derivatives(node: tuple, values: list[float]) -> tuple[float, ...]:
    """d node / d operand for each operand, at the operands' ``values``."""
    spec = OPS[node[0]]
    args = [values[i] for i in node[1:1 + spec.arity]]
    if spec.exponent:
        args.append(node[1 + spec.arity])
    out = spec.forward(*args)
    return spec.local(*args, out)


def forward(node: tuple, values: list[float]) -> float:
    """The node's value from its operands' ``values``."""
    spec = OPS[node[0]]
    args = [values[i] for i in node[1:1 + spec.arity]]
    if spec.exponent:
        args.append(node[1 + spec.arity])
    return spec.forward(*args)


# Operators the scaffold gives when they are not graded, each written with the ops it names: (op, method, what it
# computes, its body, the ops it uses). A learner's method still as this body is the course's, not the learner's.
GIVEN = (
    ("neg", "__neg__", "-self", "return self * -1", ("mul",)),
    ("radd", "__radd__", "other + self", "return self + other", ("add",)),
    ("sub", "__sub__", "self - other", "return self + (-other)", ("add", "neg")),
    (None, "__rsub__", "other - self", "return other + (-self)", ("add", "neg")),
    ("rmul", "__rmul__", "other * self", "return self * other", ("mul",)),
    ("truediv", "__truediv__", "self / other", "return self * other**-1", ("mul", "pow")),
    (None, "__rtruediv__", "other / self", "return other * self**-1", ("mul", "pow")),
)
