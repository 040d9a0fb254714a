"""The step-by-step tutorial: each exercise is checked right after its own cell runs.

``Value`` is redefined from exercise to exercise and each exercise cell is followed by the course's
``# Solution N`` cell, so what the learner wrote exists only between the two: the checks of exercise N
run in the live namespace once its section's cells of the learner's have run (``check``).
"""

from __future__ import annotations

import math
import re
from pathlib import Path

from .harness import Shape, check_backward, check_op
from .running import read_notebook, run_cell

PARTS = {0: ["numerical_derivative"], 1: ["value_init"], 2: ["add_forward", "mul_forward", "radd_rmul"],
         3: ["graph_children"], 4: ["add_backward", "mul_backward", "backward"], 5: ["full_engine"],
         6: ["Module.parameters", "Neuron"], 7: ["Layer", "MLP"]}
X = [1.0, -0.5, 0.25]


def _guard(check):  # noqa: ANN001, ANN202
    def run(ns: dict) -> tuple[str, str]:
        try:
            return check(ns)
        except NotImplementedError:
            return "not-implemented", ""
        except (AttributeError, TypeError) as exc:
            stub = "NoneType" in str(exc) or "has no attribute" in str(exc)
            return ("not-implemented" if stub else "crash"), f"{type(exc).__name__}: {exc}"
    return run


@_guard
def numerical_derivative(ns: dict) -> tuple[str, str]:
    nd = ns["numerical_derivative"]
    for f, df, x, h in ((lambda x: 3 * x**2 - 4 * x + 5, lambda x: 6 * x - 4, 3.0, 1e-4),
                        (math.sin, math.cos, 0.7, 1e-5)):
        got = nd(f, x, h)
        if got is None:
            return "not-implemented", "returns None"
        if abs(got - 2 * df(x)) < 1e-3:
            return "wrong-difference-quotient", f"{got}: twice f'({x}) = {df(x)}"
        if abs(got - df(x)) > 1e-3:
            return "wrong-forward", f"{got} instead of {df(x)}"
    return "right", ""


@_guard
def value_init(ns: dict) -> tuple[str, str]:
    v = ns["Value"](2.0)
    ok = v.data == 2.0 and "2.0" in repr(v)
    return ("right", "") if ok else ("wrong-forward", repr(v))


def _forward(ns: dict, cases) -> tuple[str, str]:  # noqa: ANN001
    V = ns["Value"]
    for make, want in cases:
        out = make(V)
        if out is None:
            return "not-implemented", "returns None"
        if not math.isclose(out.data, want):
            return "wrong-forward", f"{out.data} instead of {want}"
    return "right", ""


add_forward = _guard(lambda ns: _forward(ns, [(lambda V: V(2.0) + V(-3.0), -1.0), (lambda V: V(2.0) + 1, 3.0)]))
mul_forward = _guard(lambda ns: _forward(ns, [(lambda V: V(2.0) * V(-3.0), -6.0), (lambda V: V(2.0) * 4, 8.0)]))
radd_rmul = _guard(lambda ns: _forward(ns, [(lambda V: 1 + V(2.0), 3.0), (lambda V: 2 * V(-3.0), -6.0)]))


@_guard
def graph_children(ns: dict) -> tuple[str, str]:
    V = ns["Value"]
    a, b = V(2.0), V(-3.0)
    c = a * b
    d = c + 10
    if {id(n) for n in c._prev} != {id(a), id(b)} or c._op != "*" or d._op != "+" or id(c) not in map(id, d._prev):
        return "missing-child", f"_prev {c._prev}, _op {c._op!r} / {d._op!r}"
    return "right", ""


def _shape(ns: dict) -> Shape:
    return Shape(ns["Value"])


add_backward = _guard(lambda ns: check_op(_shape(ns), "add"))
mul_backward = _guard(lambda ns: check_op(_shape(ns), "mul"))
backward = _guard(lambda ns: check_backward(_shape(ns), zeroing_allowed=True))


@_guard
def full_engine(ns: dict) -> tuple[str, str]:
    results = [check_op(_shape(ns), op) for op in ("add", "mul", "pow", "tanh", "relu", "exp", "sub", "truediv")]
    results.append(check_backward(_shape(ns), zeroing_allowed=True))
    return next((r for r in results if r[0] != "right"), ("right", ""))


@_guard
def module_parameters(ns: dict) -> tuple[str, str]:
    got = ns["Module"]().parameters()
    return ("right", "") if got == [] else ("not-implemented" if got is None else "wrong-forward", repr(got))


def _expected(neuron, x: list, nonlin: bool) -> float:  # noqa: ANN001
    act = sum(w.data * xi for w, xi in zip(neuron.w, x)) + neuron.b.data
    return max(act, 0.0) if nonlin else act


@_guard
def neuron(ns: dict) -> tuple[str, str]:
    for nonlin in (True, False):
        n = ns["Neuron"](3) if nonlin else ns["Neuron"](3, False)
        for w, v in zip(n.w, (0.5, -1.0, 2.0)):
            w.data = v
        n.b.data = 0.3
        out = n(X)
        if out is None:
            return "not-implemented", "returns None"
        if not math.isclose(out.data, _expected(n, X, nonlin)):
            without = sum(w.data * xi for w, xi in zip(n.w, X))
            code = "missing-bias" if math.isclose(out.data, max(without, 0) if nonlin else without) else "wrong-forward"
            return code, f"{out.data} instead of {_expected(n, X, nonlin)}"
        params = n.parameters()
        if len(params) != 4 or not all(isinstance(p, ns["Value"]) for p in params) or id(n.b) not in map(id, params):
            return "wrong-parameters", f"parameters() {params}"
    return "right", ""


