"""What of a submission does not compile, and what that costs: a graded part, or nothing but a warning.

A ``.py`` file keeps what compiles of it (``grader.submission.salvage``) and a notebook its cells that
compile. Where what was left out is the last definition of a graded part (the ``Value`` class, the
training function), that part cannot be graded: one ``load-error`` says which statement or cell, and
where, and only that part's targets are lost. The last definition, as run top to bottom, is the one
graded: an older ``Value`` that compiles, above a newer one that does not, is superseded work and is
never graded in the newer one's place (its missing methods would be reported as the learner's).
Anything else left out (an unfinished ``Tensor`` class, an experiment cell) costs nothing, and a
warning says what was left out and that the rest was graded.
Read from the source alone; nothing here runs.
"""

from __future__ import annotations

from grader.exercise.kinds import Role
from grader.submission.salvage import defines
from grader.submission.source import Location, SourceFile, Submission, binds


def parts(submission: Submission) -> dict[Role, tuple[str, Location]]:
    """The graded parts whose last definition is a statement (of a .py file) or a cell that does not compile:
    why, and where Python says. The last definition is the one graded, as when the file or notebook runs
    top to bottom; an older one that compiles is superseded, never graded in its place."""
    found = {}
    for role, name in submission.names.items():
        source = submission.providers.get(role)
        if source is not None and (last := last_broken(source, name)) is not None:
            found[role] = last
    return found


def last_broken(source: SourceFile, name: str) -> tuple[str, Location] | None:
    """Why and where, when the last definition of ``name`` in ``source`` does not compile; ``None`` when it does
    (or there is none)."""
    last = None
    for unit in source.units:
        events = [(node.lineno, None) for node in (unit.tree.body if unit.tree else ()) if binds(node, name)]
        events += [(piece.first, (f"{piece.error}, in {piece.describe()}: it does not compile, so {name} is not "
                                  "graded", Location(source.display, piece.line)))
                   for piece in unit.left_out if piece.defines == name]
        if unit.syntax_error and unit.cell is not None and defines(unit.source, name):
            events.append((0, (f"{unit.syntax_error}: cell {unit.cell} does not compile, so the {name} it defines "
                               "is not graded", Location(source.display, unit.syntax_line, unit.cell))))
        if events:
            last = max(events, key=lambda event: event[0])[1]
    return last


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
