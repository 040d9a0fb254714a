"""HW1 part 1: my autograd engine. Tensor is a numpy array subclass, so most ops come for free."""
import math

import numpy as np


class Value:
    def __init__(self, data, _children=(), _op=''):
        self.data = data
        self.grad = 0
        self._backward = lambda: None
        self._prev = set(_children)
        self._op = _op

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
        out = Value(self.data ** k, (self,), f'**{k}')

        def _backward():
            self.grad += k * self.data ** (k - 1) * out.grad
        out._backward = _backward
        return out

    def exp(self):
        out = Value(math.exp(self.data), (self,), 'exp')

        def _backward():
            self.grad += out.data * out.grad
        out._backward = _backward
        return out

    def backward(self):
        topo, seen = [], set()

        def build(v):
            if v not in seen:
                seen.add(v)
                for child in v._prev:
                    build(child)
                topo.append(v)
        build(self)
        self.grad = 1
        for v in reversed(topo):
            v._backward()

    def __neg__(self):
        return self * -1

    def __radd__(self, other):
        return self + other

    def __sub__(self, other):
        return self + (-other)

    def __rmul__(self, other):
        return self * other

    def __truediv__(self, other):
        return self * other ** -1

    def __rtruediv__(self, other):
        return other * self ** -1

    def __repr__(self):
        return f"Value({self.data:.4f}, grad={self.grad:.4f})"


class Tensor(np.ndarray):
    """An ndarray of Values. + - * / @ and reshape are numpy's own, on dtype=object they call Value's ops."""

    def __new__(cls, data):
        array = np.empty(np.shape(data), dtype=object)
        for index in np.ndindex(array.shape):
            x = data
            for i in index:
                x = x[i]
            array[index] = x if isinstance(x, Value) else Value(x)
        return array.view(cls)

    def values(self):
        return np.vectorize(lambda v: v.data, otypes=[float])(self)

    def exp(self):
        return np.vectorize(lambda v: v.exp(), otypes=[object])(self).view(Tensor)

    def max(self, axis=None):
        picks = self.argmax(axis)
        if axis is None:
            return self.flat[picks]
        return np.take_along_axis(self, np.expand_dims(picks, axis), axis).squeeze(axis)

    def argmax(self, axis=None):
        return np.argmax(self.values(), axis=axis)


if __name__ == "__main__":
    x = Tensor([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]])
    y = sum((x * x).flat)
    y.backward()
    print(y, x.max(axis=1), x.argmax(axis=1))
