"""An op of a Tensor that holds a numpy array and its own gradient array (``gradients = "tensor"``).

Each case builds the operands with the course's leaf form, applies the op as code does, compares the result's
shape and entries with numpy's, then runs a right backward pass over the learner's own closures from a gradient of
chosen weights and compares every operand's gradient (its shape, then its entries) with central differences of
numpy's formula. What fails first names the misconception: ``wrong-shape``, ``wrong-forward``, ``missing-child``,
``broadcast-not-summed`` (a broadcast operand's gradient left in the result's shape, or not summed),
``wrong-grad-shape``, ``grad-overwrite`` (one Tensor as both operands), ``wrong-local-grad``.
"""

from __future__ import annotations

import numpy as np

from probing.forms import Engine
from probing.scalar_checks import Failed

CALLS = {"add": "a + b", "mul": "a * b", "matmul": "a @ b", "relu": "a.relu()", "exp": "a.exp()",
         "sum": "a.sum()", "mean": "a.mean()"}
NUMPY = {"add": np.add, "mul": np.multiply, "matmul": np.matmul, "relu": lambda a: np.maximum(a, 0.0),
         "exp": np.exp, "sum": lambda a, axis=None: a.sum(axis=axis), "mean": lambda a, axis=None: a.mean(axis=axis)}


def entries(shape, offset=0.0):
    """Distinct values a person reads at a glance, none near 0 (relu's kink)."""
    count = int(np.prod(shape)) if shape else 1
    values = np.array([0.5 + 0.25 * i + offset for i in range(count)]) * np.resize([1, -1, 1, 1, -1], count)
    return values.reshape(shape)


def cases(op: str, target: dict) -> list[tuple[str, list, dict]]:
    """(what, operand arrays, keyword arguments); an operand None is the first one again (a Tensor used twice)."""
    if op in ("add", "mul"):
        found = [("same shape", [entries((2, 3)), entries((2, 3), 0.1)], {}),
                 ("one tensor twice", [entries((2, 3)), None], {}),
                 ("a plain number", [entries((2, 3)), 2.5], {})]
        if target.get("broadcasting", True):
            found += [("broadcast (2, 3) with (3,)", [entries((2, 3)), entries((3,), 0.1)], {}),
                      ("broadcast (2, 1) with (1, 3)", [entries((2, 1)), entries((1, 3), 0.1)], {})]
        return found
    if op == "matmul":
        return [("(2, 3) @ (3, 4)", [entries((2, 3)), entries((3, 4), 0.1)], {}),
                ("(1, 2) @ (2, 2)", [entries((1, 2)), entries((2, 2), 0.1)], {})]
    if op in ("sum", "mean"):
        found = [("whole", [entries((2, 3))], {})]
        if target.get("axis", True):
            found += [(f"axis={k}", [entries((2, 3))], {"axis": k}) for k in (0, 1)]
        return found
    return [("(2, 3)", [entries((2, 3))], {}), ("(4,)", [entries((4,), 0.1)], {})]


def numeric(f, arrays: list, i: int, weights, h=1e-6) -> np.ndarray:
    """d sum(weights * f(arrays)) / d arrays[i], entry by entry."""
    grad = np.zeros_like(arrays[i])
    for index in np.ndindex(arrays[i].shape):
        moved = [a.copy() for a in arrays]
        moved[i][index] += h
        up = np.sum(weights * f(*moved))
        moved[i][index] -= 2 * h
        grad[index] = (up - np.sum(weights * f(*moved))) / (2 * h)
    return grad


def check_tensor_op(engine: Engine, target: dict) -> dict:
    op = target["op"]
    for what, arrays, kwargs in cases(op, target):
        leaves = [engine.leaf(a) if a is not None and not isinstance(a, float) else a for a in arrays]
        if len(leaves) == 2 and leaves[1] is None:
            leaves[1] = leaves[0]
        call = CALLS[op] if not kwargs else CALLS[op].replace("()", f"(axis={kwargs['axis']})")
        out = engine.form(call, a=leaves[0], b=leaves[1] if len(leaves) > 1 else None)
        plain = [arrays[0] if a is None else a for a in arrays]
        want = NUMPY[op](*plain, **kwargs)
        got = np.asarray(engine.value(out), dtype=float)
        if got.shape != np.shape(want):
            raise Failed("wrong-shape", f"{op}, {what}: shape {got.shape}, not {np.shape(want)}")
        if not np.allclose(got, want, rtol=1e-9, atol=1e-12):
            raise Failed("wrong-forward", f"{op}, {what}: {got.tolist()}, not {np.asarray(want).tolist()}")
        nodes = [leaf for leaf in leaves if engine.is_node(leaf)]
        held = {id(n) for n in engine.order([out])}
        if any(id(n) not in held for n in nodes):
            raise Failed("missing-child", f"{op}, {what}: an operand is not in the result's graph")
        weights = entries(np.shape(want), 0.3) if np.shape(want) else np.array(1.7)
        grads = engine.reference_pass([out], [weights])
        check_operand_grads(engine, op, what, arrays, leaves, kwargs, grads, weights)
    return {}


def check_operand_grads(engine, op, what, arrays, leaves, kwargs, grads, weights) -> None:
    twice = len(arrays) == 2 and arrays[1] is None
    plain = [arrays[0] if a is None else a for a in arrays]
    moving = [0] if twice else [k for k, a in enumerate(plain) if not isinstance(a, float)]

    def f(*xs):
        if twice:
            return NUMPY[op](xs[0], xs[0])
        full = list(plain)
        for k, x in zip(moving, xs):
            full[k] = x
        return NUMPY[op](*full, **kwargs)

    for n, k in enumerate(moving):
        got = np.asarray(grads.get(id(leaves[k]), 0.0), dtype=float)
        want = numeric(f, [plain[m] for m in moving], n, weights)
        if got.shape != want.shape:
            code = "broadcast-not-summed" if "broadcast" in what else "wrong-grad-shape"
            raise Failed(code, f"{op}, {what}: operand {k}'s gradient has shape {got.shape}, not {want.shape}")
        if not np.allclose(got, want, rtol=1e-5, atol=1e-6):
            code = "grad-overwrite" if twice else "broadcast-not-summed" if "broadcast" in what else "wrong-local-grad"
            raise Failed(code, f"{op}, {what}: operand {k}'s gradient {got.tolist()}, not {want.round(6).tolist()}")
