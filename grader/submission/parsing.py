"""One unit of a submission's code (a ``.py`` file, a notebook cell) and its parsing, without running it.

Two things are taken out before the tree is kept. The learner's own ``from grader import check`` and
``check(...)`` are how they check their work; they are not the work, and running them while grading
would grade again. And a ``.py`` file that does not parse keeps what compiles of it
(``grader.submission.salvage``), so one unfinished statement does not cost every graded part.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field, replace

from grader.submission import salvage
from grader.submission.salvage import LeftOut, blanked, newer_syntax


@dataclass
class Unit:
    """A piece of code executed as one: a whole ``.py`` file or one notebook cell."""

    filename: str
    source: str
    cell: int | None = None
    tree: ast.Module | None = None
    syntax_error: str | None = None
    syntax_line: int | None = None
    left_out: list[LeftOut] = field(default_factory=list)  # a .py file's statements that do not compile
    tags: tuple[str, ...] = ()  # a notebook cell's tags (``grader.submission.cells`` selects cells by them)
    section: tuple[int, str] = (0, "")  # the Markdown heading cell it sits under: its number, its heading


def self_check_lines(tree: ast.Module) -> list[int]:
    """The lines (counted from 1) of the student's own ``from grader import check`` and ``check(...)``.

    That is how a student checks their work from a notebook or script; it is
    not part of the work, and running it while grading would grade again.
    Anything else imported from the grader still counts as ``forbidden-import``.
    """
    found = []
    for node in tree.body:
        imports_check = (isinstance(node, ast.ImportFrom) and node.module == "grader" and node.level == 0
                         and [a.name for a in node.names] == ["check"])
        value = getattr(node, "value", None)
        calls_check = (isinstance(node, (ast.Expr, ast.Assign)) and isinstance(value, ast.Call)
                       and isinstance(value.func, ast.Name) and value.func.id == "check")
        if imports_check or calls_check:
            found.extend(range(node.lineno, node.end_lineno + 1))
    return found


def parse_unit(unit: Unit) -> Unit:
    """Parse ``unit``, without the student's own self-check (parsed again only if it had one). A .py file
    that does not parse keeps what compiles of it (``grader.submission.salvage``)."""
    try:
        try:
            tree = ast.parse(unit.source, filename=unit.filename)
        except SyntaxError as exc:
            kept = salvage.salvaged(unit.source, unit.filename) if unit.cell is None else None
            if kept is None:
                raise
            unit.left_out = [replace(p, error=p.error + newer_syntax(unit.source, p.line)) for p in kept[1]]
            unit.source = kept[0]
            tree = ast.parse(unit.source, filename=unit.filename)
            del exc
        own = self_check_lines(tree)
        if own:
            unit.source = blanked(unit.source, own)
            tree = ast.parse(unit.source, filename=unit.filename)
        unit.tree = tree
    except SyntaxError as exc:
        unit.syntax_error = f"{type(exc).__name__}: {exc.msg}{newer_syntax(unit.source, exc.lineno)}"
        unit.syntax_line = exc.lineno
        unit.left_out = []
    except (ValueError, RecursionError, MemoryError) as exc:
        unit.syntax_error = f"{type(exc).__name__}: the source cannot be parsed"
    return unit
