"""A notebook's cells named as its reader sees them: ``In [7]`` for a cell Jupyter ran seventh.

A report names a notebook's cell by its place from the top (``cell 4``, markdown cells counted), which no
notebook shows; Jupyter and the ``--html`` page show a code cell that ran as ``In [7]``, and ``check()``
grades the cells in the order they ran. Where a cell has such a name, the report read there uses it:
diagnoses, what was not graded, and the warnings that name the cell.
"""

from __future__ import annotations

import re
from dataclasses import replace

from grader.report.model import Report
from grader.submission.source import Location


def prompts(cells: list[tuple[int, dict]]) -> dict[int, str]:
    """``In [n]`` of each numbered code cell that ran (its execution count), by its number."""
    return {number: f"In [{cell['execution_count']}]" for number, cell in cells
            if cell.get("cell_type") == "code" and type(cell.get("execution_count")) is int}


def named(report: Report, names: dict[int, str], submission: str | None = None) -> Report:
    """``report`` with each cell that has a name in ``names`` (by its number) called so (``In [5], line 3``),
    and ``submission`` as what it graded, if given."""

    def where(location: Location | None) -> Location | None:
        if location is None or location.cell not in names:
            return location
        return Location(names[location.cell], location.line)

    def cell(found: re.Match) -> str:
        return names.get(int(found.group(1)), found.group(0))

    return replace(report, submission=report.submission if submission is None else submission,
                   diagnoses=tuple(replace(d, where=where(d.where)) for d in report.diagnoses),
                   ungraded=tuple(replace(u, where=where(u.where)) for u in report.ungraded),
                   warnings=tuple(re.sub(r"\bcell (\d+)\b", cell, w) for w in report.warnings))
