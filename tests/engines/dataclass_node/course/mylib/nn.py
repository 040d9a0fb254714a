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
        z = self.b
        for wi, xi in zip(self.w, x):
            z = z + wi * xi
        return z.tanh() if self.nonlinear else z

    def parameters(self) -> list[Parameter]:
        return [*self.w, self.b]


class Layer(Module):
    def __init__(self, n_inputs: int, n_outputs: int, nonlinear: bool = True):
        self.neurons = [Neuron(n_inputs, nonlinear) for _ in range(n_outputs)]

    def __call__(self, x: list):
        outs = [neuron(x) for neuron in self.neurons]
        return outs[0] if len(outs) == 1 else outs

    def parameters(self) -> list[Parameter]:
        return [p for neuron in self.neurons for p in neuron.parameters()]


class MLP(Module):
    def __init__(self, n_inputs: int, layer_sizes: list[int]):
        sizes = [n_inputs, *layer_sizes]
        last = len(layer_sizes) - 1
        self.layers = [Layer(sizes[i], sizes[i + 1], nonlinear=i != last) for i in range(len(layer_sizes))]

    def __call__(self, x: list):
        for layer in self.layers:
            x = layer(x)
        return x

    def parameters(self) -> list[Parameter]:
        return [p for layer in self.layers for p in layer.parameters()]
