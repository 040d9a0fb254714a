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
    x = vals[arg]
    before, after = list(vals[:arg]), list(vals[arg + 1:])
    hi = f(*before, x + epsilon, *after)
    lo = f(*before, x - epsilon, *after)
    return (hi - lo) / (2 * epsilon)


def _dfs(var, visited, out):
    if var.is_constant():
        return
    if var.unique_id in visited:
        return
    visited.append(var.unique_id)
    for p in var.parents:
        _dfs(p, visited, out)
    out.insert(0, var)  # after all of its inputs -> in front of them


def topological_sort(variable):
    """Every non-constant Scalar `variable` depends on, `variable` first, each before its inputs.

    Each Scalar appears once, however many times it is used.
    """
    out = []
    _dfs(variable, [], out)
    return out


def backpropagate(variable, deriv):
    """Push `deriv` (d something / d variable) back through the graph to every leaf.

    Each leaf's total derivative is handed to it once, with `accumulate_derivative`.
    """
    order = topological_sort(variable)
    # print("backprop over", len(order), "nodes")
    d = {variable.unique_id: deriv}
    for v in order:
        dv = d[v.unique_id] if v.unique_id in d else 0.0
        if v.is_leaf():
            v.accumulate_derivative(dv)
        else:
            for inp, di in v.chain_rule(dv):
                if inp.is_constant():
                    continue
                if inp.unique_id in d:
                    d[inp.unique_id] = d[inp.unique_id] + di
                else:
                    d[inp.unique_id] = di
    print("backpropagate: done,", len(order), "nodes")
