"""Where a class the course names is written, and its methods: what a diagnosis of a module or an optimizer
points into.

A target of such a kind grades a class (``Neuron``, ``SGD``), not one function, so
its diagnoses point at the method at fault: found in the class as the learner
wrote it, or in a base class of theirs it inherits the method from (a ``Module``
base's ``zero_grad``). A method not written yet points where the learner's code
goes: the course's ``# YOUR CODE HERE`` line above the stub, else the stub's own
statement. Read from the syntax tree, never run.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from grader.diagnosis.syntax import Function
from grader.exercise.kinds import Role
from grader.submission.source import Location, SourceFile, Submission, Unit

CODE_MARKER = re.compile(r"#\s*your code here", re.IGNORECASE)


@dataclass(frozen=True)
class Member:
    """A class or a method as written: its syntax tree, and the file and cell it is in."""

    node: ast.ClassDef | Function
    source: SourceFile
    unit: Unit

    def at(self, node: ast.AST | None = None) -> Location:
        """The location of ``node`` (the member's own line when there is none)."""
        return Location(self.source.display, getattr(node, "lineno", None) or self.node.lineno, self.unit.cell)

    def line(self, number: int) -> str:
        lines = self.unit.source.splitlines()
        return lines[number - 1] if 0 < number <= len(lines) else ""


def find_class(submission: Submission, name: str, near: SourceFile | None = None) -> Member | None:
    """The class ``name`` as the submission defines it last (as when run): in the file that provides it, else
    in ``near`` (the file of a class that names it as a base), else in any file."""
    provider = submission.providers.get(Role(name, "class"))
    for source in dict.fromkeys(s for s in (provider, near, *submission.files) if s is not None):
        found = None
        for unit in source.units:
            for node in unit.tree.body if unit.tree else ():
                if isinstance(node, ast.ClassDef) and node.name == name:
                    found = Member(node, source, unit)
        if found is not None:
            return found
    return None


def find_function(submission: Submission, name: str) -> Member | None:
    """The top-level function ``name`` as the file that provides it defines it last."""
    source = submission.providers.get(Role(name, "function"))
    found = None
    for unit in source.units if source is not None else ():
        for node in unit.tree.body if unit.tree else ():
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
                found = Member(node, source, unit)
    return found


def find_method(submission: Submission, cls: Member | None, name: str, depth: int = 0) -> Member | None:
    """The method ``name`` of the class ``cls``, or of the first base class of the learner's that has it."""
    if cls is None or depth > 5:
        return None
    for item in cls.node.body:
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name == name:
            return Member(item, cls.source, cls.unit)
    for base in cls.node.bases:
        if isinstance(base, ast.Name):
            found = find_method(submission, find_class(submission, base.id, cls.source), name, depth + 1)
            if found is not None:
                return found
    return None


def forward_method(submission: Submission, cls: Member | None) -> Member | None:
    """The method that computes the module's output: its own ``forward`` or ``__call__``, else a base's."""
    if cls is None:
        return None
    own = [item for item in cls.node.body if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))
           and item.name in ("forward", "__call__")]
    if own:
        chosen = next((i for i in own if i.name == "forward"), own[0])
        return Member(chosen, cls.source, cls.unit)
    return find_method(submission, cls, "forward") or find_method(submission, cls, "__call__")


def is_stub(function: Function) -> bool:
    """A body with nothing but a docstring, ``pass``, ``...`` or ``raise NotImplementedError``: not written yet."""
    body = [n for n in function.body if not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)
                                             and isinstance(n.value.value, str))]
    return len(body) == 1 and (isinstance(body[0], ast.Pass)
                               or (isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant))
                               or (isinstance(body[0], ast.Raise) and "NotImplementedError" in ast.unparse(body[0])))


def stub_line(member: Member) -> int | None:
    """Where the learner's code goes in a stub method: the course's ``# YOUR CODE HERE`` just above its
    statement, else that statement."""
    function = member.node
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) or not is_stub(function):
        return None
    statement = function.body[-1]
    above = member.line(statement.lineno - 1)
    return statement.lineno - 1 if CODE_MARKER.search(above) else statement.lineno


def first_stub(member: Member | None) -> Location | None:
    """Where the first method of a class not written yet wants its code (for a function, the function's own)."""
    if member is None:
        return None
    methods = [member.node] if isinstance(member.node, (ast.FunctionDef, ast.AsyncFunctionDef)) else [
        item for item in member.node.body if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))]
    for method in methods:
        line = stub_line(Member(method, member.source, member.unit))
        if line is not None:
            return Location(member.source.display, line, member.unit.cell)
    return None
