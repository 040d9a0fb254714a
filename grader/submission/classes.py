"""The classes a file defines, and which of them behaves like the course's ``Value`` when none has its name.

Learners name their class ``Node``, ``Scalar`` or ``value``. The class that writes the most of the
methods a course can grade (two at least) is the one meant, in a file, a folder or a notebook alike.
Read from the syntax tree alone.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from grader.exercise.ops import OPS

# What a course can ask a Value class to have: a written one of these is work done.
GRADED_METHODS = frozenset({*(op.method for op in OPS.values() if not op.comparison), "backward"})


def classes(units: Iterable) -> list[tuple[ast.ClassDef, int | None]]:
    """Every top-level class of a file's (or a notebook's) parsed ``units``, with its cell."""
    return [(node, unit.cell) for unit in units for node in (unit.tree.body if unit.tree else ())
            if isinstance(node, ast.ClassDef)]


def methods(cls: ast.ClassDef) -> list[ast.FunctionDef]:
    return [item for item in cls.body if isinstance(item, ast.FunctionDef)]


def value_like(units: Iterable, others: frozenset[str] = frozenset()) -> str | None:
    """The name of the class that behaves like a Value: it writes the most graded methods (two at least),
    and is not a class the course names as another part (``others``: its Tensor)."""
    best, count = None, 1
    for cls, _ in classes(units):
        if cls.name in others:
            continue
        written = sum(1 for m in methods(cls) if m.name in GRADED_METHODS)
        if written > count:
            best, count = cls.name, written
    return best
