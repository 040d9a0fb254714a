"""The university homework: Value ops, a numpy Tensor of Values, nn, optim, and the training loop."""

from __future__ import annotations

import copy
import importlib
import json
import math
from collections.abc import Callable
from pathlib import Path

import numpy as np

from .harness import Shape, check_backward, check_isolated, check_op, propagate, replaced
from .running import UnitLoader, learner_imports, run_notebook

A = np.array([[0.5, -1.2, 2.0], [1.5, 0.3, -0.7]])
B = np.array([[1.1, 0.4, -0.9], [-2.0, 0.8, 1.3]])
M = np.array([[0.2, -0.5], [1.0, 0.7], [-0.3, 0.4]])
G = -1.7  # the gradient the output receives: a relu or an op that forgets out.grad shows


def _values(value_cls: type, array: np.ndarray) -> np.ndarray:
    out = np.empty(array.shape, dtype=object)
    for index, x in np.ndenumerate(array):
        out[index] = value_cls(float(x))
    return out


def _number(v: object) -> float:
    return float(getattr(v, "data", v))


def _graded(shape: Shape, leaves: list, outputs: list, want: np.ndarray,
            want_grads: list[np.ndarray]) -> tuple[str, str]:
    got = np.array([_number(v) for v in outputs])
    if got.shape != want.ravel().shape or not np.allclose(got, want.ravel(), rtol=1e-9, atol=1e-12):
        return "wrong-forward", f"values {got} instead of {want.ravel()}"
    total = outputs[0]
    for v in outputs[1:]:
        total = total + v
    propagate(shape, total, G)
    for leaf, grad in zip(leaves, want_grads):
        have = np.array([shape.gradient(v) for v in leaf.ravel()])
        if not np.allclose(have, G * grad.ravel(), rtol=1e-7, atol=1e-9):
            return "wrong-local-grad", f"gradients {have} instead of {G * grad.ravel()}"
    return "right", ""


def tensor_checks(engine) -> dict[str, Callable[[], tuple[str, str]]]:  # noqa: ANN001
    Tensor, Value = engine.Tensor, engine.Value
    shape = Shape(Value)

    def leaves(*arrays: np.ndarray) -> list[np.ndarray]:
        return [_values(Value, a) for a in arrays]

    def flat(t: object) -> list:
        return list(t.data.flat) if isinstance(t, Tensor) else [t]

    def radd():
        a, = leaves(A)
        return _graded(shape, [a], flat(2.5 + Tensor(a)), A + 2.5, [np.ones_like(A)])

    def mul():
        a, b = leaves(A, B)
        first = _graded(shape, [a, b], flat(Tensor(a) * Tensor(b)), A * B, [B, A])
        a, = leaves(A)
        second = _graded(shape, [a], flat(3.0 * Tensor(a)), 3.0 * A, [np.full_like(A, 3.0)])
        return first if first[0] != "right" else second

    def truediv():
        a, b = leaves(A, B)
        return _graded(shape, [a, b], flat(Tensor(a) / Tensor(b)), A / B, [1 / B, -A / B**2])

    def exp():
        a, = leaves(A)
        return _graded(shape, [a], flat(Tensor(a).exp()), np.exp(A), [np.exp(A)])

    def dot():
        a, m = leaves(A, M)
        ones = np.ones((2, 2))
        return _graded(shape, [a, m], flat(Tensor(a).dot(Tensor(m))), A @ M, [ones @ M.T, A.T @ ones])

    def maximum():
        a, = leaves(A)
        hot = (A == A.max(axis=1, keepdims=True)).astype(float)
        rows = _graded(shape, [a], flat(Tensor(a).max(axis=1)), A.max(axis=1), [hot])
        a, = leaves(A)
        whole = _graded(shape, [a], flat(Tensor(a).max()), np.array([A.max()]), [(A == A.max()).astype(float)])
        return rows if rows[0] != "right" else whole

    def argmax():
        got = np.asarray(Tensor(leaves(A)[0]).argmax(axis=1))
        if got.tolist() != A.argmax(axis=1).tolist():
            return "wrong-forward", f"argmax {got}"
        return ("right", "") if int(Tensor(leaves(A)[0]).argmax()) == int(A.argmax()) else ("wrong-forward", "")

    def reshape():
        a, = leaves(A)
        return _graded(shape, [a], flat(Tensor(a).reshape(3, 2)), A.reshape(3, 2), [np.ones_like(A)])

    def core():
        a, b = leaves(A, B)
        return _graded(shape, [a, b], flat(Tensor(a) + Tensor(b)), A + B, [np.ones_like(A), np.ones_like(B)])

    return {"Tensor.radd": radd, "Tensor.mul": mul, "Tensor.truediv": truediv, "Tensor.exp": exp,
            "Tensor.dot": dot, "Tensor.max": maximum, "Tensor.argmax": argmax, "Tensor.reshape": reshape,
            "Tensor.given": core}


