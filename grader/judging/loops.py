"""Judging a training function of the course's signature: every step it took against the reference's.

The reference trains the same MLP from the same weights with the course's loss
and plain SGD, step by step over the call's batches and epochs. The learner's
steps are read from what the child saw at each ``backward()`` (the parameters
then are those the step before left) and after each call. Each returned loss
is judged on the parameters the learner's own previous steps left, so a wrong
update does not also count as a wrong loss. The verdict has the shape the
``train_step`` rules read (``right_steps``, ``moved``), so its diagnoses carry over.
"""

from __future__ import annotations

import functools
import math

import reference
from grader.exercise.loops import LoopCase, classifies, data, initial_weights
from grader.judging.judge import Tolerance, Verdict, close, received_error, shown, valid_list
from grader.judging.training import parameter_name


@functools.cache
def loop_request(case: LoopCase, kind: str, needs: str) -> dict:
    """The child's request for a training case (made once a process)."""
    xs, ys = data(case)
    return {"kind": kind, "needs": needs, "sizes": list(case.sizes), "activation": case.activation,
            "weights": initial_weights(case.sizes), "xs": [list(x) for x in xs], "ys": list(ys),
            "classes": classifies(case.loss),
            "loss": case.loss, "lr": case.lr, "calls": case.calls, "call": case.parsed.as_request(),
            "epochs": case.setting("epochs", 1), "batch_size": case.setting("batch_size", 0)}


def model_at(case: LoopCase, weights: list[float]) -> reference.nn.Model:
    model = reference.nn.Model(case.sizes[0], list(case.sizes[1:]), activation=case.activation)
    for p, w in zip(model.parameters(), weights):
        p.data = w
    return model


def batch_of(case: LoopCase, batch: list[int]) -> tuple[list, list]:
    xs, ys = data(case)
    return [xs[i] for i in batch], [ys[i] for i in batch]


def learners_schedule(case: LoopCase, calls: list) -> tuple[tuple[tuple[int, ...], ...], ...]:
    """The batches of every call as the learner's function formed them (it may shuffle the examples), where
    they make the course's epochs: the course's batch sizes (any one size, where the course's call passes none:
    one example a step, or all of them), every example once an epoch; else the course's batches in order."""
    planned = case.schedule()
    epochs_asked = max(1, case.setting("epochs", 1))
    count = len(data(case)[0])
    free = case.parsed.given("batch_size") is None  # the call passes no batch size: the loop's own choice
    found = []
    for record in calls:
        batches = [tuple(s["batch"]) if isinstance(s.get("batch"), list) else () for s in record["snapshots"]]
        per_epoch = len(batches) // epochs_asked if free else len(planned) // epochs_asked
        sizes = sorted(len(b) for b in (batches if free else planned)[:per_epoch])
        epochs = [batches[k:k + per_epoch] for k in range(0, len(batches), per_epoch)] if per_epoch else []
        valid = (len(batches) == per_epoch * epochs_asked if free else len(batches) == len(planned)) and all(
            sorted(map(len, epoch)) == sizes and sorted(i for b in epoch for i in b) == list(range(count))
            for epoch in epochs) and bool(epochs)
        found.append(tuple(batches) if valid else tuple(map(tuple, planned)))
    return tuple(found)


@functools.lru_cache(maxsize=64)
def reference_loop(case: LoopCase, schedule: tuple[tuple[tuple[int, ...], ...], ...]
                   ) -> tuple[tuple[tuple[float, ...], ...], ...]:
    """The reference's parameters after every step of every call, each call's steps on ``schedule``'s batches."""
    model = model_at(case, initial_weights(case.sizes))
    criterion, optimizer = reference.nn.Loss(case.loss), reference.nn.SGD(model.parameters(), lr=case.lr)
    found = []
    for batches in schedule:
        steps = []
        for batch in batches:
            xs, ys = batch_of(case, batch)
            loss = criterion(model(xs), ys)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            steps.append(tuple(p.data for p in model.parameters()))
        found.append(tuple(steps))
    return tuple(found)


def loss_at(case: LoopCase, weights: list, batch: list[int]) -> float | None:
    """The course's loss of the reference MLP with these parameters on ``batch`` (``None`` where they are not
    one finite number for each of its parameters, or the loss overflows)."""
    if len(weights) != len(initial_weights(case.sizes)) or not all(
            isinstance(w, float) and math.isfinite(w) for w in weights):
        return None
    return _loss_at(case, tuple(weights), tuple(batch))


