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
from collections.abc import Callable
from dataclasses import dataclass


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
       rule="if t = tanh(x), then dt/dx = 1 - t ** 2"),
    Op("relu", "relu", "method.relu", 1, lambda x: x if x > 0 else 0.0, lambda x, out: (1.0 if x > 0 else 0.0,),
       "{0}.relu()", "ReLU", safe=lambda x: abs(x) >= 0.05, summary="max(0, self)",
       rule="d relu(x)/dx = 1 where x > 0 and 0 where x < 0", effort=1),
    Op("exp", "exp", "method.exp", 1, math.exp, lambda x, out: (out,),
       "{0}.exp()", "exp", safe=lambda x: abs(x) <= 3.0, summary="e ** self",
       rule="if e = exp(x), then de/dx = e"),
    Op("log", "log", "method.log", 1, math.log, lambda x, out: (1.0 / x,),
       "{0}.log()", "log", safe=lambda x: x >= 0.2, summary="the natural logarithm of self (self > 0)",
       rule="d log(x)/dx = 1 / x"),
    Op("sigmoid", "sigmoid", "method.sigmoid", 1, _sigmoid, lambda x, out: (out * (1.0 - out),),
       "{0}.sigmoid()", "sigmoid", safe=lambda x: abs(x) <= 10.0, summary="1 / (1 + e ** -self)",
       rule="if s = sigmoid(x), then ds/dx = s * (1 - s)"),
    Op("neg", "__neg__", "operator.neg", 1, lambda x: -x, lambda x, out: (-1.0,),
       "(-{0})", "neg", summary="-self", rule="d(-a)/da = -1", uses=("mul",), effort=1),
    Op("sub", "__sub__", "operator.sub", 2, lambda x, y: x - y, lambda x, y, out: (1.0, -1.0),
       "({0} - {1})", "-", summary="self - other",
       rule="d(a - b)/da = 1 and d(a - b)/db = -1", uses=("add", "neg"), effort=1),
    Op("truediv", "__truediv__", "operator.truediv", 2, lambda x, y: x / y,
       lambda x, y, out: (1.0 / y, -x / (y * y)), "({0} / {1})", "/",
       safe=lambda x, y: abs(y) >= 0.2, summary="self / other",
       rule="d(a / b)/da = 1 / b and d(a / b)/db = -a / b ** 2", uses=("mul", "pow"), effort=2),
    Op("radd", "__radd__", "operator.add", 2, lambda x, y: x + y, lambda x, y, out: (1.0, 1.0),
       "({0} + {1})", "+", number_first=True, summary="other + self, for a plain number other",
       rule="d(n + a)/da = 1", uses=("add",), effort=1),
    Op("rmul", "__rmul__", "operator.mul", 2, lambda x, y: x * y, lambda x, y, out: (y, x),
       "({0} * {1})", "*", number_first=True, summary="other * self, for a plain number other",
       rule="d(n * a)/da = n", uses=("mul",), effort=1),
)}

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
