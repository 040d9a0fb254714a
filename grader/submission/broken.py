"""What of a submission does not compile, and what that costs: a graded part, or nothing but a warning.

A ``.py`` file keeps what compiles of it (``grader.submission.salvage``) and a notebook its cells that
compile. Where what was left out is the only definition of a graded part (the ``Value`` class, the
training function), that part cannot be graded: one ``load-error`` says which statement or cell, and
where, and only that part's targets are lost. Anything else left out (an unfinished ``Tensor`` class, an
experiment cell) costs nothing, and a warning says what was left out and that the rest was graded.
Read from the source alone; nothing here runs.
"""

from __future__ import annotations

from grader.exercise.kinds import Role
from grader.submission.salvage import defines
from grader.submission.source import Location, Submission


def parts(submission: Submission) -> dict[Role, tuple[str, Location]]:
    """The graded parts that only a statement (of a .py file) or a cell that does not compile defines:
    why, and where Python says."""
    found = {}
    for role, name in submission.names.items():
        source = submission.providers.get(role)
        if source is None or source.defines(name):
            continue
        for unit in source.units:
            piece = next((p for p in unit.left_out if p.defines == name), None)
            if piece is not None:
                found[role] = (f"{piece.error}, in {piece.describe()}: it does not compile, so {name} is not graded",
                               Location(source.display, piece.line))
            elif unit.syntax_error and unit.cell is not None and defines(unit.source, name):
                found[role] = (f"{unit.syntax_error}: cell {unit.cell} does not compile, so the {name} it defines "
                               "is not graded", Location(source.display, unit.syntax_line, unit.cell))
    return found


def warnings(submission: Submission) -> list[str]:
    """What of the graded files does not compile and was left out, that no graded part needed."""
    needed = {where for _, where in parts(submission).values()}
    said = []
    for source in dict.fromkeys(submission.providers.values()):
        for unit in source.units:
            for piece in unit.left_out:
                if Location(source.display, piece.line) not in needed:
                    said.append(f"{source.display}: {piece.describe()} does not compile ({piece.error}, line "
                                f"{piece.line}) and was left out; the rest of the file was graded")
            if unit.syntax_error and unit.cell is not None and Location(
                    source.display, unit.syntax_line, unit.cell) not in needed:
                said.append(f"{source.display}: cell {unit.cell} does not compile ({unit.syntax_error}, line "
                            f"{unit.syntax_line}) and was left out; the other cells were graded")
    return said
