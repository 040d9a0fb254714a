"""Finding what a submission defines, without running any of it.

A submission is a ``.py`` file, a ``.ipynb`` notebook, or a directory of them.
This module reads the files, parses them (``ast`` only: nothing executes here)
and decides which file provides ``Value`` and which provides ``train_step``,
and where each graded method is written, so feedback can point at the line.

A submission is untrusted input to the grading process itself, so its size is
bounded before anything is parsed (here, and a folder's in ``grader.submission.folder``: parsing a megabyte of Python
takes about a second and a hundred megabytes), directories are walked without
following links, and a link that leads out of the submission is refused.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass, field
from pathlib import Path

from grader.child.inside.policy import AUTOGRAD_LIBRARIES, FORBIDDEN_MODULES
from grader.errors import InputError
from grader.exercise.kinds import ROLES, VALUE, Role
from grader.submission.choice import broken_python, choose
from grader.submission.classes import value_like
from grader.submission.folder import MAX_FILE_BYTES, MIB, candidate_files, inside
from grader.submission.parsing import Unit, parse_unit
from grader.submission.tree import is_definition, walk

TYPE_CHECKING = False  # as in grader/__init__.py

if TYPE_CHECKING:
    from grader.exercise.config import Config

MAX_NOTEBOOK_BYTES = 64 * MIB  # a notebook as stored, outputs (plots, images) included
MAX_CODE_BYTES = 2 * MIB  # all the code parsed for one submission, notebook cells included
MAX_CELLS = 2000  # per notebook: validating one costs time per cell (110,000 cells in 8 MB: 20 s)


@dataclass(frozen=True)
class Location:
    """Where something is written: a file, and for notebooks the cell (numbered from 1)."""

    file: str
    line: int | None = None
    cell: int | None = None

    def describe(self) -> str:
        where = self.file if self.cell is None else f"{self.file}, cell {self.cell}"
        return where if self.line is None else f"{where}, line {self.line}"


@dataclass(eq=False)
class SourceFile:
    path: Path
    display: str
    kind: str  # "py" or "ipynb"
    units: list[Unit] = field(default_factory=list)
    read_error: str | None = None
    notes: list[str] = field(default_factory=list)  # what reading left out, for the report's warnings
    skipped: list[tuple[int, str]] = field(default_factory=list)  # cells the course's skip_cells left out

    def defines(self, name: str) -> Location | None:
        """Where this file binds ``name`` at top level (the last binding wins, as when run)."""
        found = None
        for unit in self.units:
            for node in unit.tree.body if unit.tree else ():
                if binds(node, name):
                    found = Location(self.display, node.lineno, unit.cell)
        return found


def binds(node: ast.stmt, name: str) -> bool:
    if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
        return node.name == name
    if isinstance(node, ast.Assign):
        return any(isinstance(t, ast.Name) and t.id == name for t in node.targets)
    if isinstance(node, (ast.ImportFrom, ast.Import)):
        return any((a.asname or a.name.split(".")[0]) == name for a in node.names)
    return False


@dataclass
class Submission:
    """A submission as the grader sees it before running it.

    ``providers`` maps a part (a ``Role``: the class, the training function) to the file that defines it;
    ``names`` maps each part to the name the course gives it (``Value``, ``Scalar``).
    """

    path: Path
    files: list[SourceFile]
    providers: dict[Role, SourceFile]
    directory: Path | None = None
    names: dict[Role, str] = field(default_factory=lambda: {role: role.key for role in ROLES})
    notes: list[str] = field(default_factory=list)  # what reading the folder left out, for the report's warnings
    unread: list[str] = field(default_factory=list)  # a folder's files the reader passes over (test_*.py)

    def location(self, method: str) -> Location | None:
        """Where the student wrote the graded method (or a graded function, such as the training one) ``method``:
        a method of the value class, or of another class the course names (``Tensor.__mul__``)."""
        for role, name in self.names.items():
            if role.what in ("function", "value", "part") and method == name:
                source = self.providers.get(role)
                return source.defines(method) if source else None
        owner, _, method = method.rpartition(".")
        role = next((r for r, name in self.names.items() if r.what in ("class", "part") and name == owner), VALUE)
        source = self.providers.get(role)
        if source is None:
            return None
        location = None
        for unit in source.units:
            for node in unit.tree.body if unit.tree else ():
                if is_definition(node, self.names[role]) and isinstance(node, ast.ClassDef):
                    for item in node.body:
                        if isinstance(item, ast.FunctionDef) and item.name == method:
                            location = Location(source.display, item.lineno, unit.cell)
        return location or self.attached(self.names[role], method) or source.defines(self.names[role])

    def attached(self, cls: str, method: str) -> Location | None:
        """Where the function attached to the class ``cls`` as its ``method`` (``Tensor.backward = backward``, in a
        cell of its own) is defined, if some file attaches one."""
        for source in self.files:
            for unit in source.units:
                for node in unit.tree.body if unit.tree else ():
                    if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) and any(
                            isinstance(t, ast.Attribute) and t.attr == method and isinstance(t.value, ast.Name)
                            and t.value.id == cls for t in node.targets):
                        found = next((f.defines(node.value.id) for f in self.files if f.defines(node.value.id)), None)
                        if found is not None:
                            return found
        return None

    def local_modules(self) -> set[str]:
        """Top-level names the submission's own files provide (see ``own_module_names``)."""
        return own_module_names(self.files, self.directory) if self.directory is not None else {self.path.stem}

    def forbidden_imports(self) -> list[tuple[str, Location]]:
        """Imports of an autograd library or of the grader in the files graded, found by reading them.

        (What those files import from elsewhere is caught when it runs.)"""
        forbidden = FORBIDDEN_MODULES - self.local_modules()
        found = []
        for source in dict.fromkeys(self.providers.values()):
            for unit in source.units:
                for node in walk(unit.tree) if unit.tree else ():
                    for name in imported_names(node):
                        if name.split(".")[0] in forbidden:
                            found.append((name, Location(source.display, node.lineno, unit.cell)))
        return found

    def load_problems(self) -> list[tuple[str, Location, tuple[Role, ...]]]:
        """Problems found before running anything (unreadable files, files that do not parse), each with
        the parts of the submission it leaves undefined (a statement or cell that does not compile:
        ``grader.submission.broken``)."""
        problems = []
        for source in dict.fromkeys(self.providers.values()):
            roles = tuple(role for role, provider in self.providers.items() if provider is source)
            if source.read_error:
                problems.append((source.read_error, Location(source.display), roles))
            for unit in source.units:
                if unit.syntax_error and source.kind == "py":
                    problems.append((unit.syntax_error, Location(source.display, unit.syntax_line), roles))
        return problems


