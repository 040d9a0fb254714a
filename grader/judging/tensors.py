"""Judging a tensor op's case: the reference engine applied entry by entry, and finite differences.

The child builds the case's tensors from the learner's Values, calls the op,
gives each entry of the result its gradient ``g`` and runs the grader's own
backward pass; it sends back the result's shape and entries, every leaf's
gradient, which leaves the backward pass reached, and the result's entries at
leaves moved a small step each way along one direction. Here the expected result
is the reference engine's, applied to the same leaves entry by entry (which
entries of the operands make each entry of the result is
``grader.exercise.shapes``); the gradients are checked against its backward pass,
and against the difference quotient of the learner's own forward pass along that
direction (a directional derivative: the gradients dotted with the direction,
which a wrong gradient meets only by a coincidence of measure zero), which costs
two forward passes however many entries a case has.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

from grader.exercise import shapes
from grader.exercise.tensors import Operand, TensorCase, call_of, nested, shape_text, size_of
from grader.judging.judge import Tolerance, Verdict, close, received_error, shown, valid_list
from reference.engine import Value

REFERENCE = "the reference engine applied entry by entry"
STEP = 1e-5  # of the finite differences, along a direction of entries about 1 in size
MAX_DIMS = 8  # a shape a reply may give: more axes than any result has
MAX_ENTRIES = 4096  # entries of a result a reply may give (the child stops long before)
# The call styles a course may set (a tensor target's options), each with the one the child may find instead of
# numpy's in the learner's method: reshape given one tuple, an axis given as dim.
STYLES = {"shape_as": "tuple", "axis_keyword": "dim"}


def direction(count: int) -> tuple[float, ...]:
    """The direction ``count`` leaves are moved in: no leaf still, few moved alike (a period of ten)."""
    return tuple(0.7 + 0.45 * (k % 5) - 1.3 * (k % 2) for k in range(count))


@dataclass(frozen=True)
class Expected:
    """What the reference engine gives for a case: the result's shape and entries, each leaf's gradient."""

    shape: tuple[int, ...]
    data: tuple[float, ...]
    grads: tuple[float, ...]


def data(x: Value | float) -> float:
    return x.data if isinstance(x, Value) else x


ELEMENTWISE = {
    "add": lambda x, y: x + y,
    "sub": lambda x, y: x - y,
    "mul": lambda x, y: x * y,
    "truediv": lambda x, y: x / y,
    "floordiv": lambda x, y: Value(float(math.floor(data(x) / data(y)))),  # constant where it is smooth
}
REFLECTED = {"radd": "add", "rmul": "mul"}


def total(values: list) -> Value:
    """The sum of reference Values, added one by one as code adds them."""
    found = values[0]
    for v in values[1:]:
        found = found + v
    return found


def product(a: list, b: list, left: tuple[int, ...], right: tuple[int, ...]) -> list:
    """The entries of the matrix product of ``a`` (shape ``left``) and ``b`` (``right``), row by row; a 1-d
    operand is a row on the left, a column on the right."""
    n, k = left if len(left) == 2 else (1, left[0])
    m = right[1] if len(right) == 2 else 1
    return [total([a[i * k + j] * b[j * m + col] for j in range(k)]) for i in range(n) for col in range(m)]


def apply(case: TensorCase, leaves: list) -> list:
    """The result's entries (row by row) of the case's op on reference Values ``leaves``: what it must be."""
    arrays = {t.name: (t.shape, [leaves[i] for i in t.leaves]) for t in case.tensors}
    given = [arrays[x] if isinstance(x, str) else ((), [x]) for x in case.operands]
    out = case.result_shape
    if out is None:
        raise ValueError(f"{case.call}: the operands' shapes do not fit")
    family, (shape, entries) = case.spec.family, given[0]
    if family in ("elementwise", "reflected"):
        rule = ELEMENTWISE[REFLECTED.get(case.op, case.op)]
        (left, a), (right, b) = given
        return [rule(a[shapes.source(i, out, left)], b[shapes.source(i, out, right)]) for i in range(size_of(out))]
    if family == "unary":
        return [getattr(v, case.op)() for v in entries]
    if family == "matrix":
        return product(entries, given[1][1], shape, given[1][0])
    if family == "reshape":
        return list(entries)
    lines = shapes.lines(shape, case.axis)
    if case.op == "sum":
        return [total([entries[i] for i in line]) for line in lines]
    if case.op == "mean":
        return [total([entries[i] for i in line]) * (1.0 / len(line)) for line in lines]
    if case.op == "max":
        return [max((entries[i] for i in line), key=data) for line in lines]
    # argmax: the index of the first largest entry along the axis, or in the flattened tensor
    return [float(max(range(len(line)), key=lambda j, line=line: (data(entries[line[j]]), -j))) for line in lines]


@functools.lru_cache(maxsize=4096)  # a pure function of the case, asked of every reply to it
def expected(case: TensorCase) -> Expected:
    """The reference engine's result and gradients for ``case``: the loss is the sum of the result's entries,
    each times the gradient the case gives it."""
    leaves = [Value(x) for x in case.leaves]
    out = apply(case, leaves)
    shape = case.result_shape or ()
    if not case.backward:
        return Expected(shape, tuple(out), ())
    loss = Value(0.0)
    for w, v in zip(case.seed_of(len(out)), out):
        loss = loss + v * w
    loss.backward()
    return Expected(shape, tuple(float(data(v)) for v in out), tuple(float(leaf.grad) for leaf in leaves))


def layout(operand: Operand) -> object:
    """A tensor as the child builds it: its leaves' numbers, nested in its shape."""
    return nested(list(operand.leaves), operand.shape)