def check_linear(nn, Value) -> tuple[str, str]:  # noqa: ANN001
    shape = Shape(Value)
    layer = nn.Linear(3, 2)
    W, b = layer.W, layer.b
    for (i, j), x in np.ndenumerate(M):
        W[i][j].data = x
    for j, x in enumerate((0.1, -0.2)):
        b[j].data = x
    params = layer.parameters()
    ids = {id(v) for v in [*np.asarray(W).flat, *np.asarray(b).flat]}
    if len(params) != 8 or {id(p) for p in params} != ids:
        return "wrong-parameters", f"parameters() gives {len(params)} items, not W's 6 and b's 2"
    X = A
    outputs = list(np.asarray(layer(X)).flat)
    return _graded(shape, [np.asarray(W), np.asarray(b)], outputs, X @ M + np.array([0.1, -0.2]),
                   [X.T @ np.ones((2, 2)), np.full(2, 2.0)])


def check_relu_module(nn, Value, inherits: list[str]) -> tuple[str, str]:  # noqa: ANN001
    shape = Shape(Value)

    def run() -> tuple[str, str]:
        x = _values(Value, A)
        return _graded(shape, [x], list(np.asarray(nn.ReLU()(x)).flat), np.maximum(A, 0), [(A > 0).astype(float)])

    status, detail = run()
    if status == "right" or not inherits:
        return status, detail
    with replaced(shape, inherits):
        alone, _ = run()
    return ("inherits", detail) if alone == "right" else (status, detail)


def check_cross_entropy(nn, Value) -> tuple[str, str]:  # noqa: ANN001
    shape = Shape(Value)
    logits = _values(Value, A * 3)
    target = np.array([2, 0])
    probs = np.exp(A * 3) / np.exp(A * 3).sum(axis=1, keepdims=True)
    want = -np.log(probs[[0, 1], target]).mean()
    hot = np.zeros_like(A)
    hot[[0, 1], target] = 1
    loss = nn.CrossEntropyLoss()(logits, target)
    if not math.isclose(_number(loss), want, rel_tol=1e-9):
        return "wrong-forward", f"loss {_number(loss)} instead of {want}"
    propagate(shape, loss, G)
    have = np.array([[shape.gradient(v) for v in row] for row in logits])
    if not np.allclose(have, G * (probs - hot) / 2, rtol=1e-7, atol=1e-9):
        return "wrong-local-grad", f"logit gradients {have.ravel()}"
    return "right", ""


def check_sgd(optim, Value) -> dict[str, tuple[str, str]]:  # noqa: ANN001
    params = [Value(1.0), Value(-2.0)]
    params[0].grad, params[1].grad = 0.5, -0.25
    opt = optim.SGD(params, lr=0.1)
    seen = {}
    try:
        opt.step()
        got = [p.data for p in params]
        seen["SGD.step"] = ("right", "") if np.allclose(got, [0.95, -1.975]) else ("wrong-update", f"data {got}")
    except NotImplementedError:
        seen["SGD.step"] = ("not-implemented", "")
    try:
        opt.zero_grad()
        grads = [p.grad for p in params]
        seen["SGD.zero_grad"] = ("right", "") if grads == [0, 0] else ("wrong-update", f"grads {grads}")
    except NotImplementedError:
        seen["SGD.zero_grad"] = ("not-implemented", "")
    return seen


def _epoch(model, criterion, optimizer, X, y, clear: bool) -> None:  # noqa: ANN001
    if clear:
        optimizer.zero_grad()
    criterion(model(X), y).backward()
    optimizer.step()


