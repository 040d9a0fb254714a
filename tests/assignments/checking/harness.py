"""Checks of a learner's scalar-autograd class against ``reference/engine.py``.

An op is checked on the subgraph it builds: the leaves start with a gradient ``g0``, the result gets a
gradient ``g``, and every closure between them runs in reverse topological order (our own walk, so the
learner's ``backward`` is not involved). With ``g0 = 0`` a wrong local derivative shows; with ``g0 != 0``
an assignment (``=``) where an accumulation (``+=``) belongs shows. An op's own code is told apart
from a bug it inherits by checking it again with the ops it calls replaced by right ones.
"""

from __future__ import annotations

import contextlib
import math
import operator
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))
from reference.engine import Value as Ref  # noqa: E402  (the project's reference, by its path)


@dataclass(frozen=True)
class Shape:
    """How a learner's class keeps its number, gradient, closure and operands."""

    cls: type
    data: str = "data"
    grad: str = "grad"
    closure: str = "_backward"
    children: str = "_prev"

    def make(self, x: float, children: tuple = ()) -> object:
        node = self.cls(x, children) if children else self.cls(x)
        return node

    def value(self, node: object) -> float:
        return float(getattr(node, self.data))

    def gradient(self, node: object) -> float:
        return float(getattr(node, self.grad))


def propagate(shape: Shape, root: object, g: float = 1.0) -> None:
    """Run every closure from ``root`` down, in reverse topological order; leaves keep what they hold."""
    order, seen = [], set()

    def visit(node: object) -> None:
        if id(node) in seen:
            return
        seen.add(id(node))
        for child in getattr(node, shape.children, ()) or ():
            visit(child)
        order.append(node)

    visit(root)
    for node in order[:-1]:
        if getattr(node, shape.children, None):
            setattr(node, shape.grad, 0.0)
    setattr(root, shape.grad, g)
    for node in reversed(order):
        closure = getattr(node, shape.closure, None)
        if callable(closure):
            closure()


UNARY = {"exp": lambda x: x.exp(), "log": lambda x: x.log(), "tanh": lambda x: x.tanh(),
         "relu": lambda x: x.relu(), "neg": operator.neg, "pow3": lambda x: x ** 3, "pow-1": lambda x: x ** -1,
         "pow.5": lambda x: x ** 0.5}
BINARY = {"add": operator.add, "mul": operator.mul, "truediv": operator.truediv, "sub": operator.sub}
POINTS = {"log": [(0.7,), (2.5,)], "pow.5": [(0.7,), (2.5,)], "relu": [(0.8,), (-1.3,), (2.0,)]}
PAIRS = [(1.5, -0.8), (-2.0, 0.6), (0.9, 2.2)]


def op_cases(name: str) -> list[tuple[Callable, tuple[float, ...], tuple[bool, ...]]]:
    """(function, inputs, which inputs are nodes) for the op named ``name``."""
    if name == "pow":
        return [c for k in ("pow3", "pow-1", "pow.5") for c in op_cases(k)]
    if name in ("radd", "rmul"):
        fn = {"radd": lambda x, n: n + x, "rmul": lambda x, n: n * x}[name]
        return [(fn, (x, 2.5), (True, False)) for x, _ in PAIRS]
    if name in UNARY:
        return [(UNARY[name], p, (True,)) for p in POINTS.get(name, [(0.6,), (-1.1,), (1.7,)])]
    fn = BINARY[name]
    cases = [(fn, p, (True, True)) for p in PAIRS]
    cases += [(fn, (p[0], 2.5), (True, False)) for p in PAIRS]  # a plain number as the other operand
    cases += [(lambda x, _y, f=fn: f(x, x), (p[0], 0.0), (True, False)) for p in PAIRS]  # one node used twice
    return cases


def _reference(fn: Callable, inputs: tuple, nodes: tuple) -> tuple[float, list[float]]:
    leaves = [Ref(x) if is_node else x for x, is_node in zip(inputs, nodes)]
    out = fn(*leaves)
    out.backward()
    return out.data, [leaf.grad if is_node else 0.0 for leaf, is_node in zip(leaves, nodes)]


