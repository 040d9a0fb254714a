# Correct, written differently: __slots__, every operator spelled out, recursive
# topological sort with a list for visited nodes.
import math


class Value:
    __slots__ = ("data", "grad", "_backward", "_prev", "_op", "label")

    def __init__(self, data, _children=(), _op="", label=""):
        self.data = data
        self.grad = 0.0
        self._backward = lambda: None
        self._prev = set(_children)
        self._op = _op
        self.label = label

    def __add__(self, other):
        if not isinstance(other, Value):
            other = Value(other)
        result = Value(self.data + other.data, (self, other), "+")

        def grad_fn():
            self.grad += result.grad
            other.grad += result.grad

        result._backward = grad_fn
        return result

    def __radd__(self, other):
        return self.__add__(other)

    def __mul__(self, other):
        if not isinstance(other, Value):
            other = Value(other)
        result = Value(self.data * other.data, (self, other), "*")

        def grad_fn():
            self.grad += result.grad * other.data
            other.grad += result.grad * self.data

        result._backward = grad_fn
        return result

    def __rmul__(self, other):
        return self.__mul__(other)

    def __neg__(self):
        return self * -1

    def __sub__(self, other):
        return self + (-other)

    def __pow__(self, exponent):
        result = Value(math.pow(self.data, exponent), (self,), "**")

        def grad_fn():
            self.grad += result.grad * exponent * math.pow(self.data, exponent - 1)

        result._backward = grad_fn
        return result

    def tanh(self):
        t = math.tanh(self.data)
        result = Value(t, (self,), "tanh")

        def grad_fn():
            self.grad += result.grad * (1.0 - t) * (1.0 + t)

        result._backward = grad_fn
        return result

    def backward(self):
        ordered = []
        visited = []

        def visit(node):
            if any(node is seen for seen in visited):
                return
            visited.append(node)
            for child in node._prev:
                visit(child)
            ordered.append(node)

        visit(self)
        self.grad = 1.0
        for node in ordered[::-1]:
            node._backward()


def train_step(model, xs, ys, lr):
    predictions = [model(x) for x in xs]
    loss = sum([(p - y) ** 2 for p, y in zip(predictions, ys)])
    model.zero_grad()
    loss.backward()
    for parameter in model.parameters():
        parameter.data += -lr * parameter.grad
    return float(loss.data)
