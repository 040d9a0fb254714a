# Autograd for scalars, following the lecture but with my own names:
# every node keeps its derivative in .gradient (I find "grad" too short).
import math


class Value:
    def __init__(self, data, _children=(), _op=''):
        self.data = data
        self.gradient = 0.0
        self._backward = lambda: None
        self._prev = set(_children)
        self._op = _op

    def __repr__(self):
        return f"Value(data={self.data}, gradient={self.gradient})"

    def __add__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data + other.data, (self, other), '+')

        def _backward():
            self.gradient += out.gradient
            other.gradient += out.gradient
        out._backward = _backward
        return out

    def __mul__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data * other.data, (self, other), '*')

        def _backward():
            self.gradient += other.data * out.gradient
            other.gradient += self.data * out.gradient
        out._backward = _backward
        return out

    def __pow__(self, n):
        assert isinstance(n, (int, float))
        out = Value(self.data ** n, (self,), f'**{n}')

        def _backward():
            self.gradient += n * self.data ** (n - 1) * out.gradient
        out._backward = _backward
        return out

    def tanh(self):
        t = math.tanh(self.data)
        out = Value(t, (self,), 'tanh')

        def _backward():
            self.gradient += (1 - t * t) * out.gradient
        out._backward = _backward
        return out

    def backward(self):
        order = []
        seen = set()

        def visit(node):
            if node not in seen:
                seen.add(node)
                for child in node._prev:
                    visit(child)
                order.append(node)
        visit(self)

        self.gradient = 1.0
        for node in reversed(order):
            node._backward()

    def __neg__(self):
        return self * -1

    def __radd__(self, other):
        return self + other

    def __sub__(self, other):
        return self + (-other)

    def __rsub__(self, other):
        return other + (-self)

    def __rmul__(self, other):
        return self * other

    def __truediv__(self, other):
        return self * other ** -1


def train_step(model, xs, ys, lr):
    ypred = [model(x) for x in xs]
    loss = sum((yp - y) ** 2 for yp, y in zip(ypred, ys))
    for p in model.parameters():
        p.gradient = 0.0
    loss.backward()
    for p in model.parameters():
        p.data -= lr * p.gradient
    return loss.data
