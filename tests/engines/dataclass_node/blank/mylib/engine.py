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
        # TODO: self + other, and a backward_fn that passes out.grad to both
        pass

    def __mul__(self, other) -> Node:
        # TODO: self * other, and its backward_fn
        pass

    def __pow__(self, k: float) -> Node:
        # TODO: self ** k for a plain number k, and its backward_fn
        pass

    def tanh(self) -> Node:
        # TODO: tanh(self), and its backward_fn
        pass

    def relu(self) -> Node:
        # TODO: max(self, 0), and its backward_fn
        pass

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
        # TODO: order the graph, seed self.grad, call every backward_fn
        pass