def check_training(train_one_epoch, solution) -> tuple[str, str]:  # noqa: ANN001
    """Two epochs of one batch each (shuffling cannot matter), against the right loop and a loop without zero_grad."""
    rng = np.random.RandomState(3)
    X, y = rng.normal(size=(6, 2)), np.array([0, 1, 1, 0, 1, 0])
    np.random.seed(5)
    start = solution.nn.Sequential(solution.nn.Linear(2, 3), solution.nn.ReLU(), solution.nn.Linear(3, 2))

    def trained(step) -> list[float]:  # noqa: ANN001
        model = copy.deepcopy(start)
        optimizer = solution.optim.SGD(model.parameters(), lr=0.3)
        for _ in range(2):
            step(model, solution.nn.CrossEntropyLoss(), optimizer, X, y)
        return [p.data for p in model.parameters()]

    try:
        got = trained(lambda *args: train_one_epoch(*args, batch_size=6))
    except NotImplementedError:
        return "not-implemented", ""
    for code, clear in (("right", True), ("missing-zero-grad", False)):
        if np.allclose(got, trained(lambda *args, c=clear: _epoch(*args, clear=c)), rtol=1e-9, atol=1e-12):
            return code, ""
    return "wrong-update", "the parameters match no loop"


def check(path: Path, verdict: dict) -> dict[str, tuple[str, str]]:
    learner_imports(path)
    learner_imports(path.parent / "solution", alias="course_solution", package="micrograd")
    engine = importlib.import_module("micrograd.engine")
    nn = importlib.import_module("micrograd.nn")
    optim = importlib.import_module("micrograd.optim")
    solution = importlib.import_module("course_solution")
    solution.nn = importlib.import_module("course_solution.nn")
    solution.optim = importlib.import_module("course_solution.optim")

    def inherits(part: str) -> list[str]:
        v = verdict.get(part)
        return v.get("inherits", []) if isinstance(v, dict) else []

    shape = Shape(engine.Value)
    seen = {f"Value.{op}": check_isolated(shape, op, inherits(f"Value.{op}")) for op in ("mul", "pow", "exp", "relu")}
    seen["Value.backward"] = check_backward(shape)
    with replaced(shape, ["mul", "pow"]):  # the given code, over right versions of what it calls
        given = [check_op(shape, op) for op in ("add", "log", "sub", "truediv", "radd", "rmul")]
    seen["Value.given"] = next((s for s in given if s[0] != "right"), ("right", ""))
    if hasattr(engine, "Tensor"):
        for part, run in tensor_checks(engine).items():
            try:
                seen[part] = run()
            except NotImplementedError:
                seen[part] = ("not-implemented", "")
    else:
        errors = UnitLoader.errors.get("micrograd.engine", [])
        for part in ("radd", "mul", "truediv", "exp", "dot", "max", "argmax", "reshape", "given"):
            seen[f"Tensor.{part}"] = ("load-error", str(errors[0]) if errors else "no Tensor")
    for part, run in (("Linear", lambda: check_linear(nn, engine.Value)),
                      ("ReLU", lambda: check_relu_module(nn, engine.Value, inherits("ReLU"))),
                      ("CrossEntropyLoss", lambda: check_cross_entropy(nn, engine.Value))):
        try:
            seen[part] = run()
        except NotImplementedError:
            seen[part] = ("not-implemented", "")
    seen.update(check_sgd(optim, engine.Value))
    seen["nn.given"] = ("right", "") if nn.Sequential and nn.Module().parameters() == [] else ("wrong-forward", "")
    notebook = run_notebook(path / "test_nn.ipynb")
    seen["train_one_epoch"] = check_training(notebook.namespace["train_one_epoch"], solution)
    seen.update(notebook_parts(path / "test_nn.ipynb", path.parent / "blank"))
    return seen


def notebook_parts(notebook: Path, blank: Path) -> dict[str, tuple[str, str]]:
    """What no grader can run (downloads, callbacks, the course's torch tests): seen as a human sees it."""
    cells = json.loads(notebook.read_text())["cells"]
    source = ["".join(c["source"]) for c in cells]
    runner = next(s for s in source if "class LossHistory" in s)
    mnist = [c for c in cells if "urlretrieve" in "".join(c["source"]) or "mnist_model" in "".join(c["source"])]
    given = (notebook.parent / "micrograd/test/test_engine.py").read_text() == \
        (blank / "micrograd/test/test_engine.py").read_text()
    return {"callbacks": ("not-implemented", "") if "YOUR CODE HERE" in runner else ("right", ""),
            "mnist": ("right", "") if all(c.get("outputs") for c in mnist) else ("not-implemented", "never run"),
            "test_engine": ("right", "") if given else ("wrong-forward", "the course's tests were changed")}
