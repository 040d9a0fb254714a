"""Judging a module case: which of the learner's parameters is which, then their outputs and gradients against
the reference engine's for the same weights.

Any consistent order of ``parameters()`` is right, so the grader does not take
the order on trust: it finds it from how each parameter is used. At the
identification point (every parameter a distinct small positive number, inputs
distinct positive numbers) the gradient of the outputs with respect to a neuron's
weight ``i`` is its input ``i`` times the gradient with respect to its bias, in
every call; so the neurons of the first layer are found from the inputs, and
those of each later layer from the activations of the one before. The
learner's parameters then get the case's numbers in their own order, and the
reference the same numbers where the identification put them.

A case runs the module up to three ways (``grader.child.inside.modules``); its
verdict is the learner's own run's, unless only a run with the grader's ``Value``
(or the grader's own neurons and layers) in the learner's place comes out right:
then the fault is an op's (or a part's), charged there, and this case passes.
"""

from __future__ import annotations

import bisect
import functools
import math
from dataclasses import dataclass, field

import reference
from grader.exercise.modules import STRUCTURES, ModuleCase, base_pool, probe_inputs
from grader.judging.judge import Tolerance, Verdict, close, received_error, shown

HIDDEN = ("tanh", "relu", "sigmoid", "none")  # what a hidden layer may be found to apply
MAX_PARAMETERS = 512  # as the child reads them: a reply that says more is not read
RUNS = ("own", "engine", "parts")


@dataclass(frozen=True)
class Mapping:
    """Which reference parameter each of the learner's is (``None``: one that no output depends on), and the
    activation each hidden layer was found to apply."""

    slots: tuple[int | None, ...]
    hidden: tuple[str, ...] = ()
    found: bool = True  # False: not found from the gradients, taken in the course's order instead


# ------------------------------------------------------------------ the reference


def activate(x: reference.Value, name: str) -> reference.Value:
    return x if name == "none" else getattr(x, name)()


def layered_outputs(sizes: tuple[int, ...], activations: tuple[str, ...], weights: list[reference.Value],
                    x: tuple[float, ...], biases: frozenset[int] = frozenset()) -> list[reference.Value]:
    """The network's outputs on one row ``x``: neurons' weights then bias, layer by layer (``biases``: the
    reference indices of biases left out)."""
    k, a = 0, list(x)
    for n_in, n_out, act in zip(sizes, sizes[1:], activations):
        row = []
        for _ in range(n_out):
            total = sum((w * xi for w, xi in zip(weights[k:k + n_in], a)), reference.Value(0.0))
            if k + n_in not in biases:
                total = total + weights[k + n_in]
            row.append(activate(total, act))
            k += n_in + 1
        a = row
    return a


@functools.lru_cache(maxsize=2048)
def reference_point(case: ModuleCase, weights: tuple[float, ...], point: int, activations: tuple[str, ...],
                    biases: frozenset[int] = frozenset(), each: bool = True) -> tuple[list, list, list]:
    """The reference's outputs at ``case.points[point]``, and (``each``) the gradient of every output with
    respect to every reference parameter and every input, each from a fresh graph."""
    x = case.points[point]

    def run() -> tuple[list, list, list]:
        params = [reference.Value(w) for w in weights]
        structure = case.structure
        if structure == "linear":
            return [o for row in x for o in layered_outputs(case.sizes, activations, params, row, biases)], params, []
        if structure in ("relu", "cross-entropy"):
            leaves = [reference.Value(float(v)) for row in x for v in row]
            rows = [leaves[r * len(x[0]):(r + 1) * len(x[0])] for r in range(len(x))]
            if structure == "relu":
                return [v.relu() for v in leaves], params, leaves
            return [reference.nn.cross_entropy(rows, case.targets[point])], params, leaves
        return layered_outputs(case.sizes, activations, params, x, biases), params, []

    outs, _, _ = run()
    data = [o.data for o in outs]
    if not each:
        return data, [], []
    by_params, by_inputs = [], []
    for o in range(len(outs)):
        again, params, leaves = run()
        again[o].backward()
        by_params.append([p.grad for p in params])
        by_inputs.append([v.grad for v in leaves])
    return data, by_params, by_inputs


# ------------------------------------------------------------------ which parameter is which


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


# ------------------------------------------------------------------ the verdict


@dataclass
class RunResult:
    """How one run of a case came out: right or not, what shows it (``faults``), the first number that differs."""

    ok: bool = True
    faults: set = field(default_factory=set)
    expected: dict = field(default_factory=dict)
    actual: dict = field(default_factory=dict)
    error: dict | None = None

    def wrong(self, fault: str, name: str, want: object, got: object) -> RunResult:
        self.ok = False
        self.faults.add(fault)
        if not self.expected:
            self.expected, self.actual = {name: want}, {name: got if isinstance(got, str) else shown(got)}
        return self


