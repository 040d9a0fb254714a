"""mylib: a small autograd library and neural nets on top of it (Intro to Deep Learning, assignment 1)."""
from .engine import Node
from .nn import MLP, Layer, Module, Neuron, Parameter
from .optim import SGD
from .train import train

__all__ = ["Node", "Parameter", "Module", "Neuron", "Layer", "MLP", "SGD", "train"]
