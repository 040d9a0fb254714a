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
        # TODO: w . x + b, then tanh unless self.nonlinear is False
        pass

    def parameters(self) -> list[Parameter]:
        # TODO: the weights and the bias, in one list
        pass


class Layer(Module):
    def __init__(self, n_inputs: int, n_outputs: int, nonlinear: bool = True):
        self.neurons = [Neuron(n_inputs, nonlinear) for _ in range(n_outputs)]

    def __call__(self, x: list):
        # TODO: every neuron on the same x (one neuron: its output alone)
        pass

    def parameters(self) -> list[Parameter]:
        # TODO: every parameter of every neuron, in one flat list
        pass


class MLP(Module):
    def __init__(self, n_inputs: int, layer_sizes: list[int]):
        sizes = [n_inputs, *layer_sizes]
        last = len(layer_sizes) - 1
        self.layers = [Layer(sizes[i], sizes[i + 1], nonlinear=i != last) for i in range(len(layer_sizes))]

    def __call__(self, x: list):
        # TODO: the layers one after the other
        pass

    def parameters(self) -> list[Parameter]:
        # TODO: every parameter of every layer, in one flat list
        pass