@functools.lru_cache(maxsize=512)
def _loss_at(case: LoopCase, weights: tuple, batch: tuple) -> float | None:
    xs, ys = batch_of(case, list(batch))
    try:
        return reference.nn.Loss(case.loss)(model_at(case, list(weights))(xs), ys).data
    except (OverflowError, ValueError, ZeroDivisionError):
        return None


def aggregate(returns: str, losses: list) -> object:
    """What the function should return, from its steps' losses."""
    if returns == "losses" or any(x is None for x in losses):
        return losses
    return {"loss": losses[0], "mean": sum(losses) / len(losses), "last": losses[-1]}[returns]


def matches(got: object, want: object, tol: float) -> bool:
    if isinstance(want, list):
        return isinstance(got, list) and len(got) == len(want) and all(
            w is None or close(g, w, tol) for g, w in zip(got, want))
    return close(got, want, tol)


def judge_loop(case: LoopCase, reply: dict, tolerance: Tolerance) -> Verdict:
    """Compare every step's parameters, the losses backpropagated and what each call returned with the reference."""
    if "error" in reply:
        return Verdict(case, error=received_error(reply["error"]))
    calls = reply["calls"]
    start = initial_weights(case.sizes)
    if not valid_list(calls, case.calls):
        raise ValueError("not one record per call")
    schedules = learners_schedule(case, calls)
    want = reference_loop(case, schedules)
    right, moved, returned_ok, losses_ok = [], [], [], True
    first_loss = None
    before_call = start
    for c, record in enumerate(calls):
        schedule = [list(b) for b in schedules[c]]
        snapshots, final = record["snapshots"], record["params"]
        if not (isinstance(snapshots, list) and valid_list(final, len(start))):
            raise ValueError("a call's record is not readable")
        after = [s["params"] for s in snapshots[1:]] + [final]
        if len(after) != len(schedule):
            after = [None] * (len(schedule) - 1) + [final]
        before = [before_call, *after[:-1]]
        expected_losses = [loss_at(case, b, batch) if b is not None else None for b, batch in zip(before, schedule)]
        for got, exp in zip(after, want[c]):
            ok = got is not None and valid_list(got, len(exp)) and all(close(x, w, tolerance.reference)
                                                                        for x, w in zip(got, exp))
            right.append(ok)
            moved.append(got is not None and any(not close(x, w, tolerance.reference) for x, w in zip(got, start)))
        if len(snapshots) == len(schedule):
            losses_ok &= all(e is None or close(s["loss"], e, tolerance.reference)
                             for s, e in zip(snapshots, expected_losses))
        if case.returns != "nothing":
            expect = aggregate(case.returns, expected_losses)
            ok = matches(record["returned"], expect, tolerance.reference)
            returned_ok.append(ok)
            if not ok and first_loss is None:
                first_loss = (c, expect, record["returned"])
        before_call = final
    verdict = Verdict(case)
    verdict.grads_ok = all(right)
    verdict.forward_ok = all(returned_ok) and losses_ok
    verdict.train = {"right_steps": right, "moved": moved, "events": list(calls[0].get("events", []))[:200],
                     "left": [s.get("left") for s in calls[0]["snapshots"]]}
    if first_loss is not None:
        c, expect, got = first_loss
        name = f"{'losses' if case.returns == 'losses' else 'loss'} returned by call {c + 1}"
        verdict.expected, verdict.actual = {name: expect}, {name: shown_returned(got)}
    elif not all(right):
        k = right.index(False)
        c, step = next((c, k - sum(len(w) for w in want[:c])) for c in range(len(want))
                       if k < sum(len(w) for w in want[:c + 1]))
        record, exp = calls[c], want[c][step]
        snapshots = record["snapshots"]
        got = (snapshots[step + 1]["params"] if step + 1 < len(snapshots) else record["params"])
        worst = max(range(len(exp)), key=lambda i: abs(got[i] - exp[i]) if isinstance(got[i], float) else math.inf)
        name = f"{parameter_name(worst, case.sizes[0], case.sizes[1:])} after step {k + 1}"
        verdict.expected, verdict.actual = {name: exp[worst]}, {name: shown(got[worst])}
    return verdict


def shown_returned(x: object) -> object:
    return [shown(v) for v in x] if isinstance(x, list) else shown(x)
