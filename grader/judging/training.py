"""Judging a training function: the parameters after each step and the losses it returns, against the
reference engine's own training on the same model, data and rate.

What moved and what came out right step by step is what ``grader.diagnosis.rules`` reads; where an
update is wrong but steady (uphill, too far), whether the second step also moved by the first step's
gradients (``accumulates``) tells a missing reset apart behind it.
"""

from __future__ import annotations

import functools
import math

import reference
from grader.exercise.cases import MODEL_INPUTS, MODEL_LAYERS, Case
from grader.judging.judge import Tolerance, Verdict, close, malformed, received_error, shown, valid_list


def parameter_name(index: int, nin: int = MODEL_INPUTS, layers: tuple[int, ...] = MODEL_LAYERS) -> str:
    """A parameter as a person finds it in the model: ``layer 2, neuron 3, weight 1`` (or ``bias``),
    counted from 1, in the MLP's order (layer by layer, neuron by neuron, weights then bias)."""
    for layer, size in enumerate(layers, 1):
        per_neuron = nin + 1
        if index < size * per_neuron:
            neuron, k = divmod(index, per_neuron)
            what = "bias" if k == nin else f"weight {k + 1}"
            return f"layer {layer}, neuron {neuron + 1}, {what}"
        index -= size * per_neuron
        nin = size
    raise IndexError(index)


def reference_model(weights: list[float]) -> reference.MLP:
    model = reference.MLP(MODEL_INPUTS, list(MODEL_LAYERS))
    for p, w in zip(model.parameters(), weights):
        p.data = w
    return model


_TRAJECTORIES: dict[tuple, tuple[reference.MLP, list, list]] = {}  # by (weights, xs, ys, lr)


def reference_training(weights: list[float], xs: list, ys: list, lr: float, steps: int) -> dict:
    """Losses and parameters after each of ``steps`` reference training steps.

    Training from the same start at the same rate is one trajectory, whatever
    number of steps a case asks for: it is computed once a process, as far as
    the longest case needs, and each case reads its first ``steps``."""
    key = (tuple(weights), tuple(map(tuple, xs)), tuple(ys), lr)
    if key not in _TRAJECTORIES:
        if len(_TRAJECTORIES) >= 16:
            _TRAJECTORIES.clear()
        _TRAJECTORIES[key] = (reference_model(weights), [], [])
    model, losses, params = _TRAJECTORIES[key]
    while len(losses) < steps:
        losses.append(reference.train_step(model, xs, ys, lr))
        params.append([p.data for p in model.parameters()])
    return {"losses": losses[:steps], "params": params[:steps]}


def loss_at(weights: list, xs: list, ys: list) -> float | None:
    """The loss of the reference MLP with these parameters (``None`` if they are not all finite
    numbers, or so large the loss overflows)."""
    if not all(isinstance(w, float) and math.isfinite(w) for w in weights):
        return None
    return _loss_at(tuple(weights), tuple(map(tuple, xs)), tuple(ys))


@functools.lru_cache(maxsize=256)
def _loss_at(weights: tuple, xs: tuple, ys: tuple) -> float | None:
    model = reference_model(weights)
    try:
        return sum(((model(x) - y) ** 2 for x, y in zip(xs, ys)), reference.Value(0.0)).data
    except OverflowError:
        return None


def reference_gradients(weights: list, xs: list, ys: list) -> list[float] | None:
    """Every parameter's gradient of the reference loss at ``weights`` (``None`` where it is not finite)."""
    if not all(isinstance(w, float) and math.isfinite(w) for w in weights):
        return None
    return _gradients(tuple(weights), tuple(map(tuple, xs)), tuple(ys))


@functools.lru_cache(maxsize=256)
def _gradients(weights: tuple, xs: tuple, ys: tuple) -> list[float] | None:
    model = reference_model(list(weights))
    try:
        sum(((model(x) - y) ** 2 for x, y in zip(xs, ys)), reference.Value(0.0)).backward()
    except OverflowError:
        return None
    grads = [p.grad for p in model.parameters()]
    return grads if all(math.isfinite(g) for g in grads) else None


def accumulates(weights: list, params: list, xs: list, ys: list, tol: float) -> bool:
    """Whether an update that is wrong but steady (every parameter moved by the same multiple ``c`` of its
    gradient in the first step: uphill, too far) moved the second step by ``c`` times the gradients of both
    steps: the gradients were never reset between them. (A right update shows it by itself.)"""
    if len(params) < 2 or not all(isinstance(x, float) and math.isfinite(x) for x in [*params[0], *params[1]]):
        return False
    first, second = reference_gradients(weights, xs, ys), reference_gradients(params[0], xs, ys)
    if first is None or second is None or not any(first):
        return False
    moved = [p - w for p, w in zip(params[0], weights)]
    c = sum(m * g for m, g in zip(moved, first)) / sum(g * g for g in first)
    if c == 0 or not all(close(m, c * g, tol) for m, g in zip(moved, first)):
        return False
    piled = [p + c * (g1 + g2) for p, g1, g2 in zip(params[0], first, second)]
    reset = [p + c * g2 for p, g2 in zip(params[0], second)]
    return (all(close(x, y, tol) for x, y in zip(params[1], piled))
            and not all(close(x, y, tol) for x, y in zip(params[1], reset)))


def judge_train(case: Case, weights: list[float], xs: list, ys: list, reply: dict, tolerance: Tolerance) -> Verdict:
    """Compare parameters after every step, and the losses returned, with the reference."""
    verdict = Verdict(case)
    if "error" in reply:
        verdict.error = received_error(reply["error"])
        return verdict
    want = reference_training(weights, xs, ys, case.lr, case.steps)
    losses, params = reply.get("losses"), reply.get("params")
    if not (valid_list(losses, case.steps) and valid_list(params, case.steps)
            and all(valid_list(p, len(weights)) for p in params)):
        return malformed(case, "the reply does not have the expected shape")
    moved = [any(not close(x, w, tolerance.reference) for x, w in zip(step, weights)) for step in params]
    right = [all(close(x, w, tolerance.reference) for x, w in zip(got, exp))
             for got, exp in zip(params, want["params"])]
    verdict.grads_ok = all(right)
    # Each returned loss is judged on the parameters the student's own previous
    # step left, so a wrong update does not also count as a wrong loss.
    before = [weights, *params[:-1]]
    expected_losses = [loss_at(p, xs, ys) for p in before]
    verdict.forward_ok = all(e is None or close(x, e, tolerance.reference) for x, e in zip(losses, expected_losses))
    verdict.train = {"right_steps": right, "moved": moved,
                     "accumulates": accumulates(weights, params, xs, ys, tolerance.reference)}
    if not verdict.forward_ok:  # the first step whose returned loss is wrong, counted from 1 as the weights are
        k = next(k for k, (x, e) in enumerate(zip(losses, expected_losses))
                 if e is not None and not close(x, e, tolerance.reference))
        verdict.expected = {f"loss returned by step {k + 1}": expected_losses[k]}
        verdict.actual = {f"loss returned by step {k + 1}": shown(losses[k])}
    first_wrong = next((k for k, ok in enumerate(right) if not ok), None)
    if first_wrong is not None and verdict.forward_ok:
        got, exp = params[first_wrong], want["params"][first_wrong]
        worst = max(range(len(weights)),
                    key=lambda i: abs(got[i] - exp[i]) if isinstance(got[i], float) else math.inf)
        name = f"{parameter_name(worst)} after step {first_wrong + 1}"
        verdict.expected = {name: exp[worst]}
        verdict.actual = {name: shown(got[worst])}
    return verdict
