"""micrograd with exact fractions: no rounding anywhere except in tanh."""
import math
from fractions import Fraction


class Value:
    def __init__(self, data, _children=(), _op=''):
        self.data = data if isinstance(data, Fraction) else Fraction(data)
        self.grad = Fraction(0)
        self._backward = lambda: None
        self._prev = set(_children)
        self._op = _op

    def __repr__(self):
        return f"Value({self.data}, grad={self.grad})"

    def __add__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data + other.data, (self, other), '+')
        def _backward():
            self.grad += out.grad
            other.grad += out.grad
        out._backward = _backward
        return out

    def __mul__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data * other.data, (self, other), '*')
        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out._backward = _backward
        return out

    def __pow__(self, k):
        exponent = Fraction(k)
        if exponent.denominator == 1:
            result = self.data ** exponent.numerator
        else:
            result = Fraction(float(self.data) ** float(exponent))
        out = Value(result, (self,), f'**{k}')
        def _backward():
            if exponent.denominator == 1:
                local = exponent * self.data ** (exponent.numerator - 1)
            else:
                local = Fraction(float(exponent) * float(self.data) ** float(exponent - 1))
            self.grad += local * out.grad
        out._backward = _backward
        return out

    def tanh(self):
        t = Fraction(math.tanh(self.data))
        out = Value(t, (self,), 'tanh')
        def _backward():
            self.grad += (1 - t * t) * out.grad
        out._backward = _backward
        return out

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

    def __rtruediv__(self, other):
        return other * self ** -1

    def backward(self):
        topo, seen = [], set()

        def visit(v):
            if v not in seen:
                seen.add(v)
                for c in v._prev:
                    visit(c)
                topo.append(v)
        visit(self)
        self.grad = Fraction(1)
        for v in reversed(topo):
            v._backward()


def train_step(model, xs, ys, lr):
    loss = sum((model(x) - y) ** 2 for x, y in zip(xs, ys))
    model.zero_grad()
    loss.backward()
    for p in model.parameters():
        p.data -= lr * p.grad
    return loss.data
