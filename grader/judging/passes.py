"""What a backward pass did wrong, told from the gradients it left where the order it ran in cannot be seen.

micrograd's nodes each keep a step micrograde can replace with one that reports when it runs, so
``grader.judging.judge`` reads a pass's faults from that trace. Some engines keep their graph where
micrograde cannot put a node of its own (a tape), or pass gradient to leaves without a step of
theirs: there the pass is run again here, on the case's expression and the ops' own local derivatives,
once for each classic way of getting it wrong (no seed, the nodes run inputs first, a node skipped, a
gradient assigned where it is added to), and the fault is the one whose gradients are the learner's.
An expression's nodes are listed operands first, so their order is a topological order.
"""

from __future__ import annotations

from grader.exercise import ops
from grader.exercise.expr import Expr, operands
from grader.judging.closeness import close


def ran(expr: Expr, values: list[float], seed: float = 1.0, forwards: bool = False, skip: int | None = None,
        assign: bool = False) -> list[float]:
    """Every node's gradient after a pass from the root seeded ``seed``: in reverse topological order, or
    ``forwards`` (inputs first); never running node ``skip``; each share ``assign``-ed instead of added."""
    grads = [0.0] * len(expr)
    grads[-1] = seed
    order = range(len(expr)) if forwards else range(len(expr) - 1, -1, -1)
    for i in order:
        node = expr[i]
        if i == skip or node[0] in ("leaf", "const"):
            continue
        for j, d in zip(operands(node), ops.local_derivatives(node, values)):
            grads[j] = d * grads[i] if assign else grads[j] + d * grads[i]
    return grads


def pass_faults(expr: Expr, values: list[float], got: list, tolerance: float, seed: object = None,
                internal_traced: bool = False) -> set[str]:
    """Every classic fault of a pass whose nodes' gradients are ``got`` (one per node; the leaves' read, and the
    root's where the engine keeps one) that explains them (several may: then the other failing cases tell).
    ``seed`` is the gradient the root's step was given, where that was seen; ``internal_traced``: the order the
    operations' nodes ran in was seen, and showed none skipped."""
    leaves = [i for i, node in enumerate(expr) if node[0] == "leaf"]

    def shows(grads: list[float]) -> bool:
        return all(close(got[i], grads[i], tolerance) for i in leaves)

    if shows(ran(expr, values)):
        return set()
    # The root kept its seed, or its step was seen given one: it was set.
    seeded = any(isinstance(x, float) and close(x, 1.0, tolerance) for x in (got[-1], seed))
    tries = [("no-accumulation", ran(expr, values, assign=True)), ("wrong-order", ran(expr, values, forwards=True))]
    if not internal_traced:
        tries += [("incomplete-traversal", ran(expr, values, skip=k)) for k, node in enumerate(expr)
                  if node[0] not in ("leaf", "const")]
    if not seeded:
        tries.insert(0, ("missing-seed", ran(expr, values, seed=0.0)))
    return {code for code, grads in tries if shows(grads)}
