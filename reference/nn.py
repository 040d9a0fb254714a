"""A small multi-layer perceptron built on the reference engine, and what a training loop uses with it.

Neurons apply ``tanh`` by default (the lecture's); a course that uses ``relu``
(micrograd's own ``nn.py``) or ``sigmoid`` says so with ``activation``. The
model, the losses and the optimizer below are also what a training function is
graded with: shipped on top of the training engine, they run on its ``Value``.
"""

import random

from reference.engine import Value

ACTIVATIONS = ("tanh", "relu", "sigmoid")


class Module:
    """Anything with parameters: knows how to reset their gradients."""

    def zero_grad(self):
        for p in self.parameters():
            p.grad = 0.0

    def parameters(self):
        return []


class Neuron(Module):
    def __init__(self, nin, nonlin=True, activation="tanh"):
        self.w = [Value(random.uniform(-1, 1)) for _ in range(nin)]
        self.b = Value(0.0)
        self.nonlin = nonlin
        self.activation = activation

    def __call__(self, x):
        act = sum((wi * xi for wi, xi in zip(self.w, x)), self.b)
        return getattr(act, self.activation)() if self.nonlin else act

    def parameters(self):
        return self.w + [self.b]

    def __repr__(self):
        return f"{self.activation.capitalize() if self.nonlin else 'Linear'}Neuron({len(self.w)})"


class Layer(Module):
    def __init__(self, nin, nout, **kwargs):
        self.neurons = [Neuron(nin, **kwargs) for _ in range(nout)]

    def __call__(self, x):
        out = [n(x) for n in self.neurons]
        return out[0] if len(out) == 1 else out

    def parameters(self):
        return [p for n in self.neurons for p in n.parameters()]

    def __repr__(self):
        return f"Layer of [{', '.join(str(n) for n in self.neurons)}]"


class MLP(Module):
    """Nonlinear hidden layers and a linear output layer; one output gives a ``Value``."""

    def __init__(self, nin, nouts, activation="tanh"):
        sz = [nin] + nouts
        self.layers = [
            Layer(sz[i], sz[i + 1], nonlin=i != len(nouts) - 1, activation=activation) for i in range(len(nouts))
        ]

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x

    def parameters(self):
        return [p for layer in self.layers for p in layer.parameters()]

    def __repr__(self):
        return f"MLP of [{', '.join(str(layer) for layer in self.layers)}]"


def is_batch(x):
    """Whether ``x`` is a batch of examples (rows), not one example (a row of numbers)."""
    return len(x) > 0 and hasattr(x[0], "__len__")


class Model(MLP):
    """The MLP, called on one example (``model(x)``) or on a batch of them (``model(X)``: one output per row)."""

    def __call__(self, x):
        if is_batch(x):
            return [MLP.__call__(self, [float(v) for v in row]) for row in x]
        return MLP.__call__(self, [float(v) for v in x])


def sum_of_squares(outputs, targets):
    return sum(((out - float(y)) ** 2 for out, y in zip(outputs, targets)), Value(0.0))


def mean_squared_error(outputs, targets):
    return sum_of_squares(outputs, targets) * (1.0 / len(targets))


def hinge(outputs, targets):
    """The mean of ``relu(1 - y * score)`` over the batch (micrograd's demo; its targets are 1 and -1)."""
    return sum(((1 + -float(y) * out).relu() for out, y in zip(outputs, targets)), Value(0.0)) * (1.0 / len(targets))


def cross_entropy(outputs, targets):
    """The mean over the batch of ``-log softmax(logits)[target]``, the largest logit taken off first."""
    total = Value(0.0)
    for logits, t in zip(outputs, targets):
        top = max(v.data for v in logits)
        exps = [(v - top).exp() for v in logits]
        total = total - (exps[int(t)] / sum(exps[1:], exps[0])).log()
    return total * (1.0 / len(targets))


LOSSES = {"sum-of-squares": sum_of_squares, "mse": mean_squared_error, "hinge": hinge,
          "cross-entropy": cross_entropy}


class Loss:
    """A criterion object: ``criterion(outputs, targets)`` for a batch, or for one example and its target."""

    def __init__(self, kind):
        self.kind = kind

    def __call__(self, outputs, targets):
        if not hasattr(targets, "__len__"):
            outputs, targets = [outputs], [targets]
        return LOSSES[self.kind](list(outputs), list(targets))


class SGD:
    """Plain gradient descent over the parameters it is given."""

    def __init__(self, params, lr=0.01):
        self.params = list(params)
        self.lr = lr

    def step(self):
        for p in self.params:
            p.data -= self.lr * p.grad

    def zero_grad(self):
        for p in self.params:
            p.grad = 0.0
