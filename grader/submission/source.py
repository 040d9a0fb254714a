"""Finding what a submission defines, without running any of it.

A submission is a ``.py`` file, a ``.ipynb`` notebook, or a directory of them.
This module reads the files, parses them (``ast`` only: nothing executes here)
and decides which file provides ``Value`` and which provides ``train_step``,
and where each graded method is written, so feedback can point at the line.

A submission is untrusted input to the grading process itself, so its size is
bounded before anything is parsed (``LIMITS``: parsing a megabyte of Python
takes about a second and a hundred megabytes), directories are walked without
following links, and a link that leads out of the submission is refused.
"""

from __future__ import annotations

import ast
import json
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from grader.child.inside.policy import FORBIDDEN_MODULES
from grader.errors import InputError
from grader.exercise.kinds import ROLES, VALUE, Role
from grader.exercise.ops import OPS
from grader.submission.tree import walk

TYPE_CHECKING = False  # as in grader/__init__.py

if TYPE_CHECKING:
    from grader.exercise.config import Config

# What a course can ask a Value class to have: a written one of these is work done.
GRADED_METHODS = frozenset({*(op.method for op in OPS.values()), "backward"})
SKIPPED_DIRS = {"__pycache__", ".ipynb_checkpoints", "tests", "node_modules"}
MIB = 1024 * 1024
MAX_FILE_BYTES = {".py": 1 * MIB, ".ipynb": 8 * MIB}  # a notebook's without its outputs, which are never graded
MAX_NOTEBOOK_BYTES = 64 * MIB  # a notebook as stored, outputs (plots, images) included
MAX_CODE_BYTES = 2 * MIB  # all the code parsed for one submission, notebook cells included
MAX_CELLS = 2000  # per notebook: validating one costs time per cell (110,000 cells in 8 MB: 20 s)
MAX_FILES = 200  # .py and .ipynb files read in a directory
MAX_TOTAL_BYTES = 32 * MIB  # all of them together
MAX_ENTRIES = 5000  # directory entries looked at while searching for them


@dataclass(frozen=True)
class Location:
    """Where something is written: a file, and for notebooks the cell (numbered from 1)."""

    file: str
    line: int | None = None
    cell: int | None = None

    def describe(self) -> str:
        where = self.file if self.cell is None else f"{self.file}, cell {self.cell}"
        return where if self.line is None else f"{where}, line {self.line}"


@dataclass
class Unit:
    """A piece of code executed as one: a whole ``.py`` file or one notebook cell."""

    filename: str
    source: str
    cell: int | None = None
    tree: ast.Module | None = None
    syntax_error: str | None = None
    syntax_line: int | None = None


@dataclass(eq=False)
class SourceFile:
    path: Path
    display: str
    kind: str  # "py" or "ipynb"
    units: list[Unit] = field(default_factory=list)
    read_error: str | None = None
    notes: list[str] = field(default_factory=list)  # what reading left out, for the report's warnings

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


def is_definition(node: ast.stmt, name: str) -> bool:
    return isinstance(node, (ast.ClassDef, ast.FunctionDef)) and node.name == name


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

    def location(self, method: str) -> Location | None:
        """Where the student wrote the graded method (or a graded function, such as the training one) ``method``."""
        for role, name in self.names.items():
            if role.what == "function" and method == name:
                source = self.providers.get(role)
                return source.defines(method) if source else None
        source = self.providers.get(VALUE)
        if source is None:
            return None
        location = None
        for unit in source.units:
            for node in unit.tree.body if unit.tree else ():
                if is_definition(node, self.names[VALUE]) and isinstance(node, ast.ClassDef):
                    for item in node.body:
                        if isinstance(item, ast.FunctionDef) and item.name == method:
                            location = Location(source.display, item.lineno, unit.cell)
        return location or source.defines(self.names[VALUE])

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

    def load_problems(self) -> list[tuple[str, Location]]:
        """Problems found before running anything: unreadable files, syntax errors."""
        problems = []
        for source in dict.fromkeys(self.providers.values()):
            if source.read_error:
                problems.append((source.read_error, Location(source.display)))
            for unit in source.units:
                if unit.syntax_error and source.kind == "py":
                    problems.append((unit.syntax_error, Location(source.display, unit.syntax_line)))
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


# A line as Python counts lines, with its ending: only \n, \r\n and \r end one (not \f, unlike splitlines).
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


def blanked(source: str, lines: list[int]) -> str:
    """``source`` with ``lines`` made blank (a space and their own ending: never a bare ending that
    could join a ``\\r`` before it into one ``\\r\\n``), so every other line keeps its number."""
    numbered = _LINE.findall(source)
    for number in lines:
        text = numbered[number - 1]
        numbered[number - 1] = " " + text[len(text.rstrip("\r\n")):]
    return "".join(numbered)


