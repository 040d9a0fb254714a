# Correct, written differently: every op goes through one helper that attaches the
# local derivatives; the exercise's reflected operators; training with zero_grad.
import math


class Value:
    def __init__(self, data, _children=(), _op="", label=""):
        self.data = data
        self.grad = 0.0
        self._backward = lambda: None
        self._prev = set(_children)
        self._op = _op
        self.label = label

    def _result(self, data, operands, op, local_grads):
        out = Value(data, operands, op)

        def _backward():
            for operand, local in zip(operands, local_grads):
                operand.grad += local * out.grad

        out._backward = _backward
        return out

    def __add__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        return self._result(self.data + other.data, (self, other), "+", (1.0, 1.0))

    def __mul__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        return self._result(self.data * other.data, (self, other), "*", (other.data, self.data))

    def __pow__(self, n):
        return self._result(self.data**n, (self,), f"**{n}", (n * self.data ** (n - 1),))

    def tanh(self):
        t = math.tanh(self.data)
        return self._result(t, (self,), "tanh", (1 - t * t,))

    def backward(self):
        topo, visited = [], set()

        def build(v):
            if id(v) in visited:
                return
            visited.add(id(v))
            for child in v._prev:
                build(child)
            topo.append(v)

        build(self)
        self.grad = 1.0
        for v in topo[::-1]:
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


def train_step(model, xs, ys, lr):
    model.zero_grad()
    loss = sum(((model(x) - y) ** 2 for x, y in zip(xs, ys)), 0.0)
    loss.backward()
    for p in model.parameters():
        p.data -= lr * p.grad
    return loss.data
