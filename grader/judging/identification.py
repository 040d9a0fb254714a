"""Which of the learner's parameters is which: found from how each is used, whatever order ``parameters()``
gives them in.

Any consistent order of ``parameters()`` is right, so the grader does not take
the order on trust. At the identification point (every parameter a distinct
small positive number, inputs distinct positive numbers, none of them 1) the
gradient of the outputs with respect to a neuron's weight ``i`` is its input ``i``
times the gradient with respect to its bias, in every call; so the neurons of the
first layer are found from the inputs, and those of each later layer from the
activations of the one before (each activation a hidden layer may apply is
tried, so a wrong one is found, not mistaken for a wrong order). A neuron whose
bias no output depends on is found from its weights alone. Hidden neurons may
come out in another order than the reference's: the same network.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass

from grader.exercise.modules import ModuleCase, base_pool, probe_inputs
from grader.judging.judge import close

HIDDEN = ("tanh", "relu", "sigmoid", "none")  # what a hidden layer may be found to apply


@dataclass(frozen=True)
class Mapping:
    """Which reference parameter each of the learner's is (``None``: one that no output depends on), and the
    activation each hidden layer was found to apply."""

    slots: tuple[int | None, ...]
    hidden: tuple[str, ...] = ()
    found: bool = True  # False: not found from the gradients, taken in the course's order instead


def finite(x: object) -> bool:
    return isinstance(x, float) and math.isfinite(x)


class Columns:
    """The learner's parameters' gradient columns at the identification point, searchable by value."""

    def __init__(self, jacobian: list, count: int):
        self.cells = [(m, o) for m, rows in enumerate(jacobian) for o in range(len(rows))]
        self.columns = [[jacobian[m][o][j] for m, o in self.cells] for j in range(count)]
        self.weights = [1.0 + 0.37 * k for k in range(len(self.cells))]
        self.used = [j for j, col in enumerate(self.columns) if any(abs(v) > 1e-12 for v in col)]
        self.index = sorted((self.signature(self.columns[j]), j) for j in self.used)

    def signature(self, column: list[float]) -> float:
        return sum(w * v for w, v in zip(self.weights, column))

    def find(self, target: list[float], free: set[int]) -> int | None:
        """A free parameter whose column is ``target``."""
        key = self.signature(target)
        width = 1e-7 * sum(abs(w * v) for w, v in zip(self.weights, target)) + 1e-15
        start = bisect.bisect_left(self.index, (key - width, -1))
        for sig, j in self.index[start:]:
            if sig > key + width:
                break
            if j in free and all(close(a, b, 1e-6) or abs(a - b) < 1e-12 for a, b in zip(self.columns[j], target)):
                return j
        return None

    def scaled(self, j: int, factors: list[float]) -> list[float]:
        """Column ``j`` with the cells of each call ``m`` multiplied by ``factors[m]``."""
        return [v * factors[m] for v, (m, _) in zip(self.columns[j], self.cells)]


def layer_units(cols: Columns, inputs: list[list[float]], n_out: int, free: set[int]) -> list[tuple] | None:
    """The ``n_out`` neurons of a layer among the ``free`` parameters: ``(weights, bias)`` of each, found from
    their columns (a weight ``i``'s is the bias's times input ``i``; with no bias used, weight 0's times
    input ``i`` over input 0)."""
    n_in = len(inputs[0])
    units = []
    for anchored in ("bias", "weight"):
        for q in sorted(free):
            if q not in free or len(units) == n_out:
                continue
            first = [row[0] for row in inputs] if anchored == "weight" else [1.0] * len(inputs)
            if anchored == "weight" and any(f == 0 for f in first):
                continue
            taken = {q}
            weights = [q] if anchored == "weight" else []
            for i in range(1 if anchored == "weight" else 0, n_in):
                j = cols.find(cols.scaled(q, [row[i] / f for row, f in zip(inputs, first)]), free - taken)
                if j is None:
                    break
                taken.add(j)
                weights.append(j)
            if len(weights) != n_in:
                continue
            units.append((tuple(weights), q if anchored == "bias" else None))
            free -= taken
    return units if len(units) == n_out else None


def identify(case: ModuleCase, jacobian: object, count: int) -> Mapping:
    """Which reference parameter each of the learner's ``count`` parameters is, from the gradient columns the
    child sent; the course's order when they show none."""
    fallback = Mapping(tuple(j if j < case.expected_parameters else None for j in range(count)), found=False)
    if not (isinstance(jacobian, list) and len(jacobian) == len(probe_inputs(case)) and all(
            isinstance(rows, list) and rows and all(isinstance(r, list) and len(r) == count and all(map(finite, r))
                                                    for r in rows) for rows in jacobian)):
        return fallback
    cols = Columns(jacobian, count)
    pool = base_pool(case)
    base = tuple(pool[j % len(pool)] for j in range(count))
    inputs = [list(x) for x in probe_inputs(case)]
    found = search(case, cols, base, inputs, 0, set(cols.used), {}, ())
    if found is None:
        return fallback
    slots, hidden = found
    return Mapping(tuple(slots.get(j) for j in range(count)), hidden)


