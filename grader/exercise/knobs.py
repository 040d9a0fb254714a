"""What a course says about how its exercise is meant, beside what each target grades.

Real assignments are not shaped like micrograde's scaffold: they give some of the code
(Karpathy's notebook gives ``__add__`` and ``backward``), ask for less than the classic
checks demand (a ``__mul__`` without ``__rmul__``), teach conventions of their own (a
``backward()`` that zeroes the graph's gradients first) and hand out notebooks where each
exercise cell is followed by the course's solution, or where ``Value`` is redefined step by
step. A course says so here, once, and every route grades it the same:

- ``given`` (a target's key): the course's own code. Graded for regressions (a learner who
  breaks it is told, and the grade is not full marks) but worth no points, and the
  scaffold writes it out instead of a stub.
- ``cell`` (a target's key): in a notebook, the part the target grades is read as the
  notebook has it once the cell so marked has run (a tag, or how the cell's first line
  starts); later cells (the next step's redefinition, the course's full engine) are not.
- ``off`` and ``weights`` (a target's keys): checks not run, and checks worth more or less
  than the others of the target (by default each check has the same share of its points).
- ``[submission] skip_cells``: notebook cells that are the course's (its solutions): never
  run, never graded. ``[submission] given``: the course's own functions and classes that no
  target grades, which a report does not list as not graded.

Each is validated when the configuration is read: a mistake is one ``ConfigError`` naming
the key. The kind's own options (``reflected`` for an op, ``accept`` for ``backward``) are
in ``grader.exercise.kinds``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from grader.errors import ConfigError

# What a course may list as its own: a function, class or variable, a method (``Value.__add__``), or a file
# of a folder submission (``micrograd/test/test_engine.py``).
_GIVEN_NAME = re.compile(r"([A-Za-z_]\w*(\.[A-Za-z_]\w*)?|[\w.-]+(/[\w.-]+)*\.(py|ipynb))\Z")


@dataclass(frozen=True)
class Knobs:
    """A target's course-level knobs (see the module's docstring)."""

    given: bool = False
    cell: str | None = None
    off: tuple[str, ...] = ()
    weights: tuple[tuple[str, float], ...] = ()


TARGET_KEYS = ("given", "cell", "off", "weights")


def selector(value: object, key: str) -> str:
    """A cell selector: a tag, or how a cell's first line starts (one line of text)."""
    if not isinstance(value, str) or not value.strip() or "\n" in value or "\r" in value:
        raise ConfigError(f"{key}: expected a cell's tag or the start of its first line (one line of text), "
                          f"got {value!r}")
    return value.strip()


def target_knobs(table: dict, key: str, checks: list[str]) -> Knobs:
    """The knobs of one ``[targets.NAME]`` table, whose kind has the checks ``checks`` (their short names)."""
    given = table.get("given", False)
    if not isinstance(given, bool):
        raise ConfigError(f"{key} given: expected true or false, got {given!r}")
    cell = selector(table["cell"], f"{key} cell") if "cell" in table else None
    off = table.get("off", [])
    if not isinstance(off, list) or not all(isinstance(c, str) for c in off):
        raise ConfigError(f"{key} off: expected a list of check names (checks: {', '.join(checks)})")
    for name in off:
        if name not in checks:
            raise ConfigError(f"{key} off: no check {name!r} (checks: {', '.join(checks)})")
    if set(checks) <= set(off):
        raise ConfigError(f"{key} off: every check of the target is off (leave the target out instead)")
    weights = table.get("weights", {})
    if not isinstance(weights, dict):
        raise ConfigError(f"{key} weights: expected a table of check names and numbers, such as "
                          "{ generated = 2 }")
    for name, weight in weights.items():
        if name not in checks:
            raise ConfigError(f"{key} weights: no check {name!r} (checks: {', '.join(checks)})")
        if name in off:
            raise ConfigError(f"{key} weights: check {name!r} is off")
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not math.isfinite(weight) \
                or weight <= 0:
            raise ConfigError(f"{key} weights: {name} must be a positive number, got {weight!r}")
    return Knobs(given, cell, tuple(dict.fromkeys(off)), tuple((n, float(w)) for n, w in weights.items()))


def target_points(table: dict, key: str, given: bool) -> float:
    """A target's points: required and positive, except for a given part, which is worth none."""
    points = table.get("points")
    if given:
        if points not in (None, 0):
            raise ConfigError(f"{key} points: a given part is graded for regressions and worth no points "
                              f"(leave points out), got {points!r}")
        return 0.0
    if points is None:
        raise ConfigError(f"{key} points: missing (how many points the target is worth)")
    if isinstance(points, bool) or not isinstance(points, (int, float)) or not math.isfinite(points) or points <= 0:
        raise ConfigError(f"{key} points: expected a positive number, got {points!r}")
    return float(points)


SUBMISSION_DEFAULTS: dict = {"skip_cells": [], "given": []}


def submission_table(table: object, where: str) -> dict:
    """The ``[submission]`` table: ``skip_cells`` (selectors) and ``given`` (names), each a list."""
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: [submission] must be a table")
    unknown = sorted(set(table) - set(SUBMISSION_DEFAULTS))
    if unknown:
        raise ConfigError(f"{where} [submission]: unknown key {unknown[0]!r} (known: skip_cells, given)")
    skip = table.get("skip_cells", [])
    if not isinstance(skip, list):
        raise ConfigError(f"{where} [submission] skip_cells: expected a list of cell tags or first-line starts, "
                          f"such as [\"# Solution\"]")
    cells = [selector(s, f"{where} [submission] skip_cells") for s in skip]
    given = table.get("given", [])
    if not isinstance(given, list) or not all(isinstance(n, str) and _GIVEN_NAME.match(n) for n in given):
        raise ConfigError(f"{where} [submission] given: expected a list of names of the course's own functions "
                          f"and classes, or its files (f, micrograd/test/test_engine.py), got {given!r}")
    return {"skip_cells": list(dict.fromkeys(cells)), "given": list(dict.fromkeys(given))}


def weight_of(weights: dict[str, float], check: str) -> float:
    """A check's share of its target's points, against the others' (1 unless the course says)."""
    return weights.get(check, 1.0)
