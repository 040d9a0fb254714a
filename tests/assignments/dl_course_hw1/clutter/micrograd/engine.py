"""Homework 1 (part 1): an autograd engine for scalars, then a tensor made of them.

Write the code wherever it says YOUR CODE HERE. Leave the rest as it is: the tests in
micrograd/test/ and the notebook rely on it.
"""
import numpy as np


class Value:
    """Stores a single scalar value and its gradient."""

    def __init__(self, data, _children=(), _op=''):
        self.data = data
        self.grad = 0
        # used to build the autograd graph
        self._backward = lambda: None
        self._prev = set(_children)
        self._op = _op  # the op that produced this node, for debugging

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

    def __pow__(self, other):
        assert isinstance(other, (int, float)), "only int/float powers are supported"
        out = Value(self.data**other, (self,), f'**{other}')

        def _backward():
            self.grad += other * self.data**(other - 1) * out.grad
        out._backward = _backward

        return out

    def exp(self):
        e = np.exp(self.data)
        res = Value(e, (self,), 'exp')

        def _backward():
            self.grad += e * res.grad
        res._backward = _backward
        return res

    def log(self):
        out = Value(np.log(self.data), (self,), 'log')

        def _backward():
            self.grad += out.grad / self.data
        out._backward = _backward

        return out

    def relu(self):
        out = Value(0 if self.data < 0 else self.data, (self,), 'ReLU')

        def _backward():
            self.grad += (out.data > 0) * out.grad
        out._backward = _backward

        return out

    def backward(self):
        # topological order of every node in the graph
        topo = []
        visited = set()

        def build_topo(v):
            if v not in visited:
                visited.add(v)
                for child in v._prev:
                    build_topo(child)
                topo.append(v)
        build_topo(self)

        # one node at a time, apply the chain rule
        self.grad = 1
        for v in reversed(topo):
            v._backward()

    def __neg__(self):  # -self
        return self * -1

    def __radd__(self, other):  # other + self
        return self + other

    def __sub__(self, other):  # self - other
        return self + (-other)

    def __rsub__(self, other):  # other - self
        return other + (-self)

    def __rmul__(self, other):  # other * self
        return self * other

    def __truediv__(self, other):  # self / other
        return self * other**-1

    def __rtruediv__(self, other):  # other / self
        return other * self**-1

    def __repr__(self):
        return f"Value(data={self.data}, grad={self.grad})"


def _as_value(x):
    return x if isinstance(x, Value) else Value(x)


class Tensor:
    """A numpy array whose entries are Values, so a whole batch goes through the engine at once.

    Needed only for the MNIST part of the notebook.
    """

    def __init__(self, data):
        array = np.array(data, dtype=object)
        self.data = np.vectorize(_as_value, otypes=[object])(array) if array.size else array

    @property
    def shape(self):
        return self.data.shape

    def __getitem__(self, index):
        item = self.data[index]
        return Tensor(item) if isinstance(item, np.ndarray) else item

    def __add__(self, other):
        other = other.data if isinstance(other, Tensor) else other
        return Tensor(self.data + other)

    def sum(self, axis=None):
        total = self.data.sum(axis=axis)
        return Tensor(total) if isinstance(total, np.ndarray) else total

    def numpy(self):
        return np.vectorize(lambda v: v.data, otypes=[float])(self.data)

    def parameters(self):
        return list(self.data.flat)

    def __repr__(self):
        return f"Tensor({self.numpy()!r})"

    # ------------------------------------------------------------------
    # YOUR CODE HERE: the operations below, each returning a new Tensor
    # (except max/argmax without an axis)
    # ------------------------------------------------------------------

    def __radd__(self, other):
        return self.__add__(other)

    def __mul__(self, other):
        if isinstance(other, Tensor):
            other = other.data
        return Tensor(self.data * other)

    def __rmul__(self, other):
        return self.__mul__(other)

    def __truediv__(self, other):
        if isinstance(other, Tensor):
            other = other.data
        return Tensor(self.data / other)

    def exp(self):
        out = np.empty_like(self.data)
        for idx, v in np.ndenumerate(self.data):
            out[idx] = v.exp()
        return Tensor(out)

    def dot(self, other):
        if isinstance(other, Tensor):
            other = other.data
        return Tensor(np.dot(self.data, other))

    def max(self, axis=None):
        if axis is None:
            return self.data.flat[self.argmax()]
        picked = np.take_along_axis(self.data, np.expand_dims(self.argmax(axis=axis), axis=axis), axis=axis)
        return Tensor(np.squeeze(picked, axis=axis))

    def argmax(self, axis=None):
        vals = np.vectorize(lambda v: v.data)(self.data)
        return np.argmax(vals, axis=axis)

    def reshape(self, *shape):
        return Tensor(np.reshape(self.data, shape))