def search(case: ModuleCase, cols: Columns, base: tuple[float, ...], inputs: list[list[float]], layer: int,
           free: set[int], slots: dict[int, int], hidden: tuple[str, ...]) -> tuple[dict, tuple] | None:
    """The identification from ``layer`` on, trying each activation a hidden layer may apply."""
    sizes = case.sizes
    if layer == len(sizes) - 1:
        return slots, hidden
    n_in, n_out = sizes[layer], sizes[layer + 1]
    units = layer_units(cols, inputs, n_out, set(free))
    if units is None:
        return None
    last = layer == len(sizes) - 2
    if last and n_out > 1:
        outputs = [max(range(len(cols.cells)), key=lambda k: abs(cols.columns[ws[0] if w is None else w][k]))
                   for ws, w in units]
        units = [u for _, u in sorted(zip([cols.cells[k][1] for k in outputs], units), key=lambda t: t[0])]
    offset = sum((a + 1) * b for a, b in zip(sizes[:layer], sizes[1:layer + 1]))
    placed = dict(slots)
    for k, (weights, bias) in enumerate(units):
        for i, j in enumerate(weights):
            placed[j] = offset + k * (n_in + 1) + i
        if bias is not None:
            placed[bias] = offset + k * (n_in + 1) + n_in
    rest = free - set(placed)
    if last:
        return placed, hidden
    configured = case.activations[layer]
    for act in (configured, *(a for a in HIDDEN if a != configured)):
        following = [[apply(act, sum(base[w] * a for w, a in zip(ws, row)) + (base[b] if b is not None else 0.0))
                      for ws, b in units] for row in inputs]
        found = search(case, cols, base, following, layer + 1, set(rest), placed, (*hidden, act))
        if found is not None:
            return found
    return None


def apply(name: str, x: float) -> float:
    return {"none": x, "tanh": math.tanh(x), "relu": max(x, 0.0), "sigmoid": 1 / (1 + math.exp(-x))}[name]


def reference_weights(case: ModuleCase, mapping: Mapping) -> tuple[tuple[float, ...], frozenset[int]]:
    """The reference's weights for the case's numbers put where the learner's parameters were found, and the
    reference parameters no learner's parameter was found for (given the unused ones' numbers, in order)."""
    expected = case.expected_parameters
    numbers = case.weights
    weights = [0.0] * expected
    placed = set()
    for j, slot in enumerate(mapping.slots):
        if slot is not None and slot < expected:
            weights[slot] = numbers[j % len(numbers)]
            placed.add(slot)
    missing = [r for r in range(expected) if r not in placed]
    spare = [j for j, slot in enumerate(mapping.slots) if slot is None]
    for r, j in zip(missing, spare):
        weights[r] = numbers[j % len(numbers)]
    return tuple(weights), frozenset(missing)
