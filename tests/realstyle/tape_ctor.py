"""Reverse-mode autodiff with a tape, like the lecture on Wengert lists.

Every Value is recorded on the tape it was created on, so backward() just walks
the tape from the end: no topological sort needed.
"""
import math


class Tape:
    def __init__(self):
        self.nodes = []


class Value:
    def __init__(self, tape, data, parents=(), op=""):
        self.tape = tape
        self.data = data
        self.grad = 0.0
        self._prev = tuple(parents)
        self._op = op
        self._backward = lambda: None
        tape.nodes.append(self)

    def _lift(self, other):
        return other if isinstance(other, Value) else Value(self.tape, other)

    def __add__(self, other):
        other = self._lift(other)
        out = Value(self.tape, self.data + other.data, (self, other), "+")

        def _backward():
            self.grad += out.grad
            other.grad += out.grad
        out._backward = _backward
        return out

    def __mul__(self, other):
        other = self._lift(other)
        out = Value(self.tape, self.data * other.data, (self, other), "*")

        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out._backward = _backward
        return out

    __radd__ = __add__
    __rmul__ = __mul__

    def __pow__(self, k):
        out = Value(self.tape, self.data ** k, (self,), "**")

        def _backward():
            self.grad += k * self.data ** (k - 1) * out.grad
        out._backward = _backward
        return out

    def tanh(self):
        t = math.tanh(self.data)
        out = Value(self.tape, t, (self,), "tanh")

        def _backward():
            self.grad += (1 - t * t) * out.grad
        out._backward = _backward
        return out

    def backward(self):
        self.grad = 1.0
        for node in reversed(self.tape.nodes[:self.tape.nodes.index(self) + 1]):
            node._backward()


def train_step(model, xs, ys, lr):
    loss = sum((model(x) - y) ** 2 for x, y in zip(xs, ys))
    model.zero_grad()
    loss.backward()
    for p in model.parameters():
        p.data -= lr * p.grad
    return loss.data
