"""Naming what is wrong with a gradient the learner derived, from its verdicts at several points.

A function that returns the same numbers wherever it is asked, while the course's
function's gradient changes from point to point, returns constants: numbers pasted
from the course's check, not a gradient (``pasted-constants``), or only zeros, as the
stub a course hands out does (``not-implemented``). Numbers near the derivatives
everywhere but exact nowhere they are told apart are estimates, a finite difference of
the function, not a derivation (``finite-difference``). Any other wrong
number is a derivative that is not the course's function's (``wrong-derivative``):
the message names the partial derivatives that are wrong at the smallest point.
"""

from __future__ import annotations

import ast

from grader.diagnosis.rules import settled, smallest
from grader.diagnosis.syntax import Function
from grader.judging.judge import Verdict, close
from grader.submission.tree import walk


def gradient_codes(verdicts: list[Verdict]) -> dict[str, Verdict]:
    """The codes of a gradient target, each with the smallest verdict that shows it."""
    codes, wrong = settled(verdicts, "grad")
    if codes is not None or not wrong:
        return codes or {}
    if pasted(verdicts):
        stub = all(x == 0.0 for x in smallest(wrong).actual.values())
        return {"not-implemented" if stub else "pasted-constants": smallest(wrong)}
    if all(v.details.get("estimate") for v in wrong):
        return {"finite-difference": smallest(wrong)}
    return {"wrong-derivative": smallest(wrong)}


def numbers(verdict: Verdict) -> bool:
    """Whether the function returned one number for each input."""
    return "length" not in verdict.faults and all(isinstance(x, float) for x in verdict.actual.values())


def pasted(verdicts: list[Verdict]) -> bool:
    """Whether the function returned the same numbers at every point, where the right gradients differ."""
    answered = [v for v in verdicts if v.error is None and v.actual]
    returned = {tuple(v.actual.values()) for v in answered}
    expected = {tuple(round(x, 9) for x in v.expected.values()) for v in answered}
    return len(answered) > 1 and all(map(numbers, answered)) and len(returned) == 1 and len(expected) > 1


def wrong_partials(verdict: Verdict) -> list[str]:
    """The partial derivatives ``verdict`` got wrong, in the order of the inputs."""
    return [name for name, want in verdict.expected.items() if not close(verdict.actual.get(name), want)]


STUB = "It returns 0 for every partial derivative wherever it is asked, as an unfinished stub does."


def note(code: str, verdict: Verdict | None) -> str:
    """What a gradient's diagnosis shows: which partial derivatives are wrong, or that it returns only zeros."""
    if code == "not-implemented" and verdict is not None and verdict.error is None:
        return STUB
    if code != "wrong-derivative" or verdict is None or verdict.error is not None:
        return ""
    if not numbers(verdict):
        shown = [x for x in verdict.actual.values() if not isinstance(x, float)]
        return (f"It must return one number for each of the {len(verdict.expected)} inputs, in their order"
                + (f"; it returned {shown[0]} among them." if shown else "."))
    wrong = wrong_partials(verdict)
    if not wrong or len(wrong) == len(verdict.expected):
        return ""
    right = [name for name in verdict.expected if name not in wrong]
    return f"Wrong: {', '.join(wrong)}; right: {', '.join(right)}."


def gradient_statement(code: str, function: Function, verdict: Verdict | None) -> ast.stmt | None:
    """The statement at fault in a hand-derived gradient function: the one that computes the first wrong
    partial derivative (a name the ``return`` lists, where it was last assigned), else the ``return``."""
    returns = [n for n in walk(function) if isinstance(n, ast.Return) and n.value is not None]
    if not returns:
        return None
    back = returns[-1]
    if code != "wrong-derivative" or verdict is None or not numbers(verdict):
        return back
    wrong = wrong_partials(verdict)
    index = list(verdict.expected).index(wrong[0]) if wrong else 0
    returned = back.value
    if isinstance(returned, ast.Call) and isinstance(returned.func, ast.Name) and returned.args and \
            returned.func.id in ("list", "tuple"):
        returned = returned.args[0]  # return tuple(grads)
    if isinstance(returned, (ast.List, ast.Tuple)):
        item = returned.elts[index] if index < len(returned.elts) else None
        return last_assignment(function, item.id, back.lineno) if isinstance(item, ast.Name) else back
    if isinstance(returned, ast.Name) and isinstance(
            made := last_assignment(function, returned.id, back.lineno), ast.Assign) and isinstance(
            made.value, (ast.List, ast.Tuple)) and made.value.elts:
        return made  # ``g = [...]; return g``: the list written out, every partial derivative in it
    if isinstance(returned, ast.Name):  # built by appends: the one for this input
        appends = [n for n in walk(function) if isinstance(n, ast.Expr) and isinstance(n.value, ast.Call)
                   and isinstance(n.value.func, ast.Attribute) and n.value.func.attr == "append"
                   and isinstance(n.value.func.value, ast.Name) and n.value.func.value.id == returned.id]
        return appends[index] if index < len(appends) else back
    return back


def last_assignment(function: Function, name: str, before: int) -> ast.stmt | None:
    """The last statement before line ``before`` that assigns ``name`` in ``function``."""
    assigned = [n for n in walk(function) if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign))
                and n.lineno < before and any(isinstance(t, ast.Name) and t.id == name
                                              for t in (n.targets if isinstance(n, ast.Assign) else [n.target]))]
    return assigned[-1] if assigned else None