def own_module_names(files: list[SourceFile], directory: Path) -> set[str]:
    """Top-level names the files of a folder provide (a ``micrograd/`` package, an ``engine.py``):
    importing one imports the student's code, not a forbidden library. The child's audit hook
    exempts the same names (``grader.child.inside.guard``)."""
    names = set()
    for source in files:
        relative = source.path.relative_to(directory)
        names.update(relative.parts[:-1])
        if relative.suffix == ".py":
            names.add(relative.stem)
    return names


def imported_names(node: ast.AST) -> list[str]:
    """Modules an ``import`` statement, ``__import__("...")`` or ``import_module("...")`` names."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if isinstance(node, ast.ImportFrom):
        return [node.module] if node.module and node.level == 0 else []
    if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        if name in ("__import__", "import_module") and isinstance(node.args[0].value, str):
            return [node.args[0].value]
    return []


def read_python(path: Path, display: str) -> SourceFile:
    """The file as one unit, not parsed yet."""
    source = SourceFile(path, display, "py")
    raw = read_bytes(path, display)
    if b"\x00" in raw:
        raise InputError(f"{display}: binary file, not Python source")
    try:
        text = raw.decode("utf-8-sig")  # an editor's byte-order mark is no part of the code
    except UnicodeDecodeError as exc:
        source.read_error = f"the file is not UTF-8 text (byte {exc.start})"
        return source
    source.units.append(Unit(display, text))
    return source


def read_bytes(path: Path, display: str, limit: int | None = None) -> bytes:
    """The file's bytes, if it is no larger than ``limit`` (its kind's by default; checked before reading)."""
    limit = limit or MAX_FILE_BYTES[path.suffix]
    try:
        size = path.stat().st_size
        if size > limit:
            raise InputError(f"{display}: {size / MIB:.1f} MB is too large to grade (at most {limit // MIB} MB)")
        with open(path, "rb") as handle:
            return handle.read(limit + 1)[:limit]
    except OSError as exc:
        raise InputError(f"{display}: cannot read ({exc.strerror})") from None


def read_notebook(path: Path, display: str) -> SourceFile:
    """Each gradable code cell as a unit, not parsed yet."""
    from grader.submission.notebook import sectioned_cells, shallow, without_outputs

    source = SourceFile(path, display, "ipynb")
    raw = read_bytes(path, display, MAX_NOTEBOOK_BYTES)
    shallow(raw, display)
    limit = MAX_FILE_BYTES[".ipynb"]
    if len(raw) > limit:  # outputs are never graded: a notebook heavy with plots is graded on its code
        raw = without_outputs(raw) or raw
        if len(raw) > limit:
            raise InputError(f"{display}: {len(raw) / MIB:.1f} MB without its outputs is too large to grade "
                             f"(at most {limit // MIB} MB)")
    try:
        cells = json.loads(raw).get("cells")
    except (ValueError, AttributeError, RecursionError):
        cells = None  # not a notebook: sectioned_cells says so
    if isinstance(cells, list) and len(cells) > MAX_CELLS:
        raise InputError(f"{display}: {len(cells)} cells are too many to grade (at most {MAX_CELLS})")
    for cell_number, code, tags, section in sectioned_cells(raw, display):
        source.units.append(Unit(f"{display} [cell {cell_number}]", code, cell_number, tags=tags, section=section))
    return source


def leave_out(files: list[SourceFile], selectors: tuple[str, ...]) -> None:
    """Drop the notebook cells that ``selectors`` select (the course's own: ``[submission] skip_cells``), each
    recorded on its file (``SourceFile.skipped``), so that the report says they were not graded."""
    from grader.submission.notebook import first_line, selects

    for source in files if selectors else ():
        kept = []
        for unit in source.units:
            if source.kind == "ipynb" and any(selects(s, unit.tags, unit.source) for s in selectors):
                source.skipped.append((unit.cell, first_line(unit.source)))
            else:
                kept.append(unit)
        source.units[:] = kept


def read_file(path: Path, display: str) -> SourceFile:
    if path.suffix == ".py":
        return read_python(path, display)
    if path.suffix == ".ipynb":
        return read_notebook(path, display)
    raise InputError(f"{display}: unsupported file type {path.suffix or '(none)'}; expected .py, .ipynb or a directory")


def parse_files(files: list[SourceFile], where: Path) -> None:
    """Parse every unit, once the code as a whole is known to be small enough to parse."""
    code = sum(len(unit.source.encode("utf-8", "replace")) for source in files for unit in source.units)
    if code > MAX_CODE_BYTES:
        raise InputError(f"{where}: {code / MIB:.1f} MB of code is too much to grade "
                         f"(at most {MAX_CODE_BYTES // MIB} MB)")
    for source in files:
        for unit in source.units:
            parse_unit(unit)


def leave_out_libraries(files: list[SourceFile], roles: set[str], own: set[str]) -> None:
    """Leave out the autograd libraries that graded code does not reach (``grader.submission.comparison``),
    each with a note saying so; ``roles`` are the names of the graded code, ``own`` the submission's own
    modules, never a library."""
    libraries = AUTOGRAD_LIBRARIES - own
    if not any(library in unit.source for source in files for unit in source.units for library in libraries):
        return  # the usual case, found without reading the rule
    from grader.submission import comparison

    protected = comparison.graded_names([u.tree for source in files for u in source.units if u.tree], roles)
    for source in files:
        later = comparison.redefined_later([unit.tree for unit in source.units])
        for unit, superseded in zip(source.units, later):
            found = (comparison.without_library(unit.source, unit.tree, protected, own, superseded)
                     if unit.tree else None)
            if found is not None:
                unit.source = found[0]
                parse_unit(unit)
                source.notes.append(comparison.note(source.display, unit.cell, found[2], found[1]))


def read_submission(path: Path, config: Config | None = None) -> Submission:
    """Read and parse a submission; ``InputError`` when there is nothing gradable.

    ``config`` names the class and the training function (by default ``Value`` and ``train_step``), and the
    notebook cells that are the course's own (``skip_cells``: never run nor graded).
    A single file is read alone: ``grader.submission.siblings`` adds what its folder gives it."""
    names = {role: role.key for role in ROLES} if config is None else config.parts()
    skip = () if config is None else config.skip_cells
    if not path.exists():
        raise InputError(f"{path}: no such file or directory")
    if path.is_symlink() and not inside(path, path.absolute().parent):
        raise InputError(f"{path}: a link out of the folder that holds it is not graded")
    if path.is_dir():
        passed_over: list[Path] = []
        left_out: list[str] = []
        files = [read_file(p, str(p.relative_to(path))) for p in candidate_files(path, left_out, passed_over)]
        if not files:
            raise InputError(f"{path}: no .py or .ipynb files to grade")
        leave_out(files, skip)
        parse_files(files, path)
        providers = {role: s for role, name in names.items() if (s := choose(files, name, config)) is not None}
        notes = [f"{', '.join(sorted(left_out))} {'was' if len(left_out) == 1 else 'were'} left out: a virtual "
                 "environment, installed packages or build output is not the submission"] if left_out else []
        notes += adopt_value_class(files, providers, names)
        leave_out_libraries(files, set(names.values()), own_module_names(files, path))
        if not providers:
            raise InputError(f"{path}: no file defines {' or '.join(names.values())}")
        return Submission(path, files, providers, directory=path, names=names, notes=notes,
                          unread=sorted(str(p.relative_to(path)) for p in passed_over))
    if path.stat().st_size == 0:
        raise InputError(f"{path}: the file is empty")
    source = read_file(path, path.name)
    leave_out([source], skip)
    parse_files([source], path)
    notes = adopt_value_class([source], {}, names)
    leave_out_libraries([source], set(names.values()), {path.stem})
    return Submission(path, [source], {role: source for role in names}, names=names, notes=notes)


def adopt_value_class(files: list[SourceFile], providers: dict[Role, SourceFile], names: dict[Role, str]) -> list[str]:
    """When no file defines the course's class but one holds a class that behaves like it (``Node``,
    ``value``: ``grader.submission.classes``), grade that class: it is named and provided here, and the
    note returned says so."""
    wanted = names[VALUE]
    if any(s.defines(wanted) or broken_python(s, wanted) for s in files):
        return []
    others = frozenset(name for role, name in names.items() if role is not VALUE)
    for source in sorted(files, key=lambda s: (s.kind != "py", s.display)):
        if (name := value_like(source.units, others)) is not None:
            names[VALUE], providers[VALUE] = name, source
            return [f"no class is called {wanted}; the class {name} in {source.display} looks like it and was "
                    f"graded as {wanted}"]
    return []
