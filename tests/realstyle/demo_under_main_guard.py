import math


class Value:
    def __init__(self, data, _children=(), _op=''):
        self.data = data
        self.grad = 0.0
        self._backward = lambda: None
        self._prev = set(_children)
        self._op = _op

    def __repr__(self):
        return f"Value(data={self.data:.4f}, grad={self.grad:.4f})"

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
        assert isinstance(k, (int, float))
        out = Value(self.data ** k, (self,), f'**{k}')

        def _backward():
            self.grad += k * self.data ** (k - 1) * out.grad
        out._backward = _backward
        return out

    def tanh(self):
        t = math.tanh(self.data)
        out = Value(t, (self,), 'tanh')

        def _backward():
            self.grad += (1 - t ** 2) * out.grad
        out._backward = _backward
        return out

    def backward(self):
        topo = []
        visited = set()

        def build(v):
            if v not in visited:
                visited.add(v)
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


if __name__ == "__main__":
    import random

    class Neuron:
        def __init__(self, nin):
            self.w = [Value(random.uniform(-1, 1)) for _ in range(nin)]
            self.b = Value(0.0)

        def __call__(self, x):
            return sum((wi * xi for wi, xi in zip(self.w, x)), self.b).tanh()

        def parameters(self):
            return self.w + [self.b]

        def zero_grad(self):
            for p in self.parameters():
                p.grad = 0.0

    neuron = Neuron(3)
    xs = [[random.uniform(-1, 1) for _ in range(3)] for _ in range(50)]
    ys = [1.0 if sum(x) > 0 else -1.0 for x in xs]
    for step in range(20000):
        loss = train_step(neuron, xs, ys, 0.01)
        if step % 1000 == 0:
            print(f"step {step}: loss {loss:.4f}")
