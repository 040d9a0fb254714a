"""hw1: engine + nn + optim in one file (numpy for the layers)"""
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
        # stored (out, in) like torch does, so forward uses W.T
        k = 1 / math.sqrt(in_features)
        self.W = np.array([[Value(random.uniform(-k, k)) for _ in range(in_features)]
                           for _ in range(out_features)], dtype=object)
        self.b = np.array([Value(random.uniform(-k, k) if bias else 0.0) for _ in range(out_features)],
                          dtype=object)

    def forward(self, X):
        return X @ self.W.T + self.b

    def parameters(self):
        return [*self.b, *self.W.ravel()]


class ReLU(Module):
    def forward(self, X):
        return np.vectorize(lambda v: v.relu(), otypes=[object])(X)


class CrossEntropyLoss(Module):
    def forward(self, logits, target):
        n = len(target)
        loss = Value(0.0)
        for i in range(n):
            row = logits[i]
            m = max(v.data for v in row)
            exps = [(v - m).exp() for v in row]
            loss = loss - (exps[target[i]] / sum(exps)).log()
        return loss / n


class SGD:
    def __init__(self, params, lr=0.01):
        self.params = list(params)
        self.lr = lr

    def step(self):
        for p in self.params:
            p.data -= self.lr * p.grad

    def zero_grad(self):
        for p in self.params:
            p.grad = 0


def train_one_epoch(model, criterion, optimizer, X, y, batch_size=20):
    idx = np.random.permutation(len(X))
    losses = []
    for batch in np.array_split(idx, max(1, len(X) // batch_size)):
        optimizer.zero_grad()
        loss = criterion(model(X[batch]), y[batch])
        loss.backward()
        optimizer.step()
        losses.append(loss.data)
    return float(np.mean(losses))
