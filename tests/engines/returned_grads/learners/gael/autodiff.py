"""Homework 3: reverse mode without mutation.

A Node never changes once made. It holds its value, the Nodes it was computed
from (`inputs`), and its `vjp`: a function that takes the gradient flowing into
the Node and returns one contribution per input, in the order of `inputs`.

Nothing is written on a Node by the backward pass: `grad(out)` returns a fresh
dict {node: d out / d node} for every Node `out` depends on.

You write: the vjp of every operation below (and its forward value), and grad().
"""
from __future__ import annotations

import math
from collections import defaultdict
from typing import Callable


class Node:
    __slots__ = ("value", "inputs", "vjp")

    def __init__(self, value: float, inputs: tuple = (), vjp: Callable | None = None):
        self.value = float(value)
        self.inputs = tuple(inputs)
        self.vjp = vjp

    def __repr__(self) -> str:
        return f"Node({self.value:g})"

    # --- operations (hw3 part 1) ---------------------------------------------------
    def __add__(self, other) -> Node:
        other = constant(other)
        return Node(self.value + other.value, (self, other), lambda g: (g, g))

    def __radd__(self, other) -> Node:
        return constant(other) + self

    def __mul__(self, other) -> Node:
        other = constant(other)

        def vjp(g):
            return g * other.value, g * self.value

        return Node(self.value * other.value, (self, other), vjp)

    def __rmul__(self, other) -> Node:
        return constant(other) * self

    def __neg__(self) -> Node:
        def vjp(g):
            return (-1.0 * g,)

        return Node(-self.value, (self,), vjp)

    def __sub__(self, other) -> Node:
        other = constant(other)

        def vjp(g):
            return g, -g

        return Node(self.value - other.value, (self, other), vjp)

    def __rsub__(self, other) -> Node:
        return constant(other) - self

    def __truediv__(self, other) -> Node:
        other = constant(other)
        num, den = self.value, other.value

        def vjp(g):
            # d(n/d)/dn = 1/d ; d(n/d)/dd = -n/d^2
            return g / den, -g * num / den**2

        return Node(num / den, (self, other), vjp)

    def __rtruediv__(self, other) -> Node:
        return constant(other) / self

    def tanh(self) -> Node:
        out = math.tanh(self.value)

        def vjp(g):
            return (g * (1 - out**2),)

        return Node(out, (self,), vjp)

    def exp(self) -> Node:
        out = math.exp(self.value)

        def vjp(g):
            return (g * out,)

        return Node(out, (self,), vjp)

    def log(self) -> Node:
        x = self.value

        def vjp(g):
            return (g * (1 / x),)

        return Node(math.log(x), (self,), vjp)


def constant(x) -> Node:
    """A plain number as a Node with no inputs (given)."""
    return x if isinstance(x, Node) else Node(x)


def toposort(out: Node) -> list[Node]:
    """Every Node `out` depends on, each after all of its inputs (given)."""
    order, seen = [], set()

    def visit(node: Node) -> None:
        if id(node) not in seen:
            seen.add(id(node))
            for i in node.inputs:
                visit(i)
            order.append(node)

    visit(out)
    return order


# --- the backward pass (hw3 part 2) -----------------------------------------------------
def grad(out: Node) -> dict[Node, float]:
    """{node: d out / d node} for `out` and every Node it depends on."""
    adjoint = defaultdict(float)
    adjoint[out] = 1.0
    for node in toposort(out)[::-1]:
        if node.vjp is None:
            continue  # a leaf or a constant: nothing above it to pass on
        parts = node.vjp(adjoint[node])
        for k, inp in enumerate(node.inputs):
            adjoint[inp] += parts[k]
    return dict(adjoint)
