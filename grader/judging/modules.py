"""Judging a module case: its outputs and gradients against the reference engine's for the same weights.

Which of the learner's parameters is which is found from how each is used
(``grader.judging.identification``); the learner's parameters then get the case's
numbers in their own order, and the reference the same numbers where the
identification put them.

A case runs the module up to three ways (``grader.child.inside.modules``); its
verdict is the learner's own run's, unless only a run with the grader's ``Value``
(or stand-in parts in place of the learner's neurons and layers) comes out right:
then the fault is an op's (or a part's), charged there, and this case passes.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import reference
from grader.exercise.modules import COEFFICIENTS, STRUCTURES, ModuleCase, base_pool, probe_inputs
from grader.judging.identification import HIDDEN, Mapping, identify, reference_weights
from grader.judging.judge import Tolerance, Verdict, close, received_error, shown

MAX_PARAMETERS = 512  # as the child reads them: a reply that says more is not read
RUNS = ("own", "engine", "parts")


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
    """The reference's outputs at ``case.points[point]``, and (``each``) the gradient of the gradient check's
    loss of them (``loss``) with respect to every reference parameter and every input."""
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

    outs, params, leaves = run()
    data = [o.data for o in outs]
    if not each:
        return data, [], []
    loss(outs).backward()
    return data, [p.grad for p in params], [v.grad for v in leaves]


def loss(outs: list) -> reference.Value:
    """What a gradient check backpropagates from: each output times its coefficient, summed."""
    total = outs[0] * COEFFICIENTS[0]
    for o in range(1, len(outs)):
        total = total + outs[o] * COEFFICIENTS[o % len(COEFFICIENTS)]
    return total


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
    if not (isinstance(params, list) and isinstance(inputs, list) and len(inputs) == len(by_inputs)):
        result.wrong("gradient", "the gradients", 0.0, "none")
        return
    for j, x in enumerate(params):
        slot = mapping.slots[j] if mapping is not None and j < len(mapping.slots) else None
        y = by_params[slot] if slot is not None and slot < len(by_params) else 0.0
        if not close(x, y, tolerance.reference):
            result.wrong("zero-gradient" if x == 0.0 else "gradient", f"parameters()[{j}].grad", y, x)
            return
    for i, (x, y) in enumerate(zip(inputs, by_inputs)):
        if not close(x, y, tolerance.reference):
            result.wrong("zero-gradient" if x == 0.0 else "gradient", f"the gradient of input {input_name(case, i)}",
                         y, x)
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
    weights, missing = reference_weights(case, mapping if mapping is not None else Mapping((), found=False))
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


# ------------------------------------------------------------------ the run on stand-in parts


def expected_neurons(case: ModuleCase) -> list[list]:
    """The stand-in neurons a layer or an MLP built rightly of them makes, in order: ``[inputs, nonlinear]``."""
    last = len(case.sizes) - 2
    return [[a, case.structure == "layer" or i < last] for i, (a, b) in enumerate(zip(case.sizes, case.sizes[1:]))
            for _ in range(b)]


def stand_in_point(case: ModuleCase, point: int, each: bool) -> tuple[list, list]:
    """What the module gives at ``case.points[point]`` built rightly of the stand-in parts
    (``grader.child.inside.modules.StandIns``): its outputs, and the gradient of each with respect to every
    stand-in parameter (in the order they were made)."""
    neurons = expected_neurons(case)
    pool = case.weights or (0.5,)

    def run() -> tuple[list, list]:
        params = [[reference.Value(pool[(31 * k + i) % len(pool)]) for i in range(n + 1)]
                  for k, (n, _) in enumerate(neurons)]
        a: list = list(case.points[point])
        k = 0
        for n_out in case.sizes[1:] if case.structure == "mlp" else case.sizes[1:2]:
            row = []
            for _ in range(n_out):
                total = params[k][-1]
                for wi, xi in zip(params[k], a):
                    total = total + wi * xi * xi
                row.append(total * total if neurons[k][1] else total)
                k += 1
            a = row
        return a, [p for ps in params for p in ps]

    outs, flat = run()
    if each:
        loss(outs).backward()
    return [o.data for o in outs], [p.grad for p in flat] if each else []


def judge_parts(case: ModuleCase, run: dict, tolerance: Tolerance) -> RunResult:
    """How the module came out built of the stand-in parts: made of the right ones, its ``parameters()``
    exactly theirs, its outputs and gradients theirs chained rightly."""
    neurons, tags = run["neurons"], run.get("tags", [])
    expected = expected_neurons(case)
    result = parameters_result(case, run.get("params", {})) if case.observe == "parameters" else RunResult()
    if neurons != expected:
        made = [n for n, _ in neurons] == [n for n, _ in expected]
        return result.wrong("activation" if made else "output", "the parts it is built of", str(expected),
                            str(neurons)[:200])
    offsets = [sum(n + 1 for n, _ in expected[:k]) for k in range(len(expected))]
    flat = [offsets[t[0]] + t[1] if isinstance(t, list) and len(t) == 2 and 0 <= t[0] < len(offsets) else None
            for t in tags]
    if case.observe == "parameters":
        if sorted(x for x in flat if x is not None) != list(range(sum(n + 1 for n, _ in expected))):
            result.wrong("count", "Values in parameters()", float(case.expected_parameters), float(len(tags)))
        return result
    if case.observe == "zero-grad":
        bad = next((j for j, x in enumerate(run["after"]) if x != 0.0), None)
        return result if bad is None else result.wrong("not-reset", f"parameters()[{bad}].grad after zero_grad()",
                                                       0.0, run["after"][bad])
    each = case.observe == "gradients"
    for point, got in enumerate(run["points"]):
        want, grads = stand_in_point(case, point, each)
        if len(got["out"]) != len(want) or not all(close(x, y, tolerance.reference) for x, y in zip(got["out"], want)):
            return result.wrong("output", "the outputs", str(want)[:200], str(got["out"])[:200])
        for j, x in enumerate(got["params"] if each else ()):
            y = grads[flat[j]] if j < len(flat) and flat[j] is not None else 0.0
            if not close(x, y, tolerance.reference):
                return result.wrong("gradient", f"parameters()[{j}].grad", y, x)
    return result


def judge_module(case: ModuleCase, reply: dict, tolerance: Tolerance) -> Verdict:
    """The verdict on a module case: the learner's own run's, or right when only the ops or parts it uses
    (run on the grader's instead) make it wrong."""
    if "error" in reply:
        return Verdict(case, error=received_error(reply["error"]))
    runs = reply["runs"]
    results = {name: (judge_parts if name == "parts" and "error" not in runs[name] else judge_run)(
        case, runs[name], tolerance) for name in RUNS if name in runs}
    own = results["own"]
    verdict = Verdict(case)
    if own.ok:
        return verdict
    failing = failing_verdict(case, results)
    right = sorted(name for name, r in results.items() if name != "own" and r.ok)
    if right:  # right on the grader's engine, or of the stand-in parts: its points stand if the grade charges those
        return Verdict(case, faults={"inherited"}, details={"inherits": right, "revoked": failing})
    return failing


def failing_verdict(case: ModuleCase, results: dict[str, RunResult]) -> Verdict:
    """The verdict of a module case its own run fails, from the run that isolates the module's own fault best."""
    own = results["own"]
    verdict = Verdict(case)
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
    parts = {settings[key]: key for key in ("neuron", "layer") if key in settings}
    return {"kind": kind, "needs": needs, "args": plain(case.args), "observe": case.observe,
            "layered": spec.layered, "batch": spec.batch, "values_in": spec.values_in,
            "base": list(base_pool(case)),
            "probes": [[list(x)] if spec.batch else list(x) for x in probe_inputs(case)] if spec.layered else [],
            "weights": list(case.weights), "points": [plain(p) for p in case.points],
            "coefficients": list(COEFFICIENTS),
            "targets": [list(t) for t in case.targets],
            "runs": ["own", "engine", *(["parts"] if parts else [])], "parts": parts,
            **({"input_class": settings["input_class"]} if "input_class" in settings else {})}


def plain(x: object) -> object:
    return [plain(v) for v in x] if isinstance(x, (list, tuple)) else x