def _flat_values(params, V: type) -> str | None:  # noqa: ANN001
    if params is None:
        return "not-implemented"
    if any(isinstance(p, list) for p in params):
        return "nested-parameters"
    return None if all(isinstance(p, V) for p in params) else "wrong-parameters"


def _layer(ns: dict) -> tuple[str, str]:
    layer = ns["Layer"](3, 2)
    out = layer(X)
    if out is None:
        return "not-implemented", "returns None"
    want = [_expected(n, X, n.nonlin) for n in layer.neurons]
    if not all(math.isclose(o.data, w) for o, w in zip(out, want)):
        return "wrong-forward", f"{out} instead of {want}"
    params = layer.parameters()
    problem = _flat_values(params, ns["Value"])
    if problem:
        return problem, f"parameters() {params!r:.80}"
    return ("right", "") if len(params) == 8 else ("wrong-parameters", f"{len(params)} parameters")


def _mlp(ns: dict) -> tuple[str, str]:
    mlp = ns["MLP"](3, [4, 4, 1])
    out = mlp(X)
    if out is None:
        return "not-implemented", "returns None"
    x = X
    for i, layer in enumerate(mlp.layers):
        x = [_expected(n, x, i < 2) for n in layer.neurons]
    if not math.isclose(out.data, x[0]):
        return "wrong-forward", f"{out.data} instead of {x[0]}"
    params = mlp.parameters()
    problem = _flat_values(params, ns["Value"])
    if problem:
        return problem, f"parameters() {params!r:.80}"
    return ("right", "") if len(params) == 41 else ("wrong-parameters", f"{len(params)} parameters")


def _course(ns: dict) -> dict:
    """The course's Neuron and Layer (Solutions 6 and 7), to check a Layer or an MLP on its own."""
    exec(SOLUTIONS, course := dict(ns))
    return course


SOLUTIONS = '''
import random
class Neuron(Module):
    def __init__(self, nin, *args, **kwargs):
        self.w = [Value(random.uniform(-1, 1)) for _ in range(nin)]
        self.b = Value(random.uniform(-1, 1))
        self.nonlin = ([*args, *kwargs.values()] or [True])[0]
    def __call__(self, x):
        act = sum((wi * xi for wi, xi in zip(self.w, x)), self.b)
        return act.relu() if self.nonlin else act
    def parameters(self):
        return self.w + [self.b]
class Layer(Module):
    def __init__(self, nin, nout, **kwargs):
        self.neurons = [Neuron(nin, **kwargs) for _ in range(nout)]
    def __call__(self, x):
        out = [n(x) for n in self.neurons]
        return out[0] if len(out) == 1 else out
    def parameters(self):
        return [p for n in self.neurons for p in n.parameters()]
'''


def _isolated(check, replace: tuple[str, ...]):  # noqa: ANN001, ANN202
    """``check`` with the learner's classes, and "inherits" when it is right over the course's ``replace``."""
    @_guard
    def run(ns: dict) -> tuple[str, str]:
        status, detail = _guard(check)(ns)
        if status in ("right", "not-implemented"):
            return status, detail
        course = _course(ns)
        saved = {name: ns[name] for name in replace}
        ns.update({name: course[name] for name in replace})  # the learner's methods look names up here
        try:
            alone = _guard(check)(ns)[0]
        finally:
            ns.update(saved)
        return ("inherits", detail) if alone == "right" else (status, detail)
    return run


CHECKS = {"numerical_derivative": numerical_derivative, "value_init": value_init, "add_forward": add_forward,
          "mul_forward": mul_forward, "radd_rmul": radd_rmul, "graph_children": graph_children,
          "add_backward": add_backward, "mul_backward": mul_backward, "backward": backward,
          "full_engine": full_engine, "Module.parameters": module_parameters, "Neuron": neuron,
          "Layer": _isolated(_layer, ("Neuron",)), "MLP": _isolated(_mlp, ("Neuron", "Layer"))}


def exercise(text: str) -> int | None:
    """The exercise a code cell's first line or a Markdown heading names (``# Exercise 4``, ``## Exercise 4: ...``)."""
    found = re.match(r"#+ Exercise (\d+)", text)
    return int(found.group(1)) if found else None


def check(path: Path, verdict: dict) -> dict[str, tuple[str, str]]:
    """Each exercise checked once the learner's part of its section has run: after its ``# Exercise N`` cell and
    any cell of the learner's below it under the same heading, before the course's ``# Solution N`` cell or the
    next heading. An exercise cell whose first line was rewritten is found by its section's heading."""
    seen: dict[str, tuple[str, str]] = {}
    notebook = read_notebook(path)
    pending: tuple[int, int] | None = None  # the open exercise, and its cell
    heading: int | None = None  # the exercise the current section's heading names

    def close() -> None:
        nonlocal pending
        if pending is not None and not any(part in seen for part in PARTS[pending[0]]):
            for part in PARTS[pending[0]]:
                seen[part] = (*CHECKS[part](notebook.namespace), pending[1])
        pending = None

    for cell in notebook.cells:
        if cell.kind != "code":
            first = next((line for line in cell.source.splitlines() if line.lstrip().startswith("#")), None)
            if first is not None:
                close()
                heading = exercise(first.strip())
            continue
        if cell.source.startswith("# Solution"):
            close()
        number = exercise(cell.source)
        if number is not None:
            close()
            pending = (number, cell.number)
        elif pending is None and heading is not None and not any(part in seen for part in PARTS[heading]) \
                and not cell.source.startswith("# Solution"):
            pending = (heading, cell.number)
        run_cell(notebook, cell)
    close()
    return seen
