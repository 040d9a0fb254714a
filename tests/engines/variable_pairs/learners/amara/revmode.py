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
from collections import deque


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
        o = Variable.lift(other)
        out = Variable(self.value + o.value)
        out.parents = [(self, 1.0), (o, 1.0)]
        return out

    def __radd__(self, other) -> Variable:
        return self + other

    def __mul__(self, other) -> Variable:
        o = Variable.lift(other)
        out = Variable(self.value * o.value)
        out.parents = [(self, o.value), (o, self.value)]
        return out

    def __rmul__(self, other) -> Variable:
        return self * other

    def __sub__(self, other) -> Variable:
        return self + (-1.0) * Variable.lift(other)

    def __rsub__(self, other) -> Variable:
        return Variable.lift(other) - self

    def __pow__(self, k: float) -> Variable:
        """self ** k for a plain number k."""
        out = Variable(self.value ** k)
        out.parents = [(self, k * self.value ** (k - 1))]
        return out

    def sin(self) -> Variable:
        out = Variable(math.sin(self.value))
        out.parents = [(self, math.cos(self.value))]
        return out

    def cos(self) -> Variable:
        out = Variable(math.cos(self.value))
        out.parents = [(self, -math.sin(self.value))]
        return out

    def exp(self) -> Variable:
        out = Variable(math.exp(self.value))
        out.parents = [(self, out.value)]
        return out

    # LAB: the backward pass
    def backward(self) -> None:
        """Set self.d = 1 and push adjoints to every Variable self depends on.

        Visit a Variable only once all the Variables computed from it have pushed
        their share into its adjoint (reverse topological order).
        """
        # Kahn: count how many results use each Variable, then release a Variable
        # once every one of its users has pushed into it.
        users = {}
        seen = {id(self)}
        todo = [self]
        while todo:
            v = todo.pop()
            for p, _ in v.parents:
                users[id(p)] = users.get(id(p), 0) + 1
                if id(p) not in seen:
                    seen.add(id(p))
                    todo.append(p)
        self.d = 1.0
        ready = deque([self])
        while ready:
            v = ready.popleft()
            for p, local in v.parents:
                p.d += local * v.d
                users[id(p)] -= 1
                if users[id(p)] == 0:
                    ready.append(p)
