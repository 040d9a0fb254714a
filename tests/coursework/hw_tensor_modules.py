# hw1 part 2 with the course's Tensor: every layer takes and returns a Tensor, as the notebook calls them
import math
import random

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

    def log(self):
        out = Value(math.log(self.data), (self,), 'log')

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
        topo, visited = [], set()

        def build_topo(v):
            if v not in visited:
                visited.add(v)
                for child in v._prev:
                    build_topo(child)
                topo.append(v)
        build_topo(self)
        self.grad = 1
        for v in reversed(topo):
            v._backward()

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


class Tensor:
    """The course's Tensor: a numpy array of Values (numbers are made Values)."""

    def __init__(self, data):
        array = np.array(data, dtype=object)
        self.data = np.vectorize(lambda x: x if isinstance(x, Value) else Value(x), otypes=[object])(array)

    @property
    def shape(self):
        return self.data.shape

    def __getitem__(self, index):
        item = self.data[index]
        return Tensor(item) if isinstance(item, np.ndarray) else item

    def __len__(self):
        return len(self.data)

    def __repr__(self):
        return f"Tensor({np.vectorize(lambda v: v.data, otypes=[float])(self.data)!r})"


class Module:
    def zero_grad(self):
        for p in self.parameters():
            p.grad = 0

    def parameters(self):
        return []

    def __call__(self, *args):
        return self.forward(*args)


class Linear(Module):
    def __init__(self, in_features, out_features, bias=True):
        k = 1 / math.sqrt(in_features)
        self.W = np.array([[Value(random.uniform(-k, k)) for _ in range(out_features)]
                           for _ in range(in_features)], dtype=object)
        self.b = np.array([Value(random.uniform(-k, k) if bias else 0.0) for _ in range(out_features)],
                          dtype=object)

    def forward(self, X):
        # X is a Tensor (the notebook wraps every batch: Tensor(X_train[i:j]))
        return Tensor(X.data @ self.W + self.b)

    def parameters(self):
        return [*self.W.ravel(), *self.b]


class ReLU(Module):
    def forward(self, X):
        return Tensor(np.vectorize(lambda v: v.relu(), otypes=[object])(X.data))


class CrossEntropyLoss(Module):
    def forward(self, logits, target):
        # logits: Tensor of shape (n, classes); target: array of class indices
        n = len(target)
        loss = Value(0.0)
        for i in range(n):
            row = logits.data[i]
            m = max(v.data for v in row)
            exps = [(v - m).exp() for v in row]
            loss = loss - (exps[target[i]] / sum(exps)).log()
        return loss / n


if __name__ == "__main__":
    layer = Linear(3, 2)
    out = ReLU()(layer(Tensor([[1.0, 2.0, -1.0]])))
    print(out, CrossEntropyLoss()(out, np.array([1])))
    # layer(np.array([[1.0, 2.0, -1.0]]))  -> AttributeError: 'numpy.ndarray' object has no attribute 'data'
