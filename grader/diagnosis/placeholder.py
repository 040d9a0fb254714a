"""A part still as the course handed it out: its placeholder, not a misconception.

Courses leave their stubs in many shapes: ``raise NotImplementedError``, a ``pass`` under
``# TODO``, a loop whose body is ``# YOUR CODE HERE`` and ``pass`` (the topological sort
given, the chain rule not), a class with a ``# YOUR CODE HERE`` where the methods go. A
``pass`` closure passes no gradient, so the checks fail as if the op's derivative were
wrong, and a ``backward()`` that only seeds looks like one that stops early; but the
learner has not written anything yet, and a human grader says so: ``not-implemented``, at
the placeholder. So a target that lost points whose code still holds a placeholder gets
that one diagnosis instead of the misconceptions its checks would suggest:

- a *placeholder* is a stub's statement (``pass``, ``...``, ``raise NotImplementedError``,
  ``return None``) right under a ``TODO`` or ``YOUR CODE HERE`` comment (a loop's body, a
  closure's, the rest of a method), or a graded function whose whole body is such statements;
- it is pointed at the ``YOUR CODE HERE`` comment where there is one (where the course
  asks for the code), else at the statement;
- a method the class does not have at all is pointed at the class's own ``YOUR CODE
  HERE`` (or ``TODO``) comment, where the course asks for the methods.

Read from the source alone; nothing here runs.
"""

from __future__ import annotations

import ast
import re
from dataclasses import replace

from grader.diagnosis import blame, feedback
from grader.diagnosis.findings import Diagnosis
from grader.diagnosis.syntax import Function
from grader.exercise.kinds import VALUE
from grader.exercise.targets import Exercise
from grader.submission.source import Location, Submission
from grader.submission.tree import walk

MARKER = re.compile(r"#.*\b(YOUR CODE HERE|TODO)\b", re.IGNORECASE)
ASKS = re.compile(r"#.*\bYOUR CODE HERE\b", re.IGNORECASE)  # where the course asks for the code itself
NOTE = "Its code is still the placeholder the course left for it (line {line})."


def trivial(node: ast.stmt, returns: bool = True) -> bool:
    """``pass``, ``...``, ``raise NotImplementedError``, and with ``returns`` ``return`` or ``return None``:
    a stub's statement (a function that only returns None, unmarked, is code that returns nothing)."""
    if isinstance(node, ast.Pass):
        return True
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and node.value.value is Ellipsis:
        return True
    if isinstance(node, ast.Return):
        return returns and (node.value is None or (isinstance(node.value, ast.Constant) and node.value.value is None))
    return isinstance(node, ast.Raise) and node.exc is not None and "NotImplementedError" in ast.unparse(node.exc)


def marked_above(line: int, lines: list[str]) -> tuple[bool, int | None]:
    """Whether the comments right above ``line`` (blank lines and comments only, up to the code before) mark
    a placeholder, and the line of a ``YOUR CODE HERE`` among them."""
    marked, asked = False, None
    n = line - 1
    while n >= 1 and (not lines[n - 1].strip() or lines[n - 1].lstrip().startswith("#")):
        marked |= bool(MARKER.search(lines[n - 1]))
        asked = n if ASKS.search(lines[n - 1]) else asked
        n -= 1
    return marked, asked


def placeholder_line(function: Function, lines: list[str]) -> int | None:
    """The line of the placeholder ``function`` still holds (see the module's docstring), or ``None``: a
    stub's statement under a ``TODO`` or ``YOUR CODE HERE`` comment, or a graded function whose whole body is
    a stub's statements (a closure of ``pass`` alone is code that passes nothing on, not a stub)."""
    for node in walk(function):
        if isinstance(node, ast.stmt) and trivial(node) and node.lineno <= len(lines):
            marked, asked = marked_above(node.lineno, lines)
            if marked:
                return asked or node.lineno
    rest = [s for s in function.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)
                                             and isinstance(s.value.value, str))]
    return rest[0].lineno if rest and all(trivial(s, returns=False) for s in rest) else None


def source_lines(submission: Submission, where: Location) -> list[str]:
    """The lines of the unit (file or cell) ``where`` is in."""
    for source in submission.files:
        if source.display == where.file:
            for unit in source.units:
                if unit.cell == where.cell:
                    return unit.source.splitlines()
    return []


def class_marker(submission: Submission) -> Location | None:
    """The class's own ``YOUR CODE HERE`` (or ``TODO``) comment, outside its methods: where the course asks
    for the methods it does not have yet."""
    where = submission.location("__init__")  # the class itself, or its constructor
    source = submission.providers.get(VALUE)
    if where is None or source is None:
        return None
    for unit in source.units:
        for node in unit.tree.body if unit.tree and unit.cell == where.cell else ():
            if isinstance(node, ast.ClassDef) and node.name == submission.names[VALUE] and (
                    node.lineno <= where.line <= node.end_lineno):
                inside = {n for m in node.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))
                          for n in range(m.lineno, m.end_lineno + 1)}
                lines = unit.source.splitlines()
                marked = [n for n in range(node.lineno + 1, node.end_lineno + 1)
                          if n not in inside and MARKER.search(lines[n - 1])]
                asked = [n for n in marked if ASKS.search(lines[n - 1])]
                if marked:
                    return Location(source.display, (asked or marked)[0], unit.cell)
    return None


def still_placeholders(diagnoses: list[Diagnosis], submission: Submission, exercise: Exercise) -> list[Diagnosis]:
    """``diagnoses`` with every target that lost points while its code still holds the course's placeholder
    diagnosed once, ``not-implemented`` at the placeholder; a method the class lacks pointed at the class's
    own placeholder comment."""
    failing = dict.fromkeys(d.target for d in diagnoses if d.target in exercise.names)
    found = list(diagnoses)
    for name in failing:
        target = exercise.target(name)
        method = exercise.method(name)
        written = blame.written(submission, method)
        if written is None:
            where = class_marker(submission) if target.kind.role is VALUE else None
            if where is not None:
                found = [replace(d, where=where) if d.target == name and d.code == "not-implemented" else d
                         for d in found]
            continue
        line = placeholder_line(written.node, source_lines(submission, written.where))
        if line is None:
            continue
        at = Location(written.where.file, line, written.where.cell)
        if [(d.code, d.where) for d in found if d.target == name] == [("not-implemented", at)]:
            continue  # said already, where it is (a stub that raises NotImplementedError)
        words = feedback.message("not-implemented", name, None, target.kind.focus, note=NOTE.format(line=line),
                                 method=method)
        first = next(i for i, d in enumerate(found) if d.target == name)
        found = [d for d in found if d.target != name]
        found.insert(first, Diagnosis("not-implemented", name, words, at))
    return found
