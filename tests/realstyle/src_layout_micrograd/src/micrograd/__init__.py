from micrograd.engine import Value
from micrograd.nn import MLP

__all__ = ["Value", "MLP"]
