"""Single submissions for micrograde's default exercise (add, mul, pow, tanh, backward, train_step).

``train_step`` runs, as micrograde runs it, on a model the grader provides: here a small MLP of the
learner's own class with every op replaced by a right one, so only the training loop is judged. It is
compared with four loops on the reference engine: right, without ``zero_grad``, uphill, and both.
"""

from __future__ import annotations

import importlib
import math
import random
from pathlib import Path

from .harness import METHOD, Ref, Shape, check_backward, check_isolated, replaced
from .running import learner_imports, load_file, run_notebook

MODEL_OPS = ["add", "mul", "pow", "tanh", "sub", "neg"]


class TinyMLP:
    """2 -> 2 -> 1 tanh network of any node class, built by ``make``."""

    def __init__(self, make, weights: list[float], grad: str) -> None:  # noqa: ANN001
        self.params = [make(w) for w in weights]
        self.grad = grad

    def __call__(self, x: list[float]):  # noqa: ANN204
        w = self.params
        h = [(w[0] * x[0] + w[1] * x[1] + w[2]).tanh(), (w[3] * x[0] + w[4] * x[1] + w[5]).tanh()]
        return w[6] * h[0] + w[7] * h[1] + w[8]

    def parameters(self) -> list:
        return list(self.params)

    def zero_grad(self) -> None:
        for p in self.params:
            setattr(p, self.grad, 0.0)


XS, YS, LR = [[0.5, -1.0], [1.5, 0.3], [-0.7, 0.8]], [1.0, -0.5, 0.2], 0.1


def _reference_loop(weights: list[float], clear: bool, sign: float) -> list[float]:
    model = TinyMLP(Ref, weights, "grad")
    for _ in range(2):
        loss = sum((model(x) - y) ** 2 for x, y in zip(XS, YS))
        if clear:
            model.zero_grad()
        loss.backward()
        for p in model.parameters():
            p.data -= sign * LR * p.grad
    return [p.data for p in model.params]


def check_train_step(train_step, shape: Shape) -> list[str] | str:  # noqa: ANN001
    weights = [random.Random(4).uniform(-1, 1) for _ in range(9)]
    with replaced(shape, [op for op in MODEL_OPS if METHOD[op] in dir(shape.cls)]):
        model = TinyMLP(shape.cls, weights, shape.grad)
        for _ in range(2):
            train_step(model, XS, YS, LR)
        got = [shape.value(p) for p in model.params]
    hypotheses = {(): (True, 1.0), ("missing-zero-grad",): (False, 1.0), ("wrong-update",): (True, -1.0),
                  ("missing-zero-grad", "wrong-update"): (False, -1.0)}
    for codes, (clear, sign) in hypotheses.items():
        want = _reference_loop(weights, clear, sign)
        if all(math.isclose(g, w, rel_tol=1e-9, abs_tol=1e-12) for g, w in zip(got, want)):
            return "right" if not codes else list(codes)
    return ["wrong-update"]


def load(path: Path, hints: dict) -> tuple[dict, list, object]:
    """The names the submission defines, the units that did not compile, and the notebook (if any)."""
    if path.suffix == ".py":
        ns, errors = load_file(path)
        return ns, errors, None
    if path.suffix == ".ipynb":
        notebook = run_notebook(path)
        errors = [c.error for c in notebook.cells if c.status == "syntax-error"]
        return notebook.namespace, errors, notebook
    learner_imports(path)
    ns: dict = {}
    for module in hints["modules"]:
        ns.update(vars(importlib.import_module(module)))
    return ns, [], None


def check(path: Path, verdict: dict) -> dict[str, object]:
    hints = verdict.get("check", {})
    ns, errors, notebook = load(path, hints)
    seen: dict[str, object] = {"errors": errors, "notebook": notebook}
    cls = ns.get(hints.get("class", "Value"))
    train_step = ns.get("train_step")
    seen["train_step"] = check_train_step(train_step, Shape(cls or Ref, hints.get("data", "data"),
                                                              hints.get("grad", "grad"),
                                                              hints.get("closure", "_backward"),
                                                              hints.get("children", "_prev"))) \
        if train_step else "lost"
    if cls is None:
        seen.update({t: "lost" for t in ("add", "mul", "pow", "tanh", "backward")})
        return seen
    shape = Shape(cls, hints.get("data", "data"), hints.get("grad", "grad"), hints.get("closure", "_backward"),
                  hints.get("children", "_prev"))
    for prefix, key in (("", "inherits"), ("ops:", "ops_inherits")):
        inherits = hints.get(key, {})
        for target in ("add", "mul", "pow", "tanh", "neg", "sub", "truediv"):
            status = check_isolated(shape, target, inherits.get(target, []))[0]
            seen[prefix + target] = "right" if status in ("right", "inherits") else [status]
    seen["backward"] = check_backward(shape)[0]
    seen["backward"] = "right" if seen["backward"] == "right" else [seen["backward"]]
    return seen