# An f-string whose braces hold the quote that delimits it: legal only from Python 3.12 (PEP 701).
_NESTED_QUOTES = re.compile(r"""\b[rR]?[fF][rR]?(['"]).*\{[^}]*\1""")


def newer_syntax(source: str, line: int | None) -> str:
    """Why code that a newer Python accepts fails here, if that is the reason: it says which version."""
    lines = source.splitlines()
    if sys.version_info < (3, 12) and line is not None and 0 < line <= len(lines) and _NESTED_QUOTES.search(
            lines[line - 1]):
        ran = f"{sys.version_info.major}.{sys.version_info.minor}"
        return (f" (this f-string reuses its own quotes inside {{ }}, which needs Python 3.12 or newer; "
                f"micrograde runs on Python {ran} here: use the other kind of quotes inside)")
    return ""


def parse_unit(unit: Unit) -> Unit:
    """Parse ``unit``, without the student's own self-check (parsed again only if it had one)."""
    try:
        tree = ast.parse(unit.source, filename=unit.filename)
        own = self_check_lines(tree)
        if own:
            unit.source = blanked(unit.source, own)
            tree = ast.parse(unit.source, filename=unit.filename)
        unit.tree = tree
    except SyntaxError as exc:
        unit.syntax_error = f"SyntaxError: {exc.msg}{newer_syntax(unit.source, exc.lineno)}"
        unit.syntax_line = exc.lineno
    except (ValueError, RecursionError, MemoryError) as exc:
        unit.syntax_error = f"{type(exc).__name__}: the source cannot be parsed"
    return unit


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
    from grader.submission.notebook import notebook_cells, without_outputs

    source = SourceFile(path, display, "ipynb")
    raw = read_bytes(path, display, MAX_NOTEBOOK_BYTES)
    limit = MAX_FILE_BYTES[".ipynb"]
    if len(raw) > limit:  # outputs are never graded: a notebook heavy with plots is graded on its code
        raw = without_outputs(raw) or raw
        if len(raw) > limit:
            raise InputError(f"{display}: {len(raw) / MIB:.1f} MB without its outputs is too large to grade "
                             f"(at most {limit // MIB} MB)")
    try:
        cells = json.loads(raw).get("cells")
    except (ValueError, AttributeError, RecursionError):
        cells = None  # not a notebook: notebook_cells says so
    if isinstance(cells, list) and len(cells) > MAX_CELLS:
        raise InputError(f"{display}: {len(cells)} cells are too many to grade (at most {MAX_CELLS})")
    for cell_number, code in notebook_cells(raw, display):
        source.units.append(Unit(f"{display} [cell {cell_number}]", code, cell_number))
    return source


def read_file(path: Path, display: str) -> SourceFile:
    if path.suffix == ".py":
        return read_python(path, display)
    if path.suffix == ".ipynb":
        return read_notebook(path, display)
    raise InputError(f"{display}: unsupported file type {path.suffix or '(none)'}; expected .py, .ipynb or a directory")


def parse_files(files: list[SourceFile], where: Path, roles: set[str], own: set[str]) -> None:
    """Parse every unit, once the code as a whole is known to be small enough to parse; leave out
    what notebooks compare with an autograd library (``roles``: the names of the graded code; ``own``:
    the submission's own modules, never a library)."""
    code = sum(len(unit.source.encode("utf-8", "replace")) for source in files for unit in source.units)
    if code > MAX_CODE_BYTES:
        raise InputError(f"{where}: {code / MIB:.1f} MB of code is too much to grade "
                         f"(at most {MAX_CODE_BYTES // MIB} MB)")
    for source in files:
        for unit in source.units:
            parse_unit(unit)
    notebooks = [source for source in files if source.kind == "ipynb"]
    if notebooks:
        leave_out_comparisons(notebooks, [u.tree for source in files for u in source.units if u.tree], roles, own)


def leave_out_comparisons(notebooks: list[SourceFile], trees: list[ast.Module], roles: set[str],
                          own: set[str]) -> None:
    """Leave out what notebook cells compare with an autograd library (``grader.submission.comparison``),
    each with a note saying so; ``trees`` are all the submission's code, ``roles`` the graded names."""
    from grader.submission import comparison

    protected = comparison.graded_names(trees, roles)
    for source in notebooks:
        for unit in source.units:
            found = comparison.without_library(unit.source, unit.tree, protected, own) if unit.tree else None
            if found is not None:
                unit.source = found[0]
                parse_unit(unit)
                source.notes.append(comparison.note(unit.cell, found[1]))


def inside(path: Path, root: Path) -> bool:
    """Whether ``path``, links followed, stays within the directory ``root``."""
    return path.resolve().is_relative_to(root.resolve())


