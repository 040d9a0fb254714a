"""What a submission's classes look like, read from their source: for messages about what is missing.

Real engines name their class ``Node`` or ``value``, write ``def pow`` for
``__pow__``, or indent a method into the one above it by a slip. Running the
code cannot tell those apart from a method that is simply not written; the
source can. Nothing here executes anything.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from grader.submission.classes import classes as classes_of
from grader.submission.classes import methods
from grader.submission.source import Location, SourceFile, Submission
from grader.submission.tree import walk


@dataclass(frozen=True)
class Definition:
    name: str
    location: Location
    inside: str | None = None  # the function it is nested in, for a method indented by a slip


def the_class(source: SourceFile, name: str) -> tuple[ast.ClassDef, int | None] | None:
    found = None
    for cls, cell in classes_of(source.units):
        if cls.name == name:
            found = (cls, cell)
    return found


def nested(source: SourceFile, class_name: str, wanted: set[str]) -> list[Definition]:
    """Graded methods defined inside another method of the class, not on the class itself."""
    found = the_class(source, class_name)
    if found is None:
        return []
    cls, cell = found
    own = {m.name for m in methods(cls)}
    slips = []
    for method in methods(cls):
        for node in walk(method):
            if isinstance(node, ast.FunctionDef) and node is not method and node.name in wanted - own:
                slips.append(Definition(node.name, Location(source.display, node.lineno, cell), method.name))
    return slips


def near_miss(source: SourceFile, class_name: str, method: str) -> Definition | None:
    """A method whose name looks like a typo of ``method`` (``pow`` for ``__pow__``)."""
    import difflib  # only when a method is missing: most grades never need it

    found = the_class(source, class_name)
    if found is None:
        return None
    cls, cell = found
    names = {m.name: m for m in methods(cls)}
    bare = method.strip("_")
    for name, node in names.items():
        if name != method and (name.strip("_") == bare or difflib.SequenceMatcher(None, name, method).ratio() > 0.8):
            return Definition(name, Location(source.display, node.lineno, cell))
    return None


def method_names(source: SourceFile, class_name: str) -> list[str]:
    found = the_class(source, class_name)
    return [] if found is None else [m.name for m in methods(found[0])]


def top_level_work(submission: Submission) -> Location | None:
    """The statement most likely to keep a file busy while it loads: the first loop at the top
    level of a graded file (a training demo), else the first top-level call that is not a definition."""
    first_call = None
    for source in dict.fromkeys(submission.providers.values()):
        for unit in source.units:
            for node in unit.tree.body if unit.tree else ():
                where = Location(source.display, node.lineno, unit.cell)
                if isinstance(node, (ast.For, ast.While, ast.AsyncFor)):
                    return where
                if first_call is None and isinstance(node, (ast.Expr, ast.Assign, ast.AugAssign)) and any(
                        isinstance(n, ast.Call) for n in walk(node)):
                    first_call = where
    return first_call


def statement_at(submission: Submission, filename: object, line: object) -> Location | None:
    """The top-level statement of a file or cell (by its run-time filename) that holds ``line``."""
    for source in submission.files:
        for unit in source.units:
            if unit.filename != filename or unit.tree is None or not isinstance(line, int):
                continue
            for node in unit.tree.body:
                if node.lineno <= line <= (node.end_lineno or node.lineno):
                    return Location(source.display, node.lineno, unit.cell)
    return None


def first_nested(source: SourceFile, class_name: str, host: str | None) -> Definition | None:
    """The first def inside method ``host`` of the class: where an indentation slip begins."""
    found = the_class(source, class_name)
    method = next((m for m in methods(found[0]) if m.name == host), None) if found else None
    inner = [n for n in walk(method) if isinstance(n, ast.FunctionDef) and n is not method] if method else []
    if not inner:
        return None
    node = min(inner, key=lambda n: n.lineno)
    return Definition(node.name, Location(source.display, node.lineno, found[1]), host)
