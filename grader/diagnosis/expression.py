"""Naming what is wrong with a whole computation, saying it, and pointing at it.

The judge said, for each failing case, what is at fault (``grader.judging.expression``):
one op of the learner's class that is not graded on its own (its misconception, pointed at
that op's method, as the op's own diagnosis would be), or the learner's function (its
``.data`` that the graph cannot see, pointed at the statement that reads it; or a wrong
value, pointed at its ``return``). A computation whose only fault is an op graded on its own
inherits that op's bug: it is not charged for it, and a warning says so.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

from grader.diagnosis import blame, feedback
from grader.diagnosis.findings import Diagnosis, TargetOutcome
from grader.diagnosis.gradients import last_assignment
from grader.diagnosis.numeric import own_return
from grader.diagnosis.rules import settled, smallest
from grader.diagnosis.syntax import Function, grad_updates, parameter, statement_of
from grader.exercise.expression import RESULT
from grader.exercise.ops import OPS
from grader.exercise.targets import Target
from grader.judging.judge import Verdict
from grader.submission.source import Location, Submission
from grader.submission.tree import walk


def expression_codes(verdicts: list[Verdict]) -> dict[str, Verdict]:
    """The code of a whole computation, with the smallest verdict that shows it."""
    codes, wrong = settled(verdicts, "both")
    if codes is not None or not wrong:
        return codes or {}
    worst = smallest(wrong)
    return {worst.details.get("code", "wrong-expression"): worst}


def fault_of(verdict: Verdict | None) -> str | None:
    """The op of the learner's class at fault in ``verdict``'s case (``backward`` for its seed), if one is."""
    return verdict.details.get("fault") if verdict is not None else None


def note(code: str, verdict: Verdict | None, target: str, result: str) -> str:
    """What the computation shows of its fault: the op it comes from, where it is one."""
    op = fault_of(verdict)
    if op is None:
        return ""
    why = (f"{op} passes its own checks, so this computation is charged for it" if verdict.details.get("uncharged")
           else f"{op} is not graded on its own in this course")
    return (f"It makes {target}'s {result} wrong: every node of the computation is checked on its own, and the "
            f"nodes {op} makes are the ones at fault ({why}).")


def function_statement(code: str, function: Function, value: str = "data") -> ast.stmt | None:
    """Where a diagnosis of the learner's own function points: the statement that reads ``.data`` (what the
    graph cannot see), for detached data; its ``return``, for a wrong value."""
    if code == "detached-data":
        reads = [n for n in walk(function) if isinstance(n, ast.Attribute) and n.attr == value
                 and isinstance(n.ctx, ast.Load)]
        if reads:
            return statement_of(function, min(reads, key=lambda n: (n.lineno, n.col_offset)))
    returned = own_return(function)
    if code == "wrong-expression" and returned is not None and isinstance(returned.value, ast.Name):
        return last_assignment(function, returned.value.id, returned.lineno) or returned  # ``loss = ...; return loss``
    return returned


def op_location(code: str, op: str, position: int | None, submission: Submission) -> Location | None:
    """Where an op's gradient fault is, in the op's method as the learner wrote it: the update of the operand
    the graph shows it passes wrongly (``self``'s, or ``other``'s); for an op of two operands where the graph
    cannot tell which (``a * b`` reads as ``b * a``), its ``_backward`` as a whole. ``None``: the usual blame."""
    function = blame.written(submission, OPS[op].method) if op in OPS else None
    if function is None or code not in ("wrong-local-grad", "grad-overwrite"):
        return None
    if position is not None:
        name = parameter(function.node, position)
        updates = [stmt for stmt, owner in grad_updates(function.node) if owner == name]
        return function.at(updates[0]) if updates else None
    if OPS[op].arity == 2:
        closure = next((node for node in function.node.body if isinstance(node, Function)), None)
        return function.at(closure) if closure is not None else None
    return None


def inherited(outcomes: Sequence[TargetOutcome]) -> list[str]:
    """A warning for each computation that is right in itself but comes out wrong through an op graded on its
    own: it was not charged for that op's bug."""
    found = []
    for outcome in outcomes:
        ops = sorted({v.details["inherits"] for v in outcome.verdicts if isinstance(v.details.get("inherits"), str)})
        if ops:
            found.append(f"{outcome.target.name} is right in itself; it comes out wrong only through "
                         f"{' and '.join(ops)}, which {'is' if len(ops) == 1 else 'are'} graded (and charged) on "
                         "its own: this target keeps its points")
    return found


def expression_diagnosis(code: str, verdict: Verdict | None, detail: str, target: Target, method: str,
                         submission: Submission) -> Diagnosis:
    """A whole computation's diagnosis: at the op at fault, where one is (worded as that op's), else at the
    learner's function (or where its error was raised)."""
    op = fault_of(verdict)
    result = target.settings.get("result", RESULT)
    if op is not None:
        kind, name = ("backward", "backward") if op == "backward" else ("op", op)
        shown = OPS[op].method if op in OPS else "backward"
        where = op_location(code, op, verdict.details.get("position"), submission) or blame.blame(
            code, kind, name, shown, None, submission)
        words = feedback.message(code, target.name, verdict, "both", detail, note(code, verdict, target.name, result),
                                 method=shown)
    else:
        function = blame.written(submission, method)
        if function is None or (verdict is not None and verdict.error is not None):
            where = blame.blame(code, target.kind.name, target.name, method, verdict, submission)
        else:
            where = function.at(function_statement(code, function.node, target.words.value))
        words = feedback.message(code, target.name, verdict, "both", detail, method=method)
    return Diagnosis(code, target.name, words, where,
                     feedback.counterexample(verdict, "both") if verdict is not None else None)
