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
        raise NotImplementedError("hw3: mul")

    def __rmul__(self, other) -> Node:
        return constant(other) * self

    def __neg__(self) -> Node:
        raise NotImplementedError("hw3: neg")

    def __sub__(self, other) -> Node:
        raise NotImplementedError("hw3: sub")

    def __rsub__(self, other) -> Node:
        return constant(other) - self

    def __truediv__(self, other) -> Node:
        raise NotImplementedError("hw3: truediv")

    def __rtruediv__(self, other) -> Node:
        return constant(other) / self

    def tanh(self) -> Node:
        raise NotImplementedError("hw3: tanh")

    def exp(self) -> Node:
        raise NotImplementedError("hw3: exp")

    def log(self) -> Node:
        raise NotImplementedError("hw3: log")


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
    raise NotImplementedError("hw3: grad")
