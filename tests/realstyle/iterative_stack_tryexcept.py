"""Scalar autograd, homework 3.

No recursion anywhere (I hit RecursionError on deep graphs with the recursive
version), so the topological sort uses an explicit stack.
"""
import math


class Value:
    def __init__(self, data, _children=(), _op=""):
        self.data = float(data)
        self.grad = 0.0
        self._backward = lambda: None
        self._prev = tuple(_children)
        self._op = _op

    @staticmethod
    def _wrap(x):
        try:
            x.data
        except AttributeError:
            return Value(x)
        return x

    def __add__(self, other):
        other = Value._wrap(other)
        out = Value(self.data + other.data, (self, other), "+")

        def _backward():
            self.grad += out.grad
            other.grad += out.grad

        out._backward = _backward
        return out

    __radd__ = __add__

    def __mul__(self, other):
        other = Value._wrap(other)
        out = Value(self.data * other.data, (self, other), "*")

        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad

        out._backward = _backward
        return out

    __rmul__ = __mul__

    def __pow__(self, n):
        out = Value(self.data**n, (self,), "pow")

        def _backward():
            if n == 2:
                self.grad += 2 * self.data * out.grad  # x*x is faster than x**2
            else:
                self.grad += n * self.data ** (n - 1) * out.grad

        out._backward = _backward
        return out

    def tanh(self):
        out = Value(math.tanh(self.data), (self,), "tanh")

        def _backward():
            self.grad += (1.0 - out.data * out.data) * out.grad

        out._backward = _backward
        return out

    def backward(self):
        # post-order DFS with an explicit stack: a node is emitted once all its inputs are
        order, done = [], set()
        stack = [(self, False)]
        while stack:
            node, expanded = stack.pop()
            if expanded:
                order.append(node)
                continue
            if id(node) in done:
                continue
            done.add(id(node))
            stack.append((node, True))
            for child in node._prev:
                if id(child) not in done:
                    stack.append((child, False))

        self.grad = 1.0
        for node in reversed(order):
            node._backward()


def train_step(model, xs, ys, lr):
    params = model.parameters()
    loss = Value(0.0)
    for x, y in zip(xs, ys):
        diff = model(x) - y
        loss = loss + diff * diff
    for p in params:
        p.grad = 0.0
    loss.backward()
    for p in params:
        p.data = p.data - lr * p.grad
    return loss.data