def check_op(shape: Shape, name: str) -> tuple[str, str]:
    """("right" | a code, what was seen) for the op ``name`` of the learner's class."""
    for fn, inputs, nodes in op_cases(name):
        want, want_grads = _reference(fn, inputs, nodes)
        for g0, g in ((0.6, 1.3), (0.0, 1.0), (0.0, -1.7)):
            try:
                leaves = [shape.make(x) if is_node else x for x, is_node in zip(inputs, nodes)]
                for leaf, is_node in zip(leaves, nodes):
                    if is_node:
                        setattr(leaf, shape.grad, g0)
                out = fn(*leaves)
                if out is None:
                    return "not-implemented", f"{name} returns None"
                got = shape.value(out)
                propagate(shape, out, g)
                grads = [shape.gradient(leaf) if is_node else 0.0 for leaf, is_node in zip(leaves, nodes)]
            except NotImplementedError:
                return "not-implemented", f"{name} raises NotImplementedError"
            except (AttributeError, TypeError) as exc:
                missing = isinstance(exc, TypeError) and ("operand" in str(exc))
                if missing or "has no attribute" in str(exc) and name in str(exc):
                    return "not-implemented", f"{name}: {exc}"
                return "crash", f"{name}{inputs}: {type(exc).__name__}: {exc}"
            except Exception as exc:  # noqa: BLE001 (the learner's code may raise anything)
                return "crash", f"{name}{inputs}: {type(exc).__name__}: {exc}"
            if not math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-12):
                return "wrong-forward", f"{name}{inputs}: {got} instead of {want}"
            expect = [g0 + g * w if is_node else 0.0 for w, is_node in zip(want_grads, nodes)]
            if not all(math.isclose(a, b, rel_tol=1e-7, abs_tol=1e-9) for a, b in zip(grads, expect)):
                if all(gr == g0 for gr, is_node in zip(grads, nodes) if is_node):
                    return "not-implemented", f"{name}: no gradient reaches the operands"
                code = "grad-overwrite" if g0 and _grads_right_from_zero(shape, fn, inputs, nodes) else \
                    "wrong-local-grad"
                return code, f"{name}{inputs} g0={g0} g={g}: grads {grads} instead of {expect}"
    return "right", ""


def _grads_right_from_zero(shape: Shape, fn: Callable, inputs: tuple, nodes: tuple) -> bool:
    """The op is right when every leaf starts from zero: only an accumulation is missing."""
    want_grads = _reference(fn, inputs, nodes)[1]
    leaves = [shape.make(x) if is_node else x for x, is_node in zip(inputs, nodes)]
    out = fn(*leaves)
    propagate(shape, out, -1.7)
    return all(math.isclose(shape.gradient(leaf), -1.7 * w, rel_tol=1e-7, abs_tol=1e-9)
               for leaf, w, is_node in zip(leaves, want_grads, nodes) if is_node)


# --------------------------------------------------------------- right ops, to isolate a delegating one

def _lift(shape: Shape, x: object) -> object:
    return x if isinstance(x, shape.cls) else shape.cls(x)


def _node(shape: Shape, value: float, operands: tuple, locals_: tuple) -> object:
    out = shape.cls(value, operands)

    def closure() -> None:
        for operand, local in zip(operands, locals_):
            setattr(operand, shape.grad, getattr(operand, shape.grad) + local * getattr(out, shape.grad))

    setattr(out, shape.closure, closure)
    return out


