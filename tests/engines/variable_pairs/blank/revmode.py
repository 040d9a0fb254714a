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
        # LAB: the sum, and d(a + b)/da, d(a + b)/db
        raise NotImplementedError

    def __radd__(self, other) -> Variable:
        return self + other

    def __mul__(self, other) -> Variable:
        # LAB: the product, and its two local derivatives
        raise NotImplementedError

    def __rmul__(self, other) -> Variable:
        return self * other

    def __sub__(self, other) -> Variable:
        # LAB: the difference, and its two local derivatives
        raise NotImplementedError

    def __rsub__(self, other) -> Variable:
        return Variable.lift(other) - self

    def __pow__(self, k: float) -> Variable:
        """self ** k for a plain number k."""
        # LAB: the power rule
        raise NotImplementedError

    def sin(self) -> Variable:
        # LAB: sin, and its derivative
        raise NotImplementedError

    def cos(self) -> Variable:
        # LAB: cos, and its derivative
        raise NotImplementedError

    def exp(self) -> Variable:
        # LAB: exp, and its derivative
        raise NotImplementedError

    # LAB: the backward pass
    def backward(self) -> None:
        """Set self.d = 1 and push adjoints to every Variable self depends on.

        Visit a Variable only once all the Variables computed from it have pushed
        their share into its adjoint (reverse topological order).
        """
        # LAB: a topological order first, then the adjoints
        raise NotImplementedError
