"""The Karpathy-shaped exercise notebook: section 1's gradients, section 2's ops and softmax + NLL."""

from __future__ import annotations

import contextlib
import io
import math
from pathlib import Path

from .harness import Ref, Shape, check_backward, check_isolated, check_op, replaced
from .running import Notebook, neutralise, run_notebook, uses_torch

POINT = (2.0, 3.0, 4.0)
OTHER_POINTS = [(1.5, 2.5, 3.0), (3.0, 1.2, 2.0)]
TOLERANCE = 1e-5  # the notebook's own


def exact_gradf(a: float, b: float, c: float) -> list[float]:
    """The gradient of the course's f(a, b, c) = a**2 c - cos 2b + 3/c + b**1.5 - a**0.5."""
    return [2 * a * c - 0.5 * a**-0.5, 2 * math.sin(2 * b) + 1.5 * b**0.5, a**2 - 3 / c**2]


def course_f(a: float, b: float, c: float) -> float:
    """The f of section 1 as the course hands it out: an estimate is judged on it, whatever the learner's cell 3
    now defines."""
    return a**2 * c - math.cos(2 * b) + 3.0 / c + b**1.5 - a**0.5


def other_f(a: float, b: float, c: float) -> float:
    """Another function of three numbers, curved enough that forward and symmetric differences disagree."""
    return math.exp(3 * a) + math.exp(2 * b) + math.exp(2 * c)


def other_gradient(a: float, b: float, c: float) -> list[float]:
    return [3 * math.exp(3 * a), 2 * math.exp(2 * b), 2 * math.exp(2 * c)]


def _close(xs: list[float], ys: list[float], tol: float) -> bool:
    return all(abs(float(x) - y) <= tol for x, y in zip(xs, ys))


def check_gradf(ns: dict) -> tuple[str, str]:
    gradf = ns.get("gradf")
    if gradf is None:
        return "not-implemented", "no gradf"
    at_point = [float(v) for v in gradf(*POINT)]
    if not any(at_point):
        return "not-implemented", "gradf returns zeros"
    if not _close(at_point, exact_gradf(*POINT), 1e-9):
        return "wrong-derivative", f"gradf{POINT} = {at_point}, not {exact_gradf(*POINT)}"
    for p in OTHER_POINTS:
        got = [float(v) for v in gradf(*p)]
        if _close(got, at_point, 1e-12):
            return "pasted-constants", f"gradf{p} = {got}: the same numbers as at {POINT}"
        if not _close(got, exact_gradf(*p), 1e-9):
            return "wrong-derivative", f"gradf{p} = {got}, not {exact_gradf(*p)}"
    return "right", ""


def _assigning_cell(notebook: Notebook, name: str):  # noqa: ANN202
    for cell in reversed(notebook.cells):
        if cell.kind == "code" and f"{name} =" in cell.source and f"{name} = [0, 0, 0] # TODO" not in cell.source:
            return cell
    return None


def _differences(ns: dict, f, a: float, b: float, c: float):  # noqa: ANN001, ANN202
    """For each small number the learner defined (a step h), the forward and symmetric estimates."""
    steps = {v for v in ns.values() if isinstance(v, float) and 0 < v < 0.5}
    for h in sorted(steps):
        forward = [(f(a + h, b, c) - f(a, b, c)) / h, (f(a, b + h, c) - f(a, b, c)) / h,
                   (f(a, b, c + h) - f(a, b, c)) / h]
        symmetric = [(f(a + h, b, c) - f(a - h, b, c)) / (2 * h), (f(a, b + h, c) - f(a, b - h, c)) / (2 * h),
                     (f(a, b, c + h) - f(a, b, c - h)) / (2 * h)]
        yield h, forward, symmetric


def _matches(got: list[float], candidate: list[float], other: list[float]) -> bool:
    return all(abs(g - x) <= 0.05 * abs(x - o) + 1e-9 for g, x, o in zip(got, candidate, other))


