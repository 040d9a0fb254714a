"""mylib.nn: neurons, layers and MLPs that take one example (a list of numbers) at a time."""
from __future__ import annotations

import random
from dataclasses import dataclass

from .engine import Node


@dataclass(eq=False)
class Parameter(Node):
    """A Node an optimizer may change: a weight or a bias. `name` is only for printing."""

    name: str = ""


class Module:
    def parameters(self) -> list[Parameter]:
        return []

    def zero_grad(self) -> None:
        for p in self.parameters():
            p.grad = 0.0


class Neuron(Module):
    def __init__(self, n_inputs: int, nonlinear: bool = True):
        self.w = [Parameter(random.uniform(-1, 1), name=f"w{i}") for i in range(n_inputs)]
        self.b = Parameter(0.0, name="b")
        self.nonlinear = nonlinear

    def __call__(self, x: list) -> Node:
        act = sum((wi * xi for wi, xi in zip(self.w, x)), self.b)
        if self.nonlinear:
            act = act.tanh()
        return act

    def parameters(self) -> list[Parameter]:
        return self.w + [self.b]


class Layer(Module):
    def __init__(self, n_inputs: int, n_outputs: int, nonlinear: bool = True):
        self.neurons = [Neuron(n_inputs, nonlinear) for _ in range(n_outputs)]

    def __call__(self, x: list):
        outs = []
        for n in self.neurons:
            outs.append(n(x))
        if len(outs) == 1:
            return outs[0]
        return outs

    def parameters(self) -> list[Parameter]:
        params = []
        for n in self.neurons:
            params.extend(n.parameters())
        return params


class MLP(Module):
    def __init__(self, n_inputs: int, layer_sizes: list[int]):
        sizes = [n_inputs, *layer_sizes]
        last = len(layer_sizes) - 1
        self.layers = [Layer(sizes[i], sizes[i + 1], nonlinear=i != last) for i in range(len(layer_sizes))]

    def __call__(self, x: list):
        out = x
        for layer in self.layers:
            out = layer(out)
        return out

    def parameters(self) -> list[Parameter]:
        params = []
        for layer in self.layers:
            params += layer.parameters()
        return params
