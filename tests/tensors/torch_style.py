# hw1 bonus: a Tensor of Values that I call like torch.Tensor (dim=, reshape((2, 3))), numpy underneath
import math

import numpy as np


class Value:
    def __init__(self, data, _children=(), _op=''):
        self.data = data
        self.grad = 0
        self._backward = lambda: None
        self._prev = set(_children)
        self._op = _op

    def __repr__(self):
        return f"Value(data={self.data}, grad={self.grad})"

    def __add__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data + other.data, (self, other), '+')

        def _backward():
            self.grad += out.grad
            other.grad += out.grad
        out._backward = _backward
        return out

    def __radd__(self, other):
        return self + other

    def __mul__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data * other.data, (self, other), '*')

        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out._backward = _backward
        return out

    def __rmul__(self, other):
        return self * other

    def __pow__(self, k):
        out = Value(self.data ** k, (self,), f'**{k}')

        def _backward():
            self.grad += k * self.data ** (k - 1) * out.grad
        out._backward = _backward
        return out

    def __truediv__(self, other):
        return self * other ** -1

    def exp(self):
        out = Value(math.exp(self.data), (self,), 'exp')

        def _backward():
            self.grad += out.data * out.grad
        out._backward = _backward
        return out


class Tensor:
    """An object array of Values, called like a torch tensor with requires_grad."""

    def __init__(self, data):
        array = np.array(data, dtype=object)
        wrap = np.vectorize(lambda x: x if isinstance(x, Value) else Value(x), otypes=[object])
        self.data = wrap(array) if array.size else array

    @property
    def shape(self):
        return self.data.shape

    def __repr__(self):
        return f"Tensor({self.data})"

    @staticmethod
    def _raw(other):
        return other.data if isinstance(other, Tensor) else other

    def __radd__(self, other):
        return Tensor(self.data + self._raw(other))

    def __mul__(self, other):
        return Tensor(self.data * self._raw(other))  # numpy broadcasts, like torch

    def __rmul__(self, other):
        return self * other

    def __truediv__(self, other):
        return Tensor(self.data / self._raw(other))

    def exp(self):
        return Tensor(np.vectorize(lambda v: v.exp(), otypes=[object])(self.data))

    def dot(self, other):
        return Tensor(self.data.dot(self._raw(other)))

    def numbers(self):
        return np.vectorize(lambda v: v.data, otypes=[float])(self.data)

    def argmax(self, dim=None):
        # torch.argmax(x, dim=...)
        return self.numbers().argmax(axis=dim)

    def max(self, dim=None):
        if dim is None:
            return max(self.data.flat, key=lambda v: v.data)
        picks = np.expand_dims(self.argmax(dim), dim)
        out = np.take_along_axis(self.data, picks, dim).squeeze(dim)
        return Tensor(out) if out.ndim else out.item()

    def sum(self, dim=None):
        total = self.data.sum(axis=dim)
        return Tensor(total) if isinstance(total, np.ndarray) else total

    def reshape(self, shape):
        # torch style: x.reshape((3, 2))
        return Tensor(self.data.reshape(shape))


if __name__ == "__main__":
    x = Tensor([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]])
    print(x.max(dim=1), x.argmax(dim=0))
    print(x.reshape((3, 2)).shape)
    # print(x.reshape(3, 2))  # TypeError, torch would take this too