def output_name(case: ModuleCase, k: int, total: int) -> str:
    """How a message names output ``k``: the output, output 2, Y[1][0], the loss."""
    if case.structure == "cross-entropy":
        return "the loss"
    if STRUCTURES[case.structure].batch:
        columns = case.sizes[-1]
        return f"output {'Y' if case.structure == 'linear' else ''}[{k // columns}][{k % columns}]"
    return "the output" if total == 1 else f"output {k + 1}"


def parameters_result(case: ModuleCase, info: dict) -> RunResult:
    """``parameters()``: one flat list of Values, the module's own, each once."""
    result = RunResult()
    name = "Values in parameters()"
    if info.get("none"):
        return result.wrong("none", name, float(case.expected_parameters), "None")
    count = info.get("count")
    if info.get("nested"):
        result.wrong("nested", name, float(case.expected_parameters), "lists of Values, nested in a list")
    if info.get("foreign"):
        result.wrong("foreign", name, float(case.expected_parameters),
                     f"{count}, and {', '.join(map(str, info['foreign']))}")
    if count != case.expected_parameters:
        result.wrong("count", name, float(case.expected_parameters), float(count) if isinstance(count, int) else count)
    if info.get("repeated"):
        result.wrong("repeated", name, float(case.expected_parameters),
                     f"{count}, {info['repeated']} of them repeated")
    return result


def point_result(case: ModuleCase, run: dict, mapping: Mapping | None, weights: tuple[float, ...],
                 point: int, tolerance: Tolerance, result: RunResult) -> None:
    """Compare one point's outputs (and gradients) with the reference's; record the first difference."""
    got = run["points"][point]
    each = case.observe == "gradients"
    want, by_params, by_inputs = reference_point(case, weights, point, case.activations, each=each)
    out = got["out"]
    if all(isinstance(v, dict) and v.get("invalid") == "NoneType" for v in out):
        result.wrong("none", output_name(case, 0, 1), want[0], "None")
        return
    if len(out) != len(want):
        result.wrong("shape", "the number of outputs", float(len(want)), float(len(out)))
        return
    for k, (x, y) in enumerate(zip(out, want)):
        if not close(x, y, tolerance.reference):
            result.wrong("output", output_name(case, k, len(want)), y, x)
            return
    if not each:
        return
    params, inputs = got.get("params"), got.get("inputs")
    if not (isinstance(params, list) and len(params) == len(want) and isinstance(inputs, list)):
        result.wrong("gradient", "the gradients", 0.0, "none")
        return
    for o in range(len(want)):
        source = output_name(case, o, len(want))
        for j, x in enumerate(params[o]):
            slot = mapping.slots[j] if mapping is not None and j < len(mapping.slots) else None
            y = by_params[o][slot] if slot is not None and slot < len(by_params[o]) else 0.0
            if not close(x, y, tolerance.reference):
                result.wrong("zero-gradient" if x == 0.0 else "gradient",
                             f"the gradient of parameters()[{j}] from {source}", y, x)
                return
        for i, (x, y) in enumerate(zip(inputs[o], by_inputs[o])):
            if not close(x, y, tolerance.reference):
                result.wrong("zero-gradient" if x == 0.0 else "gradient",
                             f"the gradient of input {input_name(case, i)} from {source}", y, x)
                return


def input_name(case: ModuleCase, i: int) -> str:
    columns = case.sizes[1]
    return f"[{i // columns}][{i % columns}]"


def explained(case: ModuleCase, run: dict, mapping: Mapping | None, missing: frozenset[int],
              weights: tuple[float, ...]) -> str | None:
    """What a wrong output is, where a known mistake gives exactly it: a bias left out (``missing-bias``), another
    activation (``activation``). ``None`` where none does."""
    if not STRUCTURES[case.structure].layered:
        return None
    configured = case.activations
    if mapping is not None and mapping.hidden and mapping.hidden != configured[:len(mapping.hidden)]:
        return "activation"
    biases = frozenset(offset + k * (a + 1) + a for offset, a, b in layer_offsets(case.sizes) for k in range(b))
    hypotheses: list[tuple[str, tuple[str, ...], frozenset[int]]] = []
    if missing & biases:
        hypotheses.append(("missing-bias", configured, missing & biases))
    hypotheses.append(("missing-bias", configured, biases))
    for hidden in HIDDEN:
        for last in dict.fromkeys(("none", configured[0], hidden)):
            acts = (*(hidden for _ in configured[:-1]), last) if len(configured) > 1 else (hidden,)
            if acts != configured:
                hypotheses.append(("activation", acts, frozenset()))
    for name, acts, dropped in hypotheses:
        if all(all(close(x, y, 1e-6) for x, y in zip(run["points"][p]["out"],
                                                       reference_point(case, weights, p, acts, dropped, False)[0]))
               for p in range(len(case.points))):
            return name
    return None


