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
        a, b = self.value, other.value
        return Node(a * b, (self, other), lambda g: (g * b, g * a))

    def __rmul__(self, other) -> Node:
        return constant(other) * self

    def __neg__(self) -> Node:
        return Node(-self.value, (self,), lambda g: (-g,))

    def __sub__(self, other) -> Node:
        other = constant(other)
        return Node(self.value - other.value, (self, other), lambda g: (g, -g))

    def __rsub__(self, other) -> Node:
        return constant(other) - self

    def __truediv__(self, other) -> Node:
        other = constant(other)
        a, b = self.value, other.value
        return Node(a / b, (self, other), lambda g: (g / b, -g * a / (b * b)))

    def __rtruediv__(self, other) -> Node:
        return constant(other) / self

    def tanh(self) -> Node:
        t = math.tanh(self.value)
        return Node(t, (self,), lambda g: (g * (1.0 - t * t),))

    def exp(self) -> Node:
        e = math.exp(self.value)
        return Node(e, (self,), lambda g: (g * e,))

    def log(self) -> Node:
        x = self.value
        return Node(math.log(x), (self,), lambda g: (g / x,))


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
    grads = {out: 1.0}
    for node in toposort(out):
        if not node.inputs:
            continue
        g = grads.get(node, 0.0)
        for inp, contribution in zip(node.inputs, node.vjp(g)):
            grads[inp] = grads.get(inp, 0.0) + contribution
    return grads
