"""Values that compare by their data: distinct nodes that collapse into one, in a set or a dict.

A class whose ``__eq__`` (and ``__hash__``) look at ``data`` makes two distinct
nodes with the same value one member of a ``set``: a visited set then skips a
node it never visited, and ``_prev = set(children)`` forgets an operand. Without
``__hash__`` beside ``__eq__`` the class cannot go in a set at all. Either way the
gradients look like another bug (an order problem, a lost contribution); this
module names the real cause, on evidence: the child says how the class
compares, and the failing case holds two distinct nodes with the same value.
"""

from __future__ import annotations

import ast
from dataclasses import replace

from grader.diagnosis import feedback
from grader.diagnosis.codes import CODES
from grader.diagnosis.findings import Diagnosis
from grader.exercise.expr import forward_values, shares_a_value
from grader.exercise.kinds import VALUE
from grader.exercise.ops import method_name
from grader.judging.judge import Verdict
from grader.submission.source import Location, SourceFile, Submission
from grader.submission.tree import walk

CAUSE = {
    "value": "{cls} defines __eq__ on data, so two distinct nodes with the same value are equal: a set (or "
             "dict) keeps only one of them",
    "unhashable": "{cls} defines __eq__ without __hash__, so it is unhashable and cannot be put in a set",
}


def collides(verdict: Verdict) -> bool:
    """The case holds two distinct nodes (not plain numbers) with the same value."""
    for expr in verdict.case.exprs:
        values = forward_values(expr, verdict.case.values)
        if values is not None and shares_a_value(expr, values):
            return True
    return False


def unhashable_error(verdict: Verdict) -> bool:
    return verdict.error is not None and "unhashable" in str(verdict.error.get("message", ""))


def explain(equality: str | None, codes: dict[str, Verdict], verdicts: list[Verdict]) -> dict[str, Verdict]:
    """``codes`` with ``value-equality`` in place of what equal-valued nodes caused."""
    if equality not in CAUSE or not codes or set(codes) & {"not-implemented", "interface"}:
        return codes
    evidence = [v for v in verdicts if not v.passed(v.check.focus if v.check else "both")
                and (collides(v) if equality == "value" else unhashable_error(v))]
    if not evidence:
        return codes
    smallest = min(evidence, key=lambda v: v.case.rank)
    return {"value-equality": smallest}


def membership_line(source: SourceFile, class_name: str, method: str) -> Location | None:
    """Where ``method`` of the class first relies on a set: an ``in`` test, else ``set(...)`` or ``.add(...)``."""
    for unit in source.units:
        for node in unit.tree.body if unit.tree else ():
            if not (isinstance(node, ast.ClassDef) and node.name == class_name):
                continue
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == method:
                    tests = [n for n in walk(item) if isinstance(n, ast.Compare)
                             and any(isinstance(op, (ast.In, ast.NotIn)) for op in n.ops)]
                    adds = [n for n in walk(item) if isinstance(n, ast.Call) and (
                        (isinstance(n.func, ast.Name) and n.func.id == "set")
                        or (isinstance(n.func, ast.Attribute) and n.func.attr == "add"))]
                    for uses in (tests, adds):  # where a node is looked up first: there the two collapse
                        if uses:
                            return Location(source.display, min(n.lineno for n in uses), unit.cell)
    return None


def describe(diagnoses: list[Diagnosis], submission: Submission, equality_kind: str | None) -> list[Diagnosis]:
    """``diagnoses`` with each ``value-equality`` worded with its cause and pointed at the set that collapses."""
    if equality_kind not in CAUSE:
        return diagnoses
    return [worded(d, submission, equality_kind) if d.code == "value-equality" else d for d in diagnoses]


def worded(diagnosis: Diagnosis, submission: Submission, equality_kind: str) -> Diagnosis:
    source = submission.providers.get(VALUE)
    cls = submission.names[VALUE]
    cause = CAUSE[equality_kind].format(cls=cls)
    case = feedback.explain_case(diagnosis.counterexample)
    message = " ".join(part for part in (f"{method_name(diagnosis.target)} goes wrong because {cause}.", case,
                                         CODES["value-equality"].concept) if part)
    method = "backward" if diagnosis.target == "backward" else "__init__"
    where = membership_line(source, cls, method) if source is not None else None
    return replace(diagnosis, message=message, where=where or diagnosis.where)