def layer_offsets(sizes: tuple[int, ...]) -> list[tuple[int, int, int]]:
    """``(first reference index, inputs, neurons)`` of every layer."""
    found, offset = [], 0
    for a, b in zip(sizes, sizes[1:]):
        found.append((offset, a, b))
        offset += (a + 1) * b
    return found


def judge_run(case: ModuleCase, run: object, tolerance: Tolerance) -> RunResult:
    """How one run of ``case`` came out."""
    if not isinstance(run, dict):
        raise ValueError("a run that is not a table")
    if "error" in run:
        return RunResult(False, error=received_error(run["error"]))
    info = run.get("params", {})
    if case.observe == "parameters":
        return parameters_result(case, info)
    if info.get("none"):
        return RunResult().wrong("none", "Values in parameters()", float(case.expected_parameters), "None")
    if info.get("flood"):
        return RunResult().wrong("count", "Values in parameters()", float(case.expected_parameters), "too many")
    if case.observe == "zero-grad":
        result = RunResult()
        for j, x in enumerate(run["after"]):
            if x != 0.0:
                return result.wrong("not-reset", f"parameters()[{j}].grad after zero_grad()", 0.0, x)
        return result
    count = info.get("count", 0) if STRUCTURES[case.structure].layered else 0
    if not (type(count) is int and 0 <= count <= MAX_PARAMETERS):
        raise ValueError("not a count of parameters")
    mapping = identify(case, run.get("jacobian"), count) if count else None
    weights, missing = reference_weights(case, mapping) if mapping is not None else ((), frozenset())
    result = RunResult()
    for point in range(len(case.points)):
        point_result(case, run, mapping, weights, point, tolerance, result)
        if not result.ok:
            break
    if "output" in result.faults:
        cause = explained(case, run, mapping, missing, weights) or summed(case, run)
        if cause is not None:
            result.faults.add(cause)
    return result


def summed(case: ModuleCase, run: dict) -> str | None:
    """``sum`` where a loss over a batch is the sum of its rows' losses, not their mean."""
    if case.structure != "cross-entropy":
        return None
    rows = [len(x) for x in case.points]
    found = [p["out"][0] for p in run["points"]]
    want = [reference_point(case, (), k, (), each=False)[0][0] for k in range(len(case.points))]
    return "sum" if all(close(x, n * y, 1e-6) for x, n, y in zip(found, rows, want)) and max(rows) > 1 else None


def judge_module(case: ModuleCase, reply: dict, tolerance: Tolerance) -> Verdict:
    """The verdict on a module case: the learner's own run's, or right when only the ops or parts it uses
    (run on the grader's instead) make it wrong."""
    if "error" in reply:
        return Verdict(case, error=received_error(reply["error"]))
    runs = reply["runs"]
    results = {name: judge_run(case, runs[name], tolerance) for name in RUNS if name in runs}
    own = results["own"]
    verdict = Verdict(case)
    if own.ok:
        return verdict
    if any(r.ok for name, r in results.items() if name != "own"):
        verdict.faults = {"inherited"}
        return verdict
    isolated = results.get("parts") or results.get("engine") or own
    shown_run = own if own.error is None and own.expected else isolated
    if shown_run.error is not None:
        return Verdict(case, error=shown_run.error, faults=set(isolated.faults))
    verdict.faults = set(isolated.faults) if isolated.error is None else set(own.faults)
    verdict.expected, verdict.actual = dict(shown_run.expected), dict(shown_run.actual)
    if case.observe in ("parameters", "forward") or shown_run.faults & {"none", "shape", "output"}:
        verdict.forward_ok = False
    else:
        verdict.grads_ok = False
    return verdict


@functools.cache
def module_request(case: ModuleCase, kind: str, needs: str, options: tuple[tuple[str, object], ...]) -> dict:
    """The child's request for a module case (made once a process): build ``needs`` with the case's
    arguments, and observe it in each run the target's options call for."""
    settings = dict(options)
    spec = STRUCTURES[case.structure]
    parts = {settings[key]: {"module": key} for key in ("neuron", "layer") if key in settings}
    return {"kind": kind, "needs": needs, "args": plain(case.args), "observe": case.observe,
            "layered": spec.layered, "batch": spec.batch, "values_in": spec.values_in,
            "base": list(base_pool(case)),
            "probes": [[list(x)] if spec.batch else list(x) for x in probe_inputs(case)] if spec.layered else [],
            "weights": list(case.weights), "points": [plain(p) for p in case.points],
            "targets": [list(t) for t in case.targets],
            "runs": ["own", "engine", *(["parts"] if parts else [])], "parts": parts,
            "activation": settings.get("activation", "relu")}


def plain(x: object) -> object:
    return [plain(v) for v in x] if isinstance(x, (list, tuple)) else x
