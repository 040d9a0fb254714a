"""mylib.engine: one scalar in a computation graph.

A Node is a dataclass. `children` are the Nodes it was computed from and
`backward_fn` is the closure that moves `self.grad` into their grads. Nodes are
compared and hashed by identity (eq=False): two Nodes that happen to hold the
same value are still two different places in the graph.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable


def _nothing() -> None:
    return None


@dataclass(eq=False)
class Node:
    value: float
    grad: float = 0.0
    children: tuple = ()
    backward_fn: Callable[[], None] = field(default=_nothing, repr=False)
    op: str = ""

    @staticmethod
    def wrap(x) -> Node:
        return x if isinstance(x, Node) else Node(float(x))

    # ---- ops: write the forward value and the backward_fn of each -------------------
    def __add__(self, other) -> Node:
        other = Node.wrap(other)
        out = Node(self.value + other.value, children=(self, other), op="+")

        def backward_fn():
            self.grad += out.grad
            other.grad += out.grad

        out.backward_fn = backward_fn
        return out

    def __mul__(self, other) -> Node:
        other = Node.wrap(other)
        out = Node(self.value * other.value, children=(self, other), op="*")

        def backward_fn():
            self.grad += other.value * out.grad
            other.grad += self.value * out.grad

        out.backward_fn = backward_fn
        return out

    def __pow__(self, k: float) -> Node:
        out = Node(self.value ** k, children=(self,), op=f"**{k}")

        def backward_fn():
            self.grad += k * self.value ** (k - 1) * out.grad

        out.backward_fn = backward_fn
        return out

    def tanh(self) -> Node:
        t = math.tanh(self.value)
        out = Node(t, children=(self,), op="tanh")

        def backward_fn():
            self.grad += (1 - t * t) * out.grad

        out.backward_fn = backward_fn
        return out

    def relu(self) -> Node:
        out = Node(max(self.value, 0.0), children=(self,), op="relu")

        def backward_fn():
            self.grad += (1.0 if self.value > 0 else 0.0) * out.grad

        out.backward_fn = backward_fn
        return out

    # ---- given: the rest, written with the ops above --------------------------------
    def __radd__(self, other) -> Node:
        return self + other

    def __rmul__(self, other) -> Node:
        return self * other

    def __neg__(self) -> Node:
        return self * -1.0

    def __sub__(self, other) -> Node:
        return self + (-Node.wrap(other))

    def __rsub__(self, other) -> Node:
        return Node.wrap(other) + (-self)

    def __truediv__(self, other) -> Node:
        return self * Node.wrap(other) ** -1

    # ---- the backward pass ----------------------------------------------------------
    def backward(self) -> None:
        """Fill in .grad of every Node this one depends on (d self / d node)."""
        order: list[Node] = []
        seen: set[Node] = set()

        def visit(node: Node) -> None:
            if node not in seen:
                seen.add(node)
                for child in node.children:
                    visit(child)
                order.append(node)

        visit(self)
        self.grad = 1.0
        for node in reversed(order):
            node.backward_fn()
