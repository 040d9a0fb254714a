"""Homework 1, nn and optim parts, without numpy (my laptop's numpy is broken, lists do the job)."""
import math
import random


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
        k = 1 / math.sqrt(in_features)
        self.W = [[Value(random.uniform(-k, k)) for _ in range(out_features)] for _ in range(in_features)]
        self.b = [Value(random.uniform(-k, k) if bias else 0.0) for _ in range(out_features)]

    def forward(self, X):
        out = []
        for row in X:
            out.append([sum((row[i] * self.W[i][j] for i in range(len(row))), self.b[j])
                        for j in range(len(self.b))])
        return out

    def parameters(self):
        return [w for row in self.W for w in row] + self.b


class ReLU(Module):
    def forward(self, X):
        return [[v.relu() for v in row] for row in X]


class CrossEntropyLoss(Module):
    def forward(self, logits, target):
        total = 0
        for row, t in zip(logits, target):
            exps = [v.exp() for v in row]
            total = total + (sum(exps).log() - row[t])  # -log softmax = log(sum exp) - logit
        return total / len(target)


class SGD:
    def __init__(self, params, lr=0.01):
        self.params = list(params)
        self.lr = lr

    def step(self):
        for p in self.params:
            p.data = p.data - self.lr * p.grad

    def zero_grad(self):
        for p in self.params:
            p.grad = 0


def train_one_epoch(model, criterion, optimizer, X, y, batch_size=20):
    losses = []
    i = 0
    while i < len(X):
        optimizer.zero_grad()
        loss = criterion(model(X[i:i + batch_size]), y[i:i + batch_size])
        loss.backward()
        optimizer.step()
        losses.append(loss.data)
        i += batch_size
    return sum(losses) / len(losses)
