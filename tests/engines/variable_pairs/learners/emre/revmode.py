"""Lab 4 -- reverse-mode AD with local-derivative pairs.

A Variable keeps its value and, for every operand it was computed from, the pair
(operand, d self / d operand), worked out *during the forward pass*: by the time
backward() runs, every local derivative is already a plain number. backward()
then only has to multiply and add: the adjoint of each operand grows by
local * (adjoint of the result).

Fill in every method marked LAB. Run `pytest test_revmode.py` to check yourself.
"""
from __future__ import annotations

import math


class Variable:
    def __init__(self, value: float, parents: list | None = None):
        self.value = float(value)
        self.parents = parents if parents is not None else []  # [(Variable, float), ...]
        self.d = 0.0  # the adjoint: d output / d self, filled in by backward()

    def __repr__(self) -> str:
        return f"Variable({self.value:.6g}, d={self.d:.6g})"

    @staticmethod
    def lift(x) -> Variable:
        """Plain numbers become constant Variables (nobody reads their adjoint)."""
        return x if isinstance(x, Variable) else Variable(x)

    # LAB: the forward pass and the local derivatives, op by op
    def __add__(self, other) -> Variable:
        other = Variable.lift(other)
        return Variable(self.value + other.value, [(self, 1.0), (other, 1.0)])

    def __radd__(self, other) -> Variable:
        return self + other

    def __mul__(self, other) -> Variable:
        other = Variable.lift(other)
        return Variable(self.value * other.value, [(self, other.value), (other, self.value)])

    def __rmul__(self, other) -> Variable:
        return self * other

    def __sub__(self, other) -> Variable:
        other = Variable.lift(other)
        return Variable(self.value - other.value, [(self, 1.0), (other, -1.0)])

    def __rsub__(self, other) -> Variable:
        return Variable.lift(other) - self

    def __pow__(self, k: float) -> Variable:
        """self ** k for a plain number k."""
        return Variable(self.value ** k, [(self, k * self.value ** (k - 1))])

    def sin(self) -> Variable:
        return Variable(math.sin(self.value), [(self, math.cos(self.value))])

    def cos(self) -> Variable:
        return Variable(math.cos(self.value), [(self, -math.sin(self.value))])

    def exp(self) -> Variable:
        e = math.exp(self.value)
        return Variable(e, [(self, e)])

    # LAB: the backward pass
    def backward(self) -> None:
        """Set self.d = 1 and push adjoints to every Variable self depends on.

        Visit a Variable only once all the Variables computed from it have pushed
        their share into its adjoint (reverse topological order).
        """
        topo: list[Variable] = []
        visited: set[int] = set()

        def visit(v: Variable) -> None:
            if id(v) in visited:
                return
            visited.add(id(v))
            for parent, _ in v.parents:
                visit(parent)
            topo.append(v)

        visit(self)
        # print([round(v.value, 3) for v in topo])
        self.d = 1.0
        for v in reversed(topo):
            for parent, local in v.parents:
                parent.d = local * v.d
