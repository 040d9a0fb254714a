# micrograd, my own take: operands get lifted by a decorator, backward uses
# Kahn's algorithm (count the users of every node, release a node when all of
# its users have pushed their gradient into it).
import functools
import math
from collections import deque


def lifts_operand(method):
    """let the other operand be a plain number"""
    @functools.wraps(method)
    def wrapper(self, other):
        if not isinstance(other, Value):
            other = Value(other)
        return method(self, other)
    return wrapper


class Value:
    def __init__(self, data, _children=(), _op=""):
        self.data = data
        self.grad = 0
        self._backward = lambda: None
        self._prev = list(_children)
        self._op = _op

    @lifts_operand
    def __add__(self, other):
        out = Value(self.data + other.data, [self, other], "+")

        def _backward():
            self.grad += out.grad
            other.grad += out.grad
        out._backward = _backward
        return out

    @lifts_operand
    def __mul__(self, other):
        out = Value(self.data * other.data, [self, other], "*")

        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out._backward = _backward
        return out

    def __radd__(self, other):
        return self + other

    def __rmul__(self, other):
        return self * other

    def __sub__(self, other):
        return self + (-1) * other

    def __pow__(self, p):
        out = Value(self.data ** p, [self], f"^{p}")

        def _backward():
            self.grad += p * self.data ** (p - 1) * out.grad
        out._backward = _backward
        return out

    def tanh(self):
        e2x = math.exp(2 * self.data) if self.data < 20 else math.inf
        t = 1.0 if e2x == math.inf else (e2x - 1) / (e2x + 1)
        out = Value(t, [self], "tanh")

        def _backward():
            self.grad += (1 - t * t) * out.grad
        out._backward = _backward
        return out

    def backward(self):
        users = {}  # id(node) -> how many nodes use it
        seen = {id(self)}
        todo = [self]
        while todo:
            node = todo.pop()
            for c in node._prev:
                users[id(c)] = users.get(id(c), 0) + 1
                if id(c) not in seen:
                    seen.add(id(c))
                    todo.append(c)

        self.grad = 1
        ready = deque([self])
        while ready:
            node = ready.popleft()
            node._backward()
            for c in node._prev:
                users[id(c)] -= 1
                if users[id(c)] == 0:
                    ready.append(c)


def train_step(model, xs, ys, lr):
    loss = sum(((model(x) - y) ** 2 for x, y in zip(xs, ys)), Value(0))
    model.zero_grad()
    loss.backward()
    for p in model.parameters():
        p.data -= lr * p.grad
    return loss.data
