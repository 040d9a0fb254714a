"""What ``train_step`` visibly does, and where a diagnosis of it points.

When no parameter moved, the syntax tree tells why (no ``backward()`` call, no update
after one, an update of the gradients instead of the data); any diagnosis of
``train_step`` points at the statement at fault, or where the missing one belongs.
Read from the tree, never run.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from grader.diagnosis.syntax import (
    Function,
    attribute_target,
    calls,
    last_statement,
    owner,
    statement_of,
    statements,
    top_level,
)
from grader.judging.judge import Verdict
from grader.submission.tree import walk


@dataclass(frozen=True)
class TrainShape:
    """What ``train_step`` visibly does: the facts its diagnosis needs when no parameter moved."""

    calls_backward: bool
    updates: bool  # assigns to some attribute inside a loop over the parameters, after a backward pass
    updates_data: bool  # ... and that attribute is ``.data`` of the loop's parameter
    updates_returned: bool = False  # ... or the ``.data`` of what the function returns (``loss.data += ...``)


def parameter_loops(function: Function) -> list[ast.For]:
    """The loops over the model's parameters (``for p in model.parameters()``)."""
    return [n for n in walk(function) if isinstance(n, ast.For) and (
        calls(n.iter, "parameters") or (isinstance(n.iter, ast.Attribute) and n.iter.attr == "parameters"))]


def update_statements(function: Function) -> list[ast.stmt]:
    """Assignments to ``p.data`` (or, by mistake, ``p.grad``) inside a loop over the parameters,
    other than a reset to zero."""
    found = []
    for loop in parameter_loops(function):
        for stmt in statements(loop):
            target = attribute_target(stmt, "data") or attribute_target(stmt, "grad")
            if target is None:
                continue
            value = getattr(stmt, "value", None)
            if isinstance(stmt, ast.Assign) and isinstance(value, ast.Constant) and value.value == 0:
                continue
            found.append(stmt)
    return sorted(found, key=lambda s: s.lineno)


def misplaced_updates(function: Function) -> list[ast.stmt]:
    """Updates that never follow a backward pass: written before the first ``backward()`` call,
    or after the ``return`` that ends the function."""
    backward = calls(function, "backward")
    returned = next((s for s in function.body if isinstance(s, ast.Return)), None)
    return [s for s in update_statements(function)
            if (backward and s.lineno < backward[0].lineno) or (returned is not None and s.lineno > returned.lineno)]


def loop_variable(function: Function, stmt: ast.stmt) -> str | None:
    """The parameter a loop over the model's parameters names (``p`` of ``for p in ...``), for ``stmt`` in it."""
    for loop in parameter_loops(function):
        if isinstance(loop.target, ast.Name) and any(s is stmt for s in statements(loop)):
            return loop.target.id
    return None


def returned_name(function: Function) -> str | None:
    """The variable the function returns the data of, or returns (``loss`` of ``return loss.data``)."""
    returned = next((s for s in reversed(function.body) if isinstance(s, ast.Return)), None)
    value = returned.value if returned is not None else None
    if isinstance(value, ast.Attribute):
        value = value.value
    return value.id if isinstance(value, ast.Name) else None


def train_shape(function: Function | None) -> TrainShape | None:
    if function is None:
        return None
    misplaced = misplaced_updates(function)
    updates = [s for s in update_statements(function) if s not in misplaced]
    data = [(s, target) for s in updates if (target := attribute_target(s, "data")) is not None]
    loss = returned_name(function)
    return TrainShape(bool(calls(function, "backward")), bool(updates),
                      any(owner(target) in (None, loop_variable(function, s)) for s, target in data),
                      loss is not None and any(owner(target) == loss for _, target in data))


def gradient_resets(function: Function) -> list[ast.AST]:
    """Where gradients are reset: each ``zero_grad()`` call's statement, and each ``p.grad = 0``
    in a loop, in source order."""
    found: list[ast.AST] = [statement_of(function, call) for call in calls(function, "zero_grad")]
    for loop in (n for n in walk(function) if isinstance(n, ast.For)):
        resets = [s for s in loop.body if isinstance(s, ast.Assign) and attribute_target(s, "grad") is not None
                  and isinstance(s.value, ast.Constant) and s.value.value == 0]
        # A loop that only resets is the reset; in a loop that also updates, the reset statement is.
        found.extend([loop] if resets and len(resets) == len(loop.body) else resets)
    return sorted((n for n in found if n is not None), key=lambda n: n.lineno)


def train_statement(code: str, function: Function, verdict: Verdict | None) -> ast.AST | None:
    """For a diagnosis of ``train_step``: the statement at fault, or where the missing one belongs."""
    backward = calls(function, "backward")
    resets = gradient_resets(function)
    updates = update_statements(function)
    returned = next((s for s in reversed(function.body) if isinstance(s, ast.Return)), None)
    if code == "missing-zero-grad":
        return resets[0] if resets else (top_level(function, backward[0]) if backward else None)
    if code == "zero-grad-misplaced":
        return resets[-1] if resets else None
    if code == "missing-backward":
        return top_level(function, updates[0]) if updates else returned
    if code == "missing-update":
        misplaced = misplaced_updates(function)
        if misplaced:
            return top_level(function, misplaced[0])
        for loop in parameter_loops(function):
            if not any(s in updates for s in statements(loop)):
                return loop.body[0]  # a loop over the parameters that updates none
        if backward:
            after = top_level(function, backward[-1])
            rest = function.body[function.body.index(after) + 1:] if after in function.body else []
            return rest[0] if rest else after
        return returned
    if code == "wrong-update":
        return updates[0] if updates else None
    if code == "wrong-loss":
        if returned is None:
            return last_statement(function.body[-1])  # no return: it belongs after the last statement
        wrong_grads = verdict is not None and (verdict.error or verdict.train and not verdict.train["right_steps"][0])
        if wrong_grads and backward:
            # The gradients are wrong too, or there are none: the loss itself is computed wrongly.
            return loss_statement(function, backward[0]) or returned
        return returned
    return None


def loss_statement(function: Function, backward: ast.Call) -> ast.stmt | None:
    """The assignment of the variable whose ``backward()`` is called."""
    if not isinstance(backward.func, ast.Attribute) or not isinstance(backward.func.value, ast.Name):
        return None
    name = backward.func.value.id
    assigned = [s for s in statements(function) if isinstance(s, ast.Assign) and s.lineno < backward.lineno
                and any(isinstance(t, ast.Name) and t.id == name for t in s.targets)]
    return assigned[-1] if assigned else None