@functools.lru_cache(maxsize=4096)
def tensor_request(case: TensorCase, needs: str, values: bool, gradients: str) -> dict:
    """The child's request for ``case`` (made once a process): build the tensors of class ``needs`` from
    Values (``values``) or plain numbers, call the op (in the course's call style, the case's: how reshape is given
    its shape, the keyword of an axis; where it says none, the child reads it off the method), backpropagate
    ``seed`` from the result (through its entries' closures, or with ``gradients`` "tensor" the Tensors'), and call
    it again at each probe's leaves."""
    names = [t.name for t in case.tensors]
    leaves = list(case.leaves)
    request = {"kind": "tensor", "needs": needs, "entries": "values" if values else "numbers",
               "gradients": gradients, "leaves": leaves,
               "tensors": [layout(t) for t in case.tensors],
               "operands": [["tensor", names.index(x)] if isinstance(x, str) else ["number", x] for x in case.operands],
               "method": case.method, "call": call_of(case.method), "args": list(case.sizes),
               "kwargs": {"axis": case.axis} if case.axis is not None else {}, "seed": [], "probes": [],
               **{key: said for key, said in zip(STYLES, case.style) if said is not None}}
    if case.backward:
        request["seed"] = list(case.seed_of(size_of(expected(case).shape)))
        request["probes"] = [[x + sign * STEP * d for x, d in zip(leaves, direction(len(leaves)))]
                             for sign in (1, -1)]
    return request


def read_shape(found: object) -> tuple[int, ...]:
    """A shape a reply gives, or ``ValueError``: a short list of whole numbers."""
    if not (isinstance(found, list) and len(found) <= MAX_DIMS
            and all(type(n) is int and 0 <= n <= MAX_ENTRIES for n in found)):
        raise ValueError("not a shape")
    shape = tuple(found)
    if size_of(shape) > MAX_ENTRIES:
        raise ValueError("too many entries")
    return shape


def agrees(case: TensorCase, want: Expected, grads: list, probes: object, tolerance: Tolerance) -> bool:
    """Whether the gradients, dotted with the direction, are the difference quotient of the learner's own
    forward pass along it (the loss weighted by the case's gradients ``g``)."""
    count = len(want.data)
    if not (valid_list(probes, 2) and all(valid_list(p, count) and all(isinstance(x, float) for x in p)
                                          for p in probes)) or not all(isinstance(g, float) for g in grads):
        return False
    up, down = probes
    slope = sum(w * (u - d) for w, u, d in zip(case.seed_of(count), up, down)) / (2 * STEP)
    along = [g * d for g, d in zip(grads, direction(len(case.leaves)))]
    return abs(slope - sum(along)) <= tolerance.finite_difference * max(1.0, sum(map(abs, along)), abs(slope))


def unreached(case: TensorCase, want: Expected, reply: dict) -> tuple[list[str], list[str]]:
    """The operands that get a gradient, and those of them no backward pass through the result's graph reaches
    (none where the reply cannot tell)."""
    needed = [t.name for t in case.tensors if any(want.grads[i] for i in t.leaves)]
    reached = reply.get("reached")
    if not (valid_list(reached, len(case.leaves)) and all(isinstance(r, bool) for r in reached)):
        return needed, []
    return needed, [name for name in needed if not any(reached[i] for i in case.tensor(name).leaves)]