def right_op(shape: Shape, name: str) -> Callable:
    """A right implementation of ``name`` for the learner's class (conventional constructor)."""
    d = shape.data

    def binary(forward: Callable, local: Callable) -> Callable:
        def method(self: object, other: object) -> object:
            other = _lift(shape, other)
            a, b = getattr(self, d), getattr(other, d)
            return _node(shape, forward(a, b), (self, other), local(a, b))
        return method

    def unary(forward: Callable, local: Callable) -> Callable:
        def method(self: object) -> object:
            a = getattr(self, d)
            return _node(shape, forward(a), (self,), (local(a),))
        return method

    table = {
        "__add__": binary(operator.add, lambda a, b: (1.0, 1.0)),
        "__mul__": binary(operator.mul, lambda a, b: (b, a)),
        "__truediv__": binary(operator.truediv, lambda a, b: (1 / b, -a / b**2)),
        "__sub__": binary(operator.sub, lambda a, b: (1.0, -1.0)),
        "__neg__": unary(operator.neg, lambda a: -1.0),
        "exp": unary(math.exp, math.exp),
        "log": unary(math.log, lambda a: 1 / a),
        "relu": unary(lambda a: max(a, 0.0), lambda a: float(a > 0)),
        "tanh": unary(math.tanh, lambda a: 1 - math.tanh(a) ** 2),
    }
    if name == "__pow__":
        def power(self: object, k: float) -> object:
            a = getattr(self, d)
            return _node(shape, a**k, (self,), (k * a ** (k - 1),))
        return power
    return table[name]


METHOD = {"add": "__add__", "mul": "__mul__", "pow": "__pow__", "truediv": "__truediv__", "sub": "__sub__",
          "neg": "__neg__", "exp": "exp", "log": "log", "relu": "relu", "tanh": "tanh"}


@contextlib.contextmanager
def replaced(shape: Shape, parts: list[str]) -> Iterator[None]:
    """The learner's class with the ops named by ``parts`` (part ids such as ``mul``) replaced by right ones."""
    saved = {}
    for part in parts:
        method = METHOD[part.split(".")[-1].lower()]
        saved[method] = shape.cls.__dict__.get(method)
        setattr(shape.cls, method, right_op(shape, method))
    try:
        yield
    finally:
        for method, old in saved.items():
            if old is None:
                delattr(shape.cls, method)
            else:
                setattr(shape.cls, method, old)


def check_isolated(shape: Shape, name: str, inherits: list[str]) -> tuple[str, str]:
    """The op's verdict, and "inherits" when it is wrong only through the ops ``inherits`` names."""
    status, detail = check_op(shape, name)
    if status == "right" or not inherits:
        return status, detail
    with replaced(shape, inherits):
        alone, alone_detail = check_op(shape, name)
    return ("inherits", detail) if alone == "right" else (status, f"{detail}; alone: {alone_detail}")


# --------------------------------------------------------------- backward and training

def check_backward(shape: Shape, ops: tuple[str, ...] = ("add", "mul"),
                   zeroing_allowed: bool = False) -> tuple[str, str]:
    """The learner's backward() over a graph made with right ops, against the reference."""
    with replaced(shape, list(ops)):
        for xs in ((1.5, -0.5, 2.0), (-0.7, 1.2, 0.3)):
            leaves = [shape.make(x) for x in xs]
            refs = [Ref(x) for x in xs]
            for nodes in (leaves, refs):
                a, b, c = nodes
                e = a * b
                f = e + c
                nodes.append(f * e + a)  # a diamond, and a leaf used at two depths
            try:
                leaves[-1].backward()
            except Exception as exc:  # noqa: BLE001
                return "crash", f"backward: {type(exc).__name__}: {exc}"
            refs[-1].backward()
            got = [shape.gradient(v) for v in leaves[:3]]
            want = [r.grad for r in refs[:3]]
            if not all(math.isclose(g, w, rel_tol=1e-9, abs_tol=1e-12) for g, w in zip(got, want)):
                return ("not-implemented" if not any(got) else "wrong-order"), f"grads {got} instead of {want}"
        if not zeroing_allowed:
            a = shape.make(2.0)
            y = a * a
            y.backward()
            y.backward()
            if not math.isclose(shape.gradient(a), 8.0):
                return "no-accumulation", f"two backward() calls give {shape.gradient(a)}, not 8.0"
    return "right", ""
