"""Reverse-mode autodiff on scalars (assignment 2, part A).

I call the number `val` and the derivative `grad`, like in our lecture notes.
"""
import math


class Scalar:
    def __init__(self, val, parents=(), op=None):
        self.val = val
        self.grad = 0.0
        self.parents = list(parents)
        self.op = op
        self._backward = lambda: None

    def __repr__(self):
        return f"Scalar(val={self.val:.4f}, grad={self.grad:.4f})"

    @staticmethod
    def lift(x):
        return x if isinstance(x, Scalar) else Scalar(x)

    def __add__(self, other):
        other = Scalar.lift(other)
        out = Scalar(self.val + other.val, (self, other), "add")

        def _backward():
            self.grad += out.grad
            other.grad += out.grad
        out._backward = _backward
        return out

    __radd__ = __add__

    def __mul__(self, other):
        other = Scalar.lift(other)
        out = Scalar(self.val * other.val, (self, other), "mul")

        def _backward():
            self.grad += other.val * out.grad
            other.grad += self.val * out.grad
        out._backward = _backward
        return out

    __rmul__ = __mul__

    def __pow__(self, p):
        out = Scalar(self.val ** p, (self,), "pow")

        def _backward():
            self.grad += p * self.val ** (p - 1) * out.grad
        out._backward = _backward
        return out

    def tanh(self):
        t = math.tanh(self.val)
        out = Scalar(t, (self,), "tanh")

        def _backward():
            self.grad += (1.0 - t * t) * out.grad
        out._backward = _backward
        return out

    def backward(self):
        order, seen = [], set()

        def visit(node):
            if node in seen:
                return
            seen.add(node)
            for parent in node.parents:
                visit(parent)
            order.append(node)

        visit(self)
        self.grad = 1.0
        for node in order[::-1]:
            node._backward()
