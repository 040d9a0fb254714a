"""Naming what is wrong with a gradient the learner derived, from its verdicts at several points.

A function that returns the same numbers wherever it is asked, while the course's
function's gradient changes from point to point, returns constants: numbers pasted
from the course's check, not a gradient (``pasted-constants``). Any other wrong
number is a derivative that is not the course's function's (``wrong-derivative``):
the message names the partial derivatives that are wrong at the smallest point.
"""

from __future__ import annotations

import ast

from grader.diagnosis.rules import smallest, unusable_and_errors
from grader.diagnosis.syntax import Function
from grader.judging.judge import Verdict, close
from grader.submission.tree import walk


def gradient_codes(verdicts: list[Verdict]) -> dict[str, Verdict]:
    """The codes of a gradient target, each with the smallest verdict that shows it."""
    unusable, errors = unusable_and_errors(verdicts)
    if unusable:
        return unusable
    if errors:
        return {"crash": smallest(errors)}
    wrong = [v for v in verdicts if not v.passed("grad")]
    if not wrong:
        return {}
    if pasted(verdicts):
        return {"pasted-constants": smallest(wrong)}
    return {"wrong-derivative": smallest(wrong)}


def pasted(verdicts: list[Verdict]) -> bool:
    """Whether the function returned one list of numbers at every point, where the right gradients differ."""
    answered = [v for v in verdicts if v.error is None and v.actual]
    returned = {tuple(v.actual.values()) for v in answered}
    expected = {tuple(round(x, 9) for x in v.expected.values()) for v in answered}
    return len(answered) > 1 and len(returned) == 1 and len(expected) > 1


def wrong_partials(verdict: Verdict) -> list[str]:
    """The partial derivatives ``verdict`` got wrong, in the order of the inputs."""
    return [name for name, want in verdict.expected.items()
            if not close(verdict.actual.get(name), want)]


def note(verdict: Verdict | None) -> str:
    """What a ``wrong-derivative`` shows: which partial derivatives are wrong."""
    wrong = wrong_partials(verdict) if verdict is not None and verdict.error is None else []
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
    if code != "wrong-derivative" or verdict is None or not isinstance(back.value, (ast.List, ast.Tuple)):
        return back
    wrong = wrong_partials(verdict)
    names = list(verdict.expected)
    index = names.index(wrong[0]) if wrong else 0
    if index >= len(back.value.elts) or not isinstance(back.value.elts[index], ast.Name):
        return back
    name = back.value.elts[index].id
    assigned = [n for n in walk(function) if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign))
                and n.lineno < back.lineno and any(isinstance(t, ast.Name) and t.id == name
                                                   for t in (n.targets if isinstance(n, ast.Assign) else [n.target]))]
    return assigned[-1] if assigned else back
