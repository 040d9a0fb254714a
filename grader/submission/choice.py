"""Which of a folder's files a graded part is taken from, when several define it.

A learner's repository often holds the work twice: the package the course asked for
(``micrograd/engine.py``) and an older exploratory notebook, or a filled-in notebook beside
untouched ``.py`` stubs. The rule, in order: a real definition beats an import; written code beats
a stub; a file where the course's layout puts the work (its ``[scaffold]`` ``engine_file``,
``train_file`` or ``notebook``) beats one elsewhere; then more of the course's own targets written
beats fewer; then ``.py`` beats a notebook. Only the methods the course's targets grade are
counted, each once, as Python keeps it (the last ``def`` of a name): an old notebook's ``exp``,
``sigmoid`` or a method defined twice is no more of the work the course grades.
Read from the syntax tree alone.
"""

from __future__ import annotations

import ast
from pathlib import PurePath
from typing import Protocol

from grader.exercise.config import DEFAULT_TABLES
from grader.exercise.ops import OPS
from grader.submission.classes import GRADED_METHODS
from grader.submission.tree import is_definition

TYPE_CHECKING = False  # as in grader/__init__.py
if TYPE_CHECKING:
    from grader.exercise.config import Config


class SourceFile(Protocol):
    """What the rule reads of a file (``grader.submission.source.SourceFile``, which reads the files with it)."""

    path: PurePath
    display: str
    kind: str
    units: list
    read_error: str | None

    def defines(self, name: str) -> object: ...


LAYOUT_KEYS = ("engine_file", "train_file", "notebook")  # the [scaffold] keys that name where the work goes


def is_stub(function: ast.FunctionDef) -> bool:
    """A body that is only a docstring and ``raise NotImplementedError``: not written yet."""
    body = [n for n in function.body if not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))]
    return len(body) == 1 and isinstance(body[0], ast.Raise) and "NotImplementedError" in ast.unparse(body[0])


def course_methods(config: Config | None) -> frozenset[str]:
    """The methods of the course's class that its targets grade (``__add__``, ``backward``); every method a
    course can grade when it has no op or backward target (or no configuration is given)."""
    if config is None:
        return GRADED_METHODS
    found = set()
    for target in config.targets:
        if target.kind == "op":
            op = target.settings.get("op", target.name)
            found.add(config.engine.written_for(op) or OPS[op].method)
        elif target.kind == "backward":
            found.add("backward")
    return frozenset(m for m in found if "." not in m) or GRADED_METHODS


def methods_written(source: SourceFile, name: str, wanted: frozenset[str] = GRADED_METHODS) -> int:
    """How many of the ``wanted`` methods (or the function) ``source`` has actually written for ``name``: each
    method once, as the last definition of it leaves the class, and only the class's last definition."""
    count = 0
    for unit in source.units:
        for node in unit.tree.body if unit.tree else ():
            if isinstance(node, ast.FunctionDef) and node.name == name:
                count = int(not is_stub(node))
            elif isinstance(node, ast.ClassDef) and node.name == name:
                last = {item.name: item for item in node.body if isinstance(item, ast.FunctionDef)}
                count = sum(1 for method, item in last.items() if method in wanted and not is_stub(item))
    return count


def in_layout(source: SourceFile, layout: tuple[str, ...]) -> bool:
    """Whether ``source`` is where the course's layout puts the work: its path ends as one of ``layout`` does
    (``engine.py`` is ``micrograd/engine.py`` too)."""
    parts = PurePath(source.display).parts
    return any(parts[-len(PurePath(f).parts):] == PurePath(f).parts for f in layout if f)


def scaffold_of(config: Config | None) -> dict:
    """The course's ``[scaffold]`` table, where it puts the work (the classic exercise's without a course)."""
    return config.scaffold if config is not None else DEFAULT_TABLES["scaffold"]


def layout_of(config: Config | None) -> tuple[str, ...]:
    """The file names the course's ``[scaffold]`` gives the work."""
    scaffold = scaffold_of(config)
    return tuple(scaffold.get(key, "") for key in LAYOUT_KEYS)


def choose(files: list[SourceFile], name: str, config: Config | None = None) -> SourceFile | None:
    """The file to take ``name`` from (the module's docstring says in which order)."""
    wanted, layout = course_methods(config), layout_of(config)

    def rank(source: SourceFile) -> tuple:
        defined = any(
            is_definition(node, name) for u in source.units for node in (u.tree.body if u.tree else ())
        )
        written = methods_written(source, name, wanted)
        return (not defined, written == 0, not in_layout(source, layout), -written, source.kind != "py",
                len(source.path.parts), source.display)

    having = [s for s in files if s.defines(name) or s.read_error or broken_python(s, name)]
    return min(having, key=rank) if having else None


def broken_python(source: SourceFile, name: str) -> bool:
    """A ``.py`` file that does not parse, or whose statement defining ``name`` does not compile, may still
    be the one meant to define it."""
    return source.kind == "py" and any(u.syntax_error or any(p.defines == name for p in u.left_out)
                                       for u in source.units)
