"""Identifiers made from target and check names, for the places that take only letters, digits, ``-`` and ``_``.

A course names its targets as it likes (``SGD.step``, ``Module.parameters``, ``"my add"``), but a
notebook cell's id must match ``^[a-zA-Z0-9-_]+$`` and be at most 64 characters (nbformat 4.5), and a
GitHub Actions step id must start with a letter or ``_`` and hold only letters, digits, ``-`` and ``_`` (a
workflow with any other is refused). Each run of other characters becomes one hyphen, as ``_`` always has
(``train_step`` is ``train-step``), and ids handed out for one notebook or one workflow never repeat.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

LIMIT = 64  # nbformat's longest cell id
CELL_ID = re.compile(rf"[a-zA-Z0-9_-]{{1,{LIMIT}}}")  # nbformat 4.5's cell id
OWN = "micrograde"  # micrograde's own names (its cells' ids, the page's classes): a student's may not hold it
_OTHER = re.compile(r"[^A-Za-z0-9]+")


def identifier(name: str, prefix: str = "") -> str:
    """``prefix`` and ``name``, each run of characters other than letters and digits a hyphen, starting
    with a letter, at most ``LIMIT`` characters."""
    text = _OTHER.sub("-", f"{prefix}{name}").strip("-") or "unnamed"
    if not text[0].isalpha():
        text = f"id-{text}"
    return text[:LIMIT].rstrip("-")


class Identifiers:
    """Hands out distinct identifiers within one notebook or workflow: a repeat (``a.b`` and ``a_b``, or an
    id the notebook already has) gets ``-2``, ``-3``... ."""

    def __init__(self, taken: Iterable[str] = ()) -> None:
        self.taken = set(taken)

    def __call__(self, name: str, prefix: str = "") -> str:
        base = identifier(name, prefix)
        found, number = base, 1
        while found in self.taken:
            number += 1
            suffix = f"-{number}"
            found = base[:LIMIT - len(suffix)].rstrip("-") + suffix
        self.taken.add(found)
        return found
