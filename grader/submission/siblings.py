"""A single graded file and the folder it sits in, as the student runs it.

A student runs ``python engine.py`` from its folder, so the modules beside it
are importable (``from viz import draw_dot`` with ``viz.py`` next to it), and a
``train.py`` beside an ``engine.py`` is part of the same work. Grading one file
of such a folder takes from the folder what the file imports, and a graded role
(``Value``, ``train_step``) the file does not define from a sibling of the same
work (one it imports, or one that imports it), saying so. Only ``.py`` files
directly in the folder (and the packages the file imports) are read, within the
same limits as a folder; a folder that cannot be read whole is not used. A batch
of students' files in one folder never looks at the others' files
(``read_as_run(..., siblings=False)``).
"""

from __future__ import annotations

from pathlib import Path

from grader.errors import InputError
from grader.submission.choice import choose, scaffold_of
from grader.submission.folder import MAX_FILES, candidate_files, inside
from grader.submission.parsing import parse_unit
from grader.submission.source import (
    MAX_CODE_BYTES,
    SourceFile,
    Submission,
    imported_names,
    leave_out_libraries,
    read_file,
    read_submission,
)
from grader.submission.tree import is_definition, walk

TYPE_CHECKING = False  # as in grader/__init__.py
if TYPE_CHECKING:
    from grader.exercise.config import Config


def read_as_run(path: Path, config: Config | None = None, siblings: bool = True) -> Submission:
    """``read_submission``, and for a single ``.py`` file what its folder gives it (unless ``siblings``
    is false)."""
    submission = read_submission(path, config)
    if siblings and submission.directory is None and submission.files[0].kind == "py":
        scaffold = scaffold_of(config)
        work = {scaffold["engine_file"], scaffold["train_file"]}
        return with_siblings(submission.files[0], path, submission.names, work, config) or submission
    return submission


def defines(source: SourceFile, name: str) -> bool:
    """Whether ``source`` itself defines ``name`` (a class or function, not an import of it)."""
    return any(is_definition(node, name) for unit in source.units for node in (unit.tree.body if unit.tree else ()))


def imported_modules(source: SourceFile) -> set[str]:
    """The top-level modules ``source`` imports."""
    return {name.split(".")[0] for unit in source.units if unit.tree for node in walk(unit.tree)
            for name in imported_names(node)}


def sibling_paths(graded: SourceFile, folder: Path, wanted: set[str]) -> list[Path]:
    """The files beside ``graded`` worth reading: the modules it imports (a ``viz.py``, a package
    folder), and every other ``.py`` file of the folder when it misses a graded role (``wanted``)."""
    try:
        entries = sorted(p for p in folder.iterdir() if not p.name.startswith("."))[:MAX_FILES]
    except OSError:
        return []
    imported = imported_modules(graded)
    found = []
    for entry in entries:
        if entry == graded.path or (entry.is_symlink() and not inside(entry, folder)):
            continue
        if entry.suffix == ".py" and entry.is_file() and (wanted or entry.stem in imported):
            found.append(entry)
        elif entry.is_dir() and entry.name in imported and (entry / "__init__.py").is_file():
            found.extend(candidate_files(entry))
    return found[:MAX_FILES]


def with_siblings(graded: SourceFile, path: Path, names: dict[str, str], work: set[str] = frozenset(),
                  config: Config | None = None) -> Submission | None:
    """The submission of the file at ``path`` with what its folder gives it (see the module's
    docstring), or ``None`` when the folder gives it nothing."""
    folder = path.parent
    if any(unit.tree is None for unit in graded.units):
        return None
    wanted = {role for role, name in names.items() if not defines(graded, name)}
    try:
        siblings = [read_file(sibling, str(sibling.relative_to(folder)))
                    for sibling in sibling_paths(graded, folder, wanted)]
    except InputError:  # a sibling too large or unreadable: the file is graded on its own
        return None
    if sum(len(u.source) for s in siblings for u in s.units) > MAX_CODE_BYTES:
        return None
    for source in siblings:
        for unit in source.units:
            parse_unit(unit)
    leave_out_libraries(siblings, set(names.values()), {path.stem} | {Path(s.display).stem for s in siblings})
    imported = imported_modules(graded)
    # The same work: what the file imports, what imports the file (a train.py doing
    # ``from engine import Value``), and the course's own files of the exercise (``work``: the engine and
    # the training file its scaffold writes, whose train.py needs no import); never another file that merely
    # sits in the same folder.
    siblings = [s for s in siblings if Path(s.path.relative_to(folder).parts[0]).stem in imported
                or path.stem in imported_modules(s) or {path.name, s.path.name} <= work]
    providers, notes = {}, []
    for role, name in names.items():
        source = choose([s for s in siblings if defines(s, name)], name, config) if role in wanted else None
        providers[role] = source or graded
        if source is not None:
            notes.append(f"{name} is not in {graded.display}: it was graded from {source.display} beside it; "
                         f"to grade the submission as a whole, grade its folder (micrograde grade {path.parent})")
    if not siblings:
        return None
    graded.notes.extend(notes)
    return Submission(path, [graded, *siblings], providers, directory=folder, names=names)
