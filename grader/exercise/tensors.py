"""Tensor ops a course can grade, and the case a tensor op is checked on.

Where a course moves on from a scalar ``Value`` to a ``Tensor`` whose entries are
its Values (a numpy array of them, or a list of lists), each op of the Tensor is
graded as ops are: on cases of chosen shapes and values, its result's shape and
every entry's value against the reference engine applied entry by entry, and,
after a backward pass from the result, every operand entry's gradient against the
reference and against finite differences of the learner's own forward pass.

A case holds its operands as tensors of *leaves*: numbered Values, so that a tensor
may hold one Value at two places (its gradient then adds up), and one tensor may be
both operands (``a * a``). Its label is the call as the learner writes it
(``a.max(axis=1)``), wrapped in the scalar the backward pass starts from: the sum
of the result's entries, each weighted by the gradient ``g`` it is given.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

from grader.exercise import shapes
from grader.exercise.expr import fmt_number


@dataclass(frozen=True)
class TensorOp:
    """A tensor op: the method a learner writes for it by default and which kind of op it is."""

    name: str
    method: str  # the method the learner writes for it, unless the course names another
    family: str  # elementwise, reflected (a plain number first), unary, matrix, reduce, index, reshape
    symbol: str = ""  # the operator a person writes for it (``*``), where it has one
    domain: str = "any"  # where its entries are safe: any, positive, divisor, quotient


TENSOR_OPS: dict[str, TensorOp] = {op.name: op for op in (
    TensorOp("add", "__add__", "elementwise", "+"),
    TensorOp("sub", "__sub__", "elementwise", "-"),
    TensorOp("mul", "__mul__", "elementwise", "*"),
    TensorOp("truediv", "__truediv__", "elementwise", "/", "divisor"),
    TensorOp("floordiv", "__floordiv__", "elementwise", "//", "quotient"),
    TensorOp("radd", "__radd__", "reflected", "+"),
    TensorOp("rmul", "__rmul__", "reflected", "*"),
    TensorOp("exp", "exp", "unary"),
    TensorOp("log", "log", "unary", domain="positive"),
    TensorOp("tanh", "tanh", "unary"),
    TensorOp("relu", "relu", "unary"),
    TensorOp("dot", "dot", "matrix"),
    TensorOp("matmul", "__matmul__", "matrix", "@"),
    TensorOp("sum", "sum", "reduce"),
    TensorOp("mean", "mean", "reduce"),
    TensorOp("max", "max", "reduce"),
    TensorOp("argmax", "argmax", "index"),
    TensorOp("reshape", "reshape", "reshape"),
)}

# Methods Python reaches through an operator: the child applies them as code does (``a * b``, ``2.5 + a``),
# so a reflected method is reached only where Python reaches it. The value is the ``operator`` function.
OPERATOR_METHODS = {"__add__": "add", "__radd__": "add", "__sub__": "sub", "__mul__": "mul", "__rmul__": "mul",
                    "__truediv__": "truediv", "__floordiv__": "floordiv", "__matmul__": "matmul"}
SYMBOLS = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//", "matmul": "@"}
ONES = "ones"  # the seed of a case whose result's entries each get gradient 1: the loss is their sum


def call_of(method: str) -> list:
    """How the child applies ``method``: ``["operator", "mul"]`` for an operator's method, else
    ``["method", name]``."""
    if method in OPERATOR_METHODS:
        return ["operator", OPERATOR_METHODS[method]]
    return ["method", method]


def shape_text(shape: tuple[int, ...]) -> str:
    """A shape as Python and numpy print it: ``(2, 3)``, ``(3,)``, ``()``."""
    return repr(tuple(shape))


def size_of(shape: tuple[int, ...]) -> int:
    return math.prod(shape)


def nested(flat: list | tuple, shape: tuple[int, ...]) -> object:
    """Row-major entries ``flat`` as nested lists of ``shape`` (a bare entry for ``()``)."""
    if not shape:
        return flat[0]
    if len(shape) == 1:
        return list(flat)
    step = len(flat) // shape[0] if shape[0] else 0
    return [nested(flat[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0])]


def position(index: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    """The multi-index of row-major ``index`` in ``shape``."""
    found = []
    for n in reversed(shape):
        index, i = divmod(index, n)
        found.append(i)
    return tuple(reversed(found))


@dataclass(frozen=True)
class Operand:
    """A tensor of a case: its name in the label, its shape, and which leaf each entry is (row by row)."""

    name: str
    shape: tuple[int, ...]
    leaves: tuple[int, ...]


@dataclass(frozen=True)
class TensorCase:
    """One call of a tensor op on tensors of leaves, and the gradient its result's entries are given."""

    op: str  # the op's name (``TENSOR_OPS``)
    method: str  # the method the course names for it
    leaves: tuple[float, ...]  # every leaf's value
    tensors: tuple[Operand, ...]
    operands: tuple[str | float, ...]  # in call order: tensor names, or plain numbers
    axis: int | None = None  # for a reduction along an axis
    sizes: tuple[int, ...] = ()  # for reshape: the new shape
    seed: tuple[float, ...] | str = ONES  # the gradient of each entry of the result (row by row), or ONES
    order: int = 0  # the op's place in its target (its main op first): ties in size go to the first
    # How the course calls reshape and an axis (its shape_as and axis_keyword): None where it says nothing, and the
    # call is numpy's (a.reshape(3, 2), a.max(axis=1)) unless the learner's method shows the other.
    style: tuple[str | None, str | None] = (None, None)

    def tensor(self, name: str) -> Operand:
        return next(t for t in self.tensors if t.name == name)

    @property
    def spec(self) -> TensorOp:
        return TENSOR_OPS[self.op]

    @property
    def backward(self) -> bool:
        """Whether gradients are checked: every op but argmax, which returns indices."""
        return self.spec.family != "index"

    @property
    def size(self) -> int:
        """Entries of the distinct tensors: how much a person checks by hand."""
        return sum(len(t.leaves) for t in self.tensors)

    def seed_of(self, count: int) -> tuple[float, ...]:
        """The gradient each of ``count`` result entries is given."""
        return (1.0,) * count if self.seed == ONES else tuple(self.seed)

    @cached_property
    def call(self) -> str:
        """The call as the learner writes it: ``a * b``, ``2.5 + a``, ``a.dot(b)``, ``a.max(axis=1)``."""
        shown = [x if isinstance(x, str) else fmt_number(x) for x in self.operands]
        operator = call_of(self.method)
        if operator[0] == "operator":
            return f"{shown[0]} {SYMBOLS[operator[1]]} {shown[1]}"
        at = next(i for i, x in enumerate(self.operands) if isinstance(x, str))  # a number first: the tensor's
        receiver, others = shown[at], shown[:at] + shown[at + 1:]
        if self.spec.family == "reshape":
            others = [str(n) for n in self.sizes]
            if self.style[0] == "tuple":
                others = [f"({', '.join(others)}{',' if len(others) == 1 else ''})"]
        elif self.axis is not None:
            others.append(f"{self.style[1] or 'axis'}={self.axis}")
        return f"{receiver}.{self.method}({', '.join(others)})"

    @property
    def label(self) -> str:
        """The call, in the scalar the backward pass starts from: ``(a * b).sum()``, ``(a.dot(b) * g).sum()``."""
        if not self.backward:
            return self.call
        inner = f"({self.call})" if call_of(self.method)[0] == "operator" else self.call
        if self.seed == ONES:
            return self.call if self.scalar else f"{inner}.sum()"
        if self.scalar:
            return f"{inner} * {fmt_number(self.seed[0])}"
        return f"({inner} * g).sum()"

    @property
    def scalar(self) -> bool:
        """Whether the result is one entry (a whole reduction, or one of a vector along its axis)."""
        return self.result_shape == ()

    @cached_property
    def names(self) -> tuple[str, ...]:
        """Each leaf as a message names it: the first place it is held (``a[0][1]``)."""
        found: dict[int, str] = {}
        for t in self.tensors:
            for k, leaf in enumerate(t.leaves):
                found.setdefault(leaf, t.name + "".join(f"[{i}]" for i in position(k, t.shape)))
        return tuple(found[i] for i in range(len(self.leaves)))

    @property
    def values(self) -> dict[str, object]:
        """The inputs as a report lists them: each tensor with its shape and entries, a Value held twice,
        and the gradient ``g`` the result's entries are given."""
        shown: dict[str, object] = {}
        for t in self.tensors:
            shown[f"{t.name} of shape {shape_text(t.shape)}"] = nested([self.leaves[i] for i in t.leaves], t.shape)
            for k, leaf in enumerate(t.leaves):
                place = t.name + "".join(f"[{i}]" for i in position(k, t.shape))
                if self.names[leaf] != place:
                    shown[place] = f"the same Value as {self.names[leaf]}"
        if self.backward and self.seed != ONES and not self.scalar:
            shape = self.result_shape
            if shape is not None:
                shown[f"g of shape {shape_text(shape)}"] = nested(list(self.seed), shape)
        return shown

    @cached_property
    def result_shape(self) -> tuple[int, ...] | None:
        """The shape of the op's result, as numpy gives it (``None`` where the shapes do not fit)."""
        family = self.spec.family
        given = [self.tensor(x).shape if isinstance(x, str) else () for x in self.operands]
        if family in ("elementwise", "reflected"):
            return shapes.broadcast(*given)
        if family == "unary":
            return given[0]
        if family == "matrix":
            return shapes.matrix(*given)
        if family == "reshape":
            return shapes.reshaped(given[0], self.sizes)
        return shapes.along(given[0], self.axis)

    @cached_property
    def broadcast(self) -> frozenset[str]:
        """The tensors broadcast to the result's shape (used at several places of the result)."""
        if self.spec.family != "elementwise" or self.result_shape is None:
            return frozenset()
        return frozenset(t.name for t in self.tensors if t.shape != self.result_shape)

    @cached_property
    def reuses(self) -> bool:
        """Whether some Value is used more than once: one tensor as both operands, a Value held twice, an
        operand broadcast, or a matrix product's entries each used for a whole row or column."""
        names = [x for x in self.operands if isinstance(x, str)]
        held = [leaf for t in self.tensors for leaf in t.leaves]
        if len(names) != len(set(names)) or len(held) != len(set(held)) or self.broadcast:
            return True
        if self.spec.family == "matrix":
            left, right = (self.tensor(n).shape for n in names)
            return (left[0] if len(left) == 2 else 1) > 1 or (right[-1] if len(right) == 2 else 1) > 1
        return False

    @cached_property
    def rank(self) -> tuple:
        """Smaller cases first: fewer entries, the target's main op, the plain sum before a weighted one,
        a whole reduction before one along an axis, then simpler numbers."""
        return (self.size, self.order, self.seed != ONES, self.axis is not None, len(self.call), self.call,
                tuple(abs(x) for x in self.leaves))
