import math


class Value:

    def __init__(self, data, label='', _op='', _prev=None):
        self.data = data
        self.grad = 0.0
        self.label = label
        self._op = _op
        self._prev = _prev  # None for a leaf
        self._backward = lambda: None

    def __repr__(self):
        return f"Value({self.label or '?'}: {self.data:.3f})"

    def __add__(self, other):
        if not isinstance(other, Value):
            other = Value(other, label=str(other))
        out = Value(self.data + other.data, _op='+', _prev=[self, other])

        def _backward():
            self.grad += out.grad
            other.grad += out.grad
        out._backward = _backward
        return out

    def __mul__(self, other):
        if not isinstance(other, Value):
            other = Value(other, label=str(other))
        out = Value(self.data * other.data, _op='*', _prev=[self, other])

        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out._backward = _backward
        return out

    def __pow__(self, n):
        out = Value(self.data ** n, _op=f'^{n}', _prev=[self])

        def _backward():
            self.grad += n * self.data ** (n - 1) * out.grad
        out._backward = _backward
        return out

    def tanh(self):
        t = math.tanh(self.data)
        out = Value(t, _op='tanh', _prev=[self])

        def _backward():
            self.grad += (1 - t ** 2) * out.grad
        out._backward = _backward
        return out

    def backward(self):
        topo = []
        visited = set()

        def build(v):
            if v in visited:
                return
            visited.add(v)
            if v._prev is not None:
                for child in v._prev:
                    build(child)
            topo.append(v)
        build(self)

        self.grad = 1.0
        for v in reversed(topo):
            v._backward()

    def __radd__(self, other):
        return self + other

    def __rmul__(self, other):
        return self * other

    def __neg__(self):
        return self * -1

    def __sub__(self, other):
        return self + (-other)


def train_step(model, xs, ys, lr):
    preds = [model(x) for x in xs]
    loss = sum((p - y) ** 2 for p, y in zip(preds, ys))
    model.zero_grad()
    loss.backward()
    for p in model.parameters():
        p.data -= lr * p.grad
    return loss.data
