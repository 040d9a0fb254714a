"""tinydiff: scalar reverse-mode autodiff, built one Function at a time (CS 4xx, module 1)."""
from .autodiff import backpropagate, central_difference, topological_sort
from .functions import EQ, LT, Add, Exp, Inv, Log, Mul, Neg, ReLU, Sigmoid
from .scalar import Scalar, ScalarFunction

__all__ = [
    "Scalar", "ScalarFunction", "Add", "Mul", "Neg", "Inv", "LT", "EQ", "Sigmoid", "ReLU", "Log", "Exp",
    "topological_sort", "backpropagate", "central_difference",
]