def check_numerical(notebook: Notebook, name: str, symmetric_asked: bool) -> tuple[str, str]:
    cell = _assigning_cell(notebook, name)
    if cell is None:
        return "not-implemented", f"{name} is still the stub"
    if cell.status == "syntax-error":
        return "load-error", f"cell {cell.number}: {cell.error}"
    ns = notebook.namespace

    def computed(f) -> list[float]:  # noqa: ANN001 - the cell run again with f in place of the learner's
        again = dict(ns, f=f)
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(neutralise(cell.source), "<variant>", "exec"), again)
        return [float(v) for v in again[name]]

    seen = []  # where the cell evaluates f: a one-sided difference never looks below the point

    def recording(*args: float) -> float:
        seen.append(args)
        return course_f(*args)

    try:
        got, moved = computed(recording), computed(other_f)
    except Exception as exc:  # noqa: BLE001
        return "crash", f"{name} with another f: {exc}"
    both_sides = any(x < p for at in seen for x, p in zip(at, POINT))
    variant = dict(ns, f=other_f)
    if _close(moved, got, 1e-12):
        return "pasted-constants", f"{name} stays {got} when f changes"
    for h, forward, symmetric in _differences(variant, other_f, *POINT):
        if _matches(moved, forward, symmetric) and not both_sides:  # a tiny h: only the points tell them apart
            if symmetric_asked:
                return "one-sided-difference", f"{name} is the forward difference with h={h}"
            break
        if _matches(moved, symmetric, forward):
            break
    else:
        return "wrong-derivative", f"{name} follows no difference quotient of the learner's steps"
    error = max(abs(g - e) for g, e in zip(got, exact_gradf(*POINT)))
    if error > TOLERANCE:
        return "wrong-step", f"{name} is off by {error:.2e} with h={h}"
    return "right", ""


def check_softmax(shape: Shape, ns: dict, inherits: list[str]) -> tuple[str, str]:
    softmax = ns.get("softmax")
    if softmax is None:
        return "not-implemented", "no softmax"
    cases = [((1.0, -2.0, 0.5, 2.0), 2), ((0.3, 1.1, -0.4), 0), ((2.0, -1.0, 0.5, 0.0, 1.5), 4)]

    def run(make) -> tuple[str, str]:  # noqa: ANN001
        for logits, target in cases:
            exps = [math.exp(x) for x in logits]
            probs = [e / sum(exps) for e in exps]
            want = [p - (i == target) for i, p in enumerate(probs)]
            nodes = [make(x) for x in logits]
            try:
                loss = -softmax(nodes)[target].log()
                loss.backward()
            except NotImplementedError:
                return "not-implemented", "softmax raises NotImplementedError"
            if not math.isclose(float(loss.data), -math.log(probs[target]), rel_tol=1e-9):
                return "wrong-forward", f"loss {loss.data} for {logits}"
            got = [float(n.grad) for n in nodes]
            if not _close(got, want, 1e-9):
                return "detached-data", f"logit grads {got} instead of {want} for {logits}"
        return "right", ""

    own, detail = run(Ref)
    if own != "right":
        return own, detail
    whole, detail = run(shape.cls)
    if whole == "right" or not inherits:
        return whole, detail
    with replaced(shape, inherits):
        alone, _ = run(shape.cls)
    return ("inherits", detail) if alone == "right" else (whole, detail)


OPS = ("exp", "log", "mul", "truediv", "neg", "radd")


def check(path: Path, verdict: dict) -> dict[str, tuple[str, str]]:
    notebook = run_notebook(path)
    ns = notebook.namespace

    def inherits(part: str) -> list[str]:
        v = verdict.get(part)
        return v.get("inherits", []) if isinstance(v, dict) else []

    seen = {"f": ("right", "") if math.isclose(ns["f"](*POINT), 19.57176857368317) else ("wrong-forward", ""),
            "gradf": check_gradf(ns),
            "numerical_grad": check_numerical(notebook, "numerical_grad", symmetric_asked=False),
            "numerical_grad2": check_numerical(notebook, "numerical_grad2", symmetric_asked=True)}
    shape = Shape(ns["Value"])
    seen["add"] = check_op(shape, "add")
    seen["backward"] = check_backward(shape)
    for op in OPS:
        seen[op] = check_isolated(shape, op, inherits(op))
    seen["softmax_nll"] = check_softmax(shape, ns, inherits("softmax_nll"))
    torch = any(c.kind == "code" and uses_torch(c.source) for c in notebook.cells)
    seen["torch_check"] = ("right", "") if torch else ("not-implemented", "no cell uses torch")
    return seen

