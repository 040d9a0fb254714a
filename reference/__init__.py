"""The reference micrograd engine that every expected gradient comes from."""

from reference.engine import Value
from reference.nn import MLP, Layer, Module, Neuron
from reference.train import train_step

__all__ = ["MLP", "Layer", "Module", "Neuron", "Value", "train_step"]
