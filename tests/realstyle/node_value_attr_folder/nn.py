import random

from engine import Node


class Neuron:
    def __init__(self, n_in):
        self.weights = [Node(random.gauss(0, 1)) for _ in range(n_in)]
        self.bias = Node(0.0)

    def __call__(self, xs):
        return sum((w * x for w, x in zip(self.weights, xs)), self.bias).tanh()

    def parameters(self):
        return self.weights + [self.bias]


class MLP:
    def __init__(self, n_in, sizes):
        dims = [n_in] + sizes
        self.layers = [[Neuron(dims[i]) for _ in range(dims[i + 1])] for i in range(len(sizes))]

    def __call__(self, xs):
        for layer in self.layers:
            xs = [neuron(xs) for neuron in layer]
        return xs[0] if len(xs) == 1 else xs

    def parameters(self):
        return [p for layer in self.layers for neuron in layer for p in neuron.parameters()]

    def zero_grad(self):
        for p in self.parameters():
            p.gradient = 0.0


def train_step(model, xs, ys, lr):
    predictions = [model(x) for x in xs]
    loss = sum((pred - y) ** 2 for pred, y in zip(predictions, ys))
    model.zero_grad()
    loss.backward()
    for p in model.parameters():
        p.value -= lr * p.gradient
    return loss.value