def unlinked(case: TensorCase, want: Expected, grads: list, reply: dict) -> set[str]:
    """What the reply shows of gradients lost on the way: entries that are plain numbers, operands no backward
    pass reached from the result (``lost:a``; all of them: ``detached``), or, for ``max``, gradient given to
    an entry that is not the largest (``elsewhere``)."""
    faults = set()
    if reply.get("numbers"):
        faults.update(("numbers", "detached"))
    needed, lost = unreached(case, want, reply)
    faults.update(f"lost:{name}" for name in lost)
    if lost and len(lost) == len(needed):
        faults.add("detached")
    if case.op == "max" and any(isinstance(g, float) and g != 0.0 and w == 0.0 for g, w in zip(grads, want.grads)):
        faults.add("elsewhere")
    return faults


def gradient_shapes(case: TensorCase, found: object) -> set[str]:
    """For a Tensor with its own gradient, each operand whose gradient is not of its shape
    (``grad-shape:b:(2, 3)``, or ``none`` where it has no gradient at all)."""
    if not valid_list(found, len(case.tensors)):
        raise ValueError("not one gradient shape per tensor")
    faults = set()
    for tensor, shape in zip(case.tensors, found):
        shape = None if shape is None else read_shape(shape)
        if shape != tensor.shape:
            faults.add(f"grad-shape:{tensor.name}:{'none' if shape is None else shape_text(shape)}")
    return faults


def judge_tensor(case: TensorCase, reply: dict, tolerance: Tolerance) -> Verdict:
    """The verdict on one tensor case: the result's shape and every entry, then every leaf's gradient."""
    if "error" in reply:
        return Verdict(case, error=received_error(reply["error"]), reference=REFERENCE)
    want = expected(case)
    shape = read_shape(reply.get("shape"))
    got = reply.get("data")
    if not valid_list(got, size_of(shape)):
        raise ValueError("the entries do not fill the shape")
    verdict = Verdict(case, expected_data=nested(list(want.data), want.shape),
                      actual_data=nested([shown(x) for x in got], shape), reference=REFERENCE)
    verdict.forward_ok = shape == want.shape and all(close(x, y, tolerance.reference) for x, y in zip(got, want.data))
    assumed = reply.get("assumed")
    if isinstance(assumed, dict) and assumed and all(STYLES.get(k) == v for k, v in assumed.items()):
        verdict.details["assumed"] = tuple(sorted(assumed))  # the call style the learner's method showed
    if shape != want.shape:
        verdict.faults.add("shape")
    if not case.backward:
        return verdict
    grads = reply.get("grads")
    if not valid_list(grads, len(case.leaves)):
        raise ValueError("not one gradient per leaf")
    verdict.expected = dict(zip(case.names, want.grads))
    verdict.actual = {name: shown(g) for name, g in zip(case.names, grads)}
    verdict.grads_ok = all(close(g, w, tolerance.reference) for g, w in zip(grads, want.grads))
    verdict.fd_ok = shape == want.shape and agrees(case, want, grads, reply.get("probes"), tolerance)
    misshapen = gradient_shapes(case, reply["grad_shapes"]) if "grad_shapes" in reply else set()
    for fault in misshapen:  # a Tensor's own gradient of another shape than the Tensor's: none of it is right
        _, name, found = fault.split(":")
        verdict.actual.update({case.names[i]: f"<in a gradient of shape {found}>" for i in case.tensor(name).leaves})
        verdict.grads_ok = False
    verdict.faults |= misshapen
    if verdict.forward_ok and not verdict.grads_ok:
        verdict.faults |= unlinked(case, want, grads, reply)
    elif verdict.forward_ok and (lost := unreached(case, want, reply)[1]):
        # Right gradients from a closure that writes to an operand the result does not list among its own:
        # a backward pass through a longer graph never reaches that operand, nor anything below it.
        verdict.grads_ok = False
        verdict.faults |= {"unlisted", *(f"lost:{name}" for name in lost)}
        verdict.actual.update({case.names[i]: "<not reached>" for name in lost for i in case.tensor(name).leaves})
    return verdict
