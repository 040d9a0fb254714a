"""Naming what is wrong with an optimizer's ``step`` or ``zero_grad``, and the statement at fault.

A ``step`` that changes no parameter's data (nor its gradient) updates nothing
(``missing-update``); one that moves them otherwise than by ``-lr * grad`` with
the gradient of that step, or changes the gradients instead, has the wrong
update (``wrong-update``). A ``zero_grad`` that leaves a gradient other than 0 is
``grad-not-reset``; one that changes the data instead is a wrong update.
"""

from __future__ import annotations

import ast

from grader.diagnosis.blame import error_location
from grader.diagnosis.members import Member, find_class, find_method, first_stub
from grader.diagnosis.modules import body_statements, grad_reset
from grader.diagnosis.rules import smallest, unusable_and_errors
from grader.exercise.targets import Target
from grader.judging.judge import Verdict
from grader.submission.source import Location, Submission
from grader.submission.tree import walk


def optimizer_codes(verdicts: list[Verdict]) -> dict[str, Verdict]:
    """The codes of an optimizer target, each with the smallest case that shows it."""
    unusable, errors = unusable_and_errors(verdicts)
    if unusable:
        return unusable
    codes: dict[str, Verdict] = {}
    if errors:
        codes["crash"] = smallest(errors)
    for verdict in sorted((v for v in verdicts if v.error is None and not v.grads_ok), key=lambda v: v.case.rank):
        k = verdict.train["right_steps"].index(False)
        moved, touched = verdict.train["moved"][k], verdict.train["touched"][k]
        if verdict.case.method == "zero_grad":
            # The first number that differs says which: a gradient left, or the data changed instead.
            codes.setdefault("grad-not-reset" if any(".grad" in name for name in verdict.expected) else
                             "wrong-update", verdict)
        else:
            codes.setdefault("wrong-update" if moved or touched else "missing-update", verdict)
    return codes


def optimizer_location(code: str, target: Target, verdict: Verdict | None, submission: Submission
                       ) -> Location | None:
    """Where an optimizer's diagnosis points: the statement of its method most likely at fault."""
    graph = target.kind.name == "graph"  # a method of the learner's own class (or a function attached to it)
    cls = find_class(submission, submission.names[target.role] if graph else target.role.key)
    method = find_method(submission, cls, target.settings["method"])
    if method is None and graph:
        method = attached(submission, target.settings["method"])
    if method is None:
        return cls.at() if cls is not None else None
    if code == "not-implemented":
        return first_stub(method) or method.at()
    if verdict is not None and verdict.error is not None:
        return error_location(submission, verdict.error) or method.at()
    if code == "grad-not-reset":
        return method.at(grad_reset(method.node, target.words.grad))
    statements = body_statements(method.node)
    if code == "wrong-update":
        names = (target.words.value, target.words.grad)
        updates = [s for s in statements if any(isinstance(n, ast.Attribute) and n.attr in names
                                                and isinstance(n.ctx, ast.Store) for n in walk(s))]
        return method.at(updates[0] if updates else None)
    return method.at(statements[0] if statements else None)


def attached(submission: Submission, name: str) -> Member | None:
    """The top-level function ``name`` of any file of the submission (``def step(self, lr)``, attached to the class
    as ``Tensor.step = step``), the last definition."""
    found = None
    for source in submission.files:
        for unit in source.units:
            for node in unit.tree.body if unit.tree else ():
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
                    found = Member(node, source, unit)
    return found
