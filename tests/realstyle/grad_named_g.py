"""Tiny reverse-mode autodiff (notes from the CS lecture: x.v is the value, x.g the adjoint)."""
import math


class Value:

    def __init__(self, data, _children=(), _op=''):
        self.data = data
        self.g = 0.0          # adjoint d(output)/d(self)
        self._prev = tuple(_children)
        self._op = _op
        self._backward = lambda: None

    def __repr__(self):
        return 'Value(%g, g=%g)' % (self.data, self.g)

    def __add__(self, other):
        if not isinstance(other, Value):
            other = Value(other)
        out = Value(self.data + other.data, (self, other), '+')
        def _backward():
            self.g += out.g
            other.g += out.g
        out._backward = _backward
        return out

    __radd__ = __add__

    def __mul__(self, other):
        if not isinstance(other, Value):
            other = Value(other)
        out = Value(self.data * other.data, (self, other), '*')
        def _backward():
            self.g += other.data * out.g
            other.g += self.data * out.g
        out._backward = _backward
        return out

    __rmul__ = __mul__

    def __pow__(self, p):
        out = Value(self.data ** p, (self,), 'pow')
        def _backward():
            self.g += p * self.data ** (p - 1) * out.g
        out._backward = _backward
        return out

    def tanh(self):
        e = math.exp(2 * self.data)
        y = (e - 1) / (e + 1)
        out = Value(y, (self,), 'tanh')
        def _backward():
            self.g += (1 - y ** 2) * out.g
        out._backward = _backward
        return out

    def __neg__(self):
        return self * -1

    def __sub__(self, other):
        return self + (-other)

    def backward(self):
        # topological order, then chain rule from the output back
        topo, done = [], set()
        def build(v):
            if v in done:
                return
            done.add(v)
            for u in v._prev:
                build(u)
            topo.append(v)
        build(self)
        self.g = 1.0
        for v in topo[::-1]:
            v._backward()


def train_step(model, xs, ys, lr):
    out = [model(x) for x in xs]
    loss = sum((o - y) ** 2 for o, y in zip(out, ys))
    for p in model.parameters():
        p.g = 0.0
    loss.backward()
    for p in model.parameters():
        p.data += -lr * p.g
    return loss.data
