"""The graph walk of tinydiff, and a numerical check for it.

Part 3 of the handout: you write `central_difference`, `topological_sort` and
`backpropagate`. Context and History are given.
"""
from dataclasses import dataclass
from typing import Any


class Context:
    """The scratch space a Function's forward pass leaves for its backward pass."""

    def __init__(self, no_grad=False):
        self.no_grad = no_grad
        self.saved_values = ()

    def save_for_backward(self, *values):
        """Keep `values` (plain floats) for backward; nothing is kept when no gradient is needed."""
        if not self.no_grad:
            self.saved_values = values


@dataclass
class History:
    """How a Scalar was made: the Function that made it, its context, and its inputs.

    A leaf (a Scalar you made yourself) has a History with no function; a constant has no History.
    """

    last_fn: Any = None
    ctx: Any = None
    inputs: tuple = ()


def central_difference(f, *vals, arg=0, epsilon=1e-6):
    """Estimate the derivative of f(*vals) with respect to vals[arg] by a central difference.

    f takes plain floats and returns a float. Only vals[arg] moves: epsilon up, epsilon down.
    """
    up = list(vals)
    down = list(vals)
    up[arg] += epsilon
    down[arg] -= epsilon
    return (f(*up) - f(*down)) / (2 * epsilon)


def topological_sort(variable):
    """Every non-constant Scalar `variable` depends on, `variable` first, each before its inputs.

    Each Scalar appears once, however many times it is used.
    """
    order = []
    seen = set()

    def visit(var):
        if var.unique_id in seen or var.is_constant():
            return
        seen.add(var.unique_id)
        for parent in var.parents:
            visit(parent)
        order.append(var)

    visit(variable)
    return order[::-1]


def backpropagate(variable, deriv):
    """Push `deriv` (d something / d variable) back through the graph to every leaf.

    Each leaf's total derivative is handed to it once, with `accumulate_derivative`.
    """
    derivatives = {variable.unique_id: deriv}
    for var in topological_sort(variable):
        d_var = derivatives.get(var.unique_id, 0.0)
        if var.is_leaf():
            var.accumulate_derivative(d_var)
            continue
        for parent, d_parent in var.chain_rule(d_var):
            if parent.is_constant():
                continue
            derivatives[parent.unique_id] = derivatives.get(parent.unique_id, 0.0) + d_parent
