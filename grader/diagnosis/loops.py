"""A training function of the course's signature: what it visibly does, and where its diagnoses point.

Its verdicts have the shape of ``train_step``'s, so the same rules name its
misconceptions (``rules.diagnose_train``). When no parameter moved, what it did
is read first from the calls the child saw it make of the grader's ``backward``,
``zero_grad`` and ``step`` (an optimizer's ``step`` is an update), then from its
syntax tree (a hand-written update). Inside a loop over batches, a missing
statement belongs in the loop, beside the ``backward()`` call, not before it.
"""

from __future__ import annotations

import ast

from grader.diagnosis.blame import Written
from grader.diagnosis.syntax import Function, calls, statement_of
from grader.diagnosis.training import TrainShape, gradient_resets, parameter_loops, train_shape, train_statement
from grader.judging.judge import Verdict


def loop_shape(function: Function | None, verdicts: list[Verdict]) -> TrainShape | None:
    """What the function visibly does: what the child saw it call (the first call of every case), and what
    its code writes."""
    written = train_shape(function)
    events = [e for v in verdicts if v.error is None and v.train for e in v.train.get("events", [])]
    if not events:
        return written
    stepped = any(e == "step" for e in events[events.index("backward"):]) if "backward" in events else False
    updates = stepped or (written is not None and written.updates)
    return TrainShape("backward" in events, updates, stepped or (written is not None and written.updates_data),
                      written is not None and written.updates_returned)


def loop_statement(code: str, function: Function, verdict: Verdict | None) -> ast.AST | None:
    """For a diagnosis of a training function: the statement at fault, or where the missing one belongs, in
    the block of its ``backward()`` call (a loop's body)."""
    backward = calls(function, "backward")
    if code == "missing-zero-grad" and not gradient_resets(function) and backward:
        return statement_of(function, backward[0])
    if code == "missing-update" and backward and not calls(function, "step") and not parameter_loops(function):
        return following(function, statement_of(function, backward[-1]))
    if code == "missing-backward":
        loops = parameter_loops(function)
        steps = calls(function, "step")
        if loops or steps:  # where the backward pass belongs: right before the update
            return loops[0] if loops else statement_of(function, steps[0])
    if code == "wrong-loss" and verdict is not None and verdict.train and all(verdict.train["right_steps"]):
        recorded = records(function)
        if recorded:  # the steps are right: what is recorded for return is not their loss
            return recorded[0]
    if code == "zero-grad-misplaced":
        steps = calls(function, "step")
        resets = [r for r in gradient_resets(function) if backward and r.lineno > backward[0].lineno
                  and (not steps or r.lineno < steps[0].lineno)]
        if resets:
            return resets[0]
    return train_statement(code, function, verdict)


def loop_location(function: Written | None, code: str, verdict: Verdict | None):
    """The location of a training function's diagnosis (its ``def`` when nothing better is found)."""
    if function is None:
        return None
    try:
        return function.at(loop_statement(code, function.node, verdict))
    except (AttributeError, IndexError, KeyError, TypeError, ValueError):
        return function.at(None)


def following(function: Function, stmt: ast.stmt | None) -> ast.stmt | None:
    """The statement after ``stmt`` in its block, where one missing after it belongs (``stmt`` itself when it
    ends its block)."""
    for block in (n for n in ast.walk(function) if isinstance(getattr(n, "body", None), list)):
        for body in (block.body, getattr(block, "orelse", [])):
            if stmt in body:
                k = body.index(stmt)
                return body[k + 1] if k + 1 < len(body) else stmt
    return stmt


def records(function: Function) -> list[ast.stmt]:
    """The statements that add to the list the function returns (``history.append(...)`` before
    ``return history``)."""
    returned = next((s for s in reversed(function.body) if isinstance(s, ast.Return)), None)
    if returned is None or not isinstance(returned.value, ast.Name):
        return []
    name = returned.value.id
    return [statement_of(function, c) for c in calls(function, "append")
            if isinstance(c.func, ast.Attribute) and isinstance(c.func.value, ast.Name) and c.func.value.id == name]