def candidate_files(root: Path) -> list[Path]:
    """The .py and .ipynb files of a directory submission, found without following links.

    Hidden and skipped directories are not entered; a link to a file counts
    only if it stays inside ``root``; the search stops with ``InputError`` past
    ``MAX_ENTRIES`` entries, ``MAX_FILES`` files or ``MAX_TOTAL_BYTES`` bytes.
    """
    found, pending, seen, total = [], [root], 0, 0
    while pending:
        directory = pending.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError as exc:
            raise InputError(f"{directory}: cannot read ({exc.strerror})") from None
        seen += len(entries)
        if seen > MAX_ENTRIES:
            raise InputError(f"{root}: more than {MAX_ENTRIES} files and folders; not a submission to grade")
        for entry in entries:
            path = Path(entry.path)
            if entry.name.startswith(".") or entry.name in SKIPPED_DIRS:
                continue
            if entry.is_dir(follow_symlinks=False):
                pending.append(path)
                continue
            if path.suffix not in MAX_FILE_BYTES or (entry.name.startswith("test_") and path.suffix == ".py") \
                    or entry.name == "setup.py":
                continue  # a course's tests and set-up are not the work; a notebook named test_ can be
            if entry.is_symlink() and not inside(path, root):
                raise InputError(f"{path.relative_to(root)}: a link out of the submission is not graded")
            if path.is_file():
                found.append(path)
                total += path.stat().st_size
    if len(found) > MAX_FILES or total > MAX_TOTAL_BYTES:
        raise InputError(f"{root}: {len(found)} files, {total / MIB:.1f} MB: too much to grade "
                         f"(at most {MAX_FILES} files, {MAX_TOTAL_BYTES // MIB} MB)")
    return sorted(found)


def is_stub(function: ast.FunctionDef) -> bool:
    """A body that is only a docstring and ``raise NotImplementedError``: not written yet."""
    body = [n for n in function.body if not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))]
    return len(body) == 1 and isinstance(body[0], ast.Raise) and "NotImplementedError" in ast.unparse(body[0])


def methods_written(source: SourceFile, name: str) -> int:
    """How many of the graded methods (or the function) ``source`` has actually written for ``name``."""
    count = 0
    for unit in source.units:
        for node in unit.tree.body if unit.tree else ():
            if isinstance(node, ast.FunctionDef) and node.name == name:
                count = int(not is_stub(node))
            elif isinstance(node, ast.ClassDef) and node.name == name:
                count = sum(1 for item in node.body if isinstance(item, ast.FunctionDef)
                            and item.name in GRADED_METHODS and not is_stub(item))
    return count


def choose(files: list[SourceFile], name: str) -> SourceFile | None:
    """The file to take ``name`` from: a real definition beats an import, written code beats a stub
    (a student's copy of ``exercises/`` may hold a filled-in notebook beside untouched .py stubs),
    then ``.py`` beats a notebook."""

    def rank(source: SourceFile) -> tuple:
        defined = any(
            is_definition(node, name) for u in source.units for node in (u.tree.body if u.tree else ())
        )
        return (not defined, -methods_written(source, name), source.kind != "py", len(source.path.parts),
                source.display)

    having = [s for s in files if s.defines(name) or s.read_error or broken_python(s)]
    return min(having, key=rank) if having else None


def broken_python(source: SourceFile) -> bool:
    """A ``.py`` file that does not parse may still be the one meant to define the names."""
    return source.kind == "py" and any(u.syntax_error for u in source.units)


def read_submission(path: Path, config: Config | None = None) -> Submission:
    """Read and parse a submission; ``InputError`` when there is nothing gradable.

    ``config`` names the class and the training function (by default ``Value`` and ``train_step``).
    A single file is read alone: ``grader.submission.siblings`` adds what its folder gives it."""
    names = {role: role.key for role in ROLES} if config is None else config.parts()
    if not path.exists():
        raise InputError(f"{path}: no such file or directory")
    if path.is_symlink() and not inside(path, path.absolute().parent):
        raise InputError(f"{path}: a link out of the folder that holds it is not graded")
    if path.is_dir():
        files = [read_file(p, str(p.relative_to(path))) for p in candidate_files(path)]
        if not files:
            raise InputError(f"{path}: no .py or .ipynb files to grade")
        parse_files(files, path, set(names.values()), own_module_names(files, path))
        providers = {role: s for role, name in names.items() if (s := choose(files, name)) is not None}
        if not providers:
            raise InputError(f"{path}: no file defines {' or '.join(names.values())}")
        return Submission(path, files, providers, directory=path, names=names)
    if path.stat().st_size == 0:
        raise InputError(f"{path}: the file is empty")
    source = read_file(path, path.name)
    parse_files([source], path, set(names.values()), {path.stem})
    return Submission(path, [source], {role: source for role in names}, names=names)
