"""Homework 1 (part 2): layers and a loss on top of the engine."""
import numpy as np

from .engine import Value


class Module:

    def zero_grad(self):
        for p in self.parameters():
            p.grad = 0

    def parameters(self):
        return []

    def __call__(self, *args):
        return self.forward(*args)


class Linear(Module):
    """Y = X @ W + b, for a batch X of shape (n, in_features)."""

    def __init__(self, in_features, out_features, bias=True):
        # W: (in_features, out_features) and b: (out_features,), numpy arrays of Values,
        # uniform in [-k, k] with k = 1 / sqrt(in_features)
        k = 1 / np.sqrt(in_features)
        self.W = np.array([[Value(np.random.uniform(-k, k)) for _ in range(out_features)]
                           for _ in range(in_features)], dtype=object)
        self.b = np.array([Value(np.random.uniform(-k, k)) if bias else Value(0.0)
                           for _ in range(out_features)], dtype=object)

    def forward(self, X):
        return X @ self.W + self.b

    def parameters(self):
        # every Value of W and b, in one flat list
        return list(self.W.flatten()) + list(self.b)


class ReLU(Module):

    def forward(self, X):
        return np.vectorize(lambda v: v.relu(), otypes=[object])(X)


class Sequential(Module):

    def __init__(self, *layers):
        self.layers = layers

    def forward(self, X):
        for layer in self.layers:
            X = layer(X)
        return X

    def parameters(self):
        return [p for layer in self.layers for p in layer.parameters()]


class CrossEntropyLoss(Module):
    """The mean over the batch of -log(softmax(logits)[target])."""

    def forward(self, logits, target):
        # logits: (n, classes) array of Values; target: n class indices
        losses = []
        for row, t in zip(logits, target):
            m = max(v.data for v in row)  # for numerical stability
            exps = [(v - m).exp() for v in row]
            total = sum(exps)
            losses.append(-(exps[t] / total).log())
        return sum(losses) / len(losses)
