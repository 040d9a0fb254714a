"""My micrograd: the engine, then the nn part with dataclasses (I like them better than __init__ boilerplate)."""
import math
import random
from dataclasses import dataclass, field
from functools import reduce


class Value:
    def __init__(self, data, _children=(), _op=""):
        self.data = data
        self.grad = 0.0
        self._backward = lambda: None
        self._prev = set(_children)
        self._op = _op

    def __add__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data + other.data, (self, other), "+")

        def _backward():
            self.grad += out.grad
            other.grad += out.grad
        out._backward = _backward
        return out

    def __mul__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data * other.data, (self, other), "*")

        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out._backward = _backward
        return out

    def relu(self):
        out = Value(max(0.0, self.data), (self,), "ReLU")

        def _backward():
            self.grad += (out.data > 0) * out.grad
        out._backward = _backward
        return out

    def tanh(self):
        t = math.tanh(self.data)
        out = Value(t, (self,), "tanh")

        def _backward():
            self.grad += (1 - t * t) * out.grad
        out._backward = _backward
        return out

    def __radd__(self, other):
        return self + other

    def __rmul__(self, other):
        return self * other

    def backward(self):
        order, seen = [], set()

        def visit(v):
            if v not in seen:
                seen.add(v)
                for c in v._prev:
                    visit(c)
                order.append(v)
        visit(self)
        self.grad = 1.0
        for v in reversed(order):
            v._backward()


class Module:
    def zero_grad(self):
        for p in self.parameters():
            p.grad = 0.0

    def parameters(self):
        yield from ()


@dataclass
class Neuron(Module):
    nin: int
    nonlin: bool = True
    w: list = field(init=False)
    b: Value = field(init=False)

    def __post_init__(self):
        self.w = [Value(random.uniform(-1, 1)) for _ in range(self.nin)]
        self.b = Value(0.0)

    def __call__(self, x):
        act = reduce(lambda acc, pair: acc + pair[0] * pair[1], zip(self.w, x), self.b)
        return act.relu() if self.nonlin else act

    def parameters(self):
        yield from self.w
        yield self.b


@dataclass
class Layer(Module):
    nin: int
    nout: int
    nonlin: bool = True
    neurons: list = field(init=False)

    def __post_init__(self):
        self.neurons = [Neuron(self.nin, self.nonlin) for _ in range(self.nout)]

    def __call__(self, x):
        outs = [n(x) for n in self.neurons]
        return outs[0] if len(outs) == 1 else outs

    def parameters(self):
        for n in self.neurons:
            yield from n.parameters()


@dataclass
class MLP(Module):
    nin: int
    nouts: list

    def __post_init__(self):
        sizes = [self.nin, *self.nouts]
        self.layers = [Layer(a, b, nonlin=k < len(self.nouts) - 1) for k, (a, b) in enumerate(zip(sizes, sizes[1:]))]

    def __call__(self, x):
        return reduce(lambda h, layer: layer(h), self.layers, x)

    def parameters(self):
        return (p for layer in self.layers for p in layer.parameters())


if __name__ == "__main__":
    print(MLP(3, [4, 4, 1])([2.0, 3.0, -1.0]))
