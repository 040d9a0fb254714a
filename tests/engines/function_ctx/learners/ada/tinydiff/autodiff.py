"""The graph walk of tinydiff, and a numerical check for it.

Part 3 of the handout: you write `central_difference`, `topological_sort` and
`backpropagate`. Context and History are given.
"""
from collections import defaultdict
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


def _shifted(vals, arg, by):
    """A copy of vals with vals[arg] moved by `by`."""
    moved = list(vals)
    moved[arg] = moved[arg] + by
    return moved


def central_difference(f, *vals, arg=0, epsilon=1e-6):
    """Estimate the derivative of f(*vals) with respect to vals[arg] by a central difference.

    f takes plain floats and returns a float. Only vals[arg] moves: epsilon up, epsilon down.
    """
    f_plus = f(*_shifted(vals, arg, epsilon))
    f_minus = f(*_shifted(vals, arg, -epsilon))
    return (f_plus - f_minus) / (2.0 * epsilon)


def topological_sort(variable):
    """Every non-constant Scalar `variable` depends on, `variable` first, each before its inputs.

    Each Scalar appears once, however many times it is used.
    """
    # iterative DFS (recursion blew the stack on my 2000-node test graph)
    done = set()
    post_order = []
    stack = [(variable, False)]
    while stack:
        node, children_done = stack.pop()
        if children_done:
            post_order.append(node)
            continue
        if node.unique_id in done or node.is_constant():
            continue
        done.add(node.unique_id)
        stack.append((node, True))
        for inp in node.parents:
            stack.append((inp, False))
    post_order.reverse()
    return post_order


def backpropagate(variable, deriv):
    """Push `deriv` (d something / d variable) back through the graph to every leaf.

    Each leaf's total derivative is handed to it once, with `accumulate_derivative`.
    """
    grads = defaultdict(float)
    grads[variable.unique_id] = deriv
    for node in topological_sort(variable):
        g = grads[node.unique_id]
        if node.is_leaf():
            node.accumulate_derivative(g)
        else:
            for inp, contribution in node.chain_rule(g):
                if not inp.is_constant():
                    grads[inp.unique_id] += contribution
