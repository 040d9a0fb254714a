"""Finding what a submission defines, without running any of it.

A submission is a ``.py`` file, a ``.ipynb`` notebook, or a directory of them.
This module reads the files, parses them (``ast`` only: nothing executes here)
and decides which file provides ``Value`` and which provides ``train_step``,
and where each graded method is written, so feedback can point at the line.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

from grader.submission.errors import InputError

WANTED = ("Value", "train_step")
METHODS = {"add": "__add__", "mul": "__mul__", "pow": "__pow__", "tanh": "tanh", "backward": "backward"}
SKIPPED_DIRS = {"__pycache__", ".ipynb_checkpoints", "tests", "node_modules"}
MAX_FILE_BYTES = 20 * 1024 * 1024


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
    """A submission as the grader sees it before running it."""

    path: Path
    files: list[SourceFile]
    providers: dict[str, SourceFile]
    directory: Path | None = None

    def location(self, target: str) -> Location | None:
        """Where the student wrote the graded method or function ``target``."""
        if target == "train_step":
            source = self.providers.get("train_step")
            return source.defines("train_step") if source else None
        source = self.providers.get("Value")
        if source is None:
            return None
        location = None
        for unit in source.units:
            for node in unit.tree.body if unit.tree else ():
                if is_definition(node, "Value") and isinstance(node, ast.ClassDef):
                    for item in node.body:
                        if isinstance(item, ast.FunctionDef) and item.name == METHODS[target]:
                            location = Location(source.display, item.lineno, unit.cell)
        return location or source.defines("Value")

    def local_modules(self) -> set[str]:
        """Top-level names the submission's own files provide (a ``micrograd/`` package, an
        ``engine.py``): importing one imports the student's code, not a forbidden library.
        The child's audit hook exempts the same names (``harness.local_module_names``)."""
        if self.directory is None:
            return {self.path.stem}
        names = set()
        for source in self.files:
            relative = source.path.relative_to(self.directory)
            names.update(relative.parts[:-1])
            if relative.suffix == ".py":
                names.add(relative.stem)
        return names

    def forbidden_imports(self) -> list[tuple[str, Location]]:
        """Imports of an autograd library or of the grader in the files graded, found by reading them.

        (What those files import from elsewhere is caught when it runs.)"""
        from grader.child.harness import FORBIDDEN_MODULES

        forbidden = FORBIDDEN_MODULES - self.local_modules()
        found = []
        for source in dict.fromkeys(self.providers.values()):
            for unit in source.units:
                for node in ast.walk(unit.tree) if unit.tree else ():
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


def without_self_check(source: str) -> str:
    """``source`` without the student's own ``from grader import check`` and ``check(...)`` lines.

    That is how a student checks their work from a notebook or script; it is
    not part of the work, and running it while grading would grade again. The
    lines are blanked rather than removed, so line numbers stay the student's.
    Anything else imported from the grader still counts as ``forbidden-import``.
    """
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return source
    lines = source.splitlines()
    for node in tree.body:
        imports_check = (isinstance(node, ast.ImportFrom) and node.module == "grader" and node.level == 0
                         and [a.name for a in node.names] == ["check"])
        value = getattr(node, "value", None)
        calls_check = (isinstance(node, (ast.Expr, ast.Assign)) and isinstance(value, ast.Call)
                       and isinstance(value.func, ast.Name) and value.func.id == "check")
        if imports_check or calls_check:
            for i in range(node.lineno - 1, node.end_lineno):
                lines[i] = ""
    return "\n".join(lines) + ("\n" if source.endswith("\n") else "")


def parse_unit(unit: Unit) -> Unit:
    unit.source = without_self_check(unit.source)
    try:
        unit.tree = ast.parse(unit.source, filename=unit.filename)
    except SyntaxError as exc:
        unit.syntax_error = f"SyntaxError: {exc.msg}"
        unit.syntax_line = exc.lineno
    except (ValueError, RecursionError, MemoryError) as exc:
        unit.syntax_error = f"{type(exc).__name__}: the source cannot be parsed"
    return unit


def read_python(path: Path, display: str) -> SourceFile:
    source = SourceFile(path, display, "py")
    raw = read_bytes(path)
    if b"\x00" in raw:
        raise InputError(f"{display}: binary file, not Python source")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        source.read_error = f"the file is not UTF-8 text (byte {exc.start})"
        return source
    source.units.append(parse_unit(Unit(display, text)))
    return source


def read_bytes(path: Path) -> bytes:
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise InputError(f"{path}: {size // (1024 * 1024)} MB is too large to grade")
        return path.read_bytes()
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror})") from None


def read_notebook(path: Path, display: str) -> SourceFile:
    from grader.submission.notebook import notebook_cells

    source = SourceFile(path, display, "ipynb")
    for cell_number, code in notebook_cells(read_bytes(path), display):
        source.units.append(parse_unit(Unit(f"{display} [cell {cell_number}]", code, cell_number)))
    return source


def read_file(path: Path, display: str) -> SourceFile:
    if path.suffix == ".py":
        return read_python(path, display)
    if path.suffix == ".ipynb":
        return read_notebook(path, display)
    raise InputError(f"{display}: unsupported file type {path.suffix or '(none)'}; expected .py, .ipynb or a directory")


def candidate_files(root: Path) -> list[Path]:
    found = []
    for path in sorted(root.rglob("*")):
        parts = path.relative_to(root).parts
        if any(p.startswith(".") or p in SKIPPED_DIRS for p in parts):
            continue
        if path.suffix in (".py", ".ipynb") and path.is_file() and not path.is_symlink():
            if path.name.startswith("test_") or path.name == "setup.py":
                continue
            found.append(path)
    return found


def is_stub(function: ast.FunctionDef) -> bool:
    """A body that is only a docstring and ``raise NotImplementedError``: not written yet."""
    body = [n for n in function.body if not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))]
    return len(body) == 1 and isinstance(body[0], ast.Raise) and "NotImplementedError" in ast.unparse(body[0])


def written(source: SourceFile, name: str) -> int:
    """How many of the graded methods (or the function) ``source`` has actually written for ``name``."""
    count = 0
    for unit in source.units:
        for node in unit.tree.body if unit.tree else ():
            if isinstance(node, ast.FunctionDef) and node.name == name:
                count = int(not is_stub(node))
            elif isinstance(node, ast.ClassDef) and node.name == name:
                count = sum(1 for item in node.body if isinstance(item, ast.FunctionDef)
                            and item.name in METHODS.values() and not is_stub(item))
    return count


def choose(files: list[SourceFile], name: str) -> SourceFile | None:
    """The file to take ``name`` from: a real definition beats an import, written code beats a stub
    (a student's copy of ``exercises/`` may hold a filled-in notebook beside untouched .py stubs),
    then ``.py`` beats a notebook."""

    def rank(source: SourceFile) -> tuple:
        defined = any(
            is_definition(node, name) for u in source.units for node in (u.tree.body if u.tree else ())
        )
        return (not defined, -written(source, name), source.kind != "py", len(source.path.parts), source.display)

    having = [s for s in files if s.defines(name) or s.read_error or broken_python(s)]
    return min(having, key=rank) if having else None


def broken_python(source: SourceFile) -> bool:
    """A ``.py`` file that does not parse may still be the one meant to define the names."""
    return source.kind == "py" and any(u.syntax_error for u in source.units)


def read_submission(path: Path) -> Submission:
    """Read and parse a submission; ``InputError`` when there is nothing gradable."""
    if not path.exists():
        raise InputError(f"{path}: no such file or directory")
    if path.is_dir():
        files = [read_file(p, str(p.relative_to(path))) for p in candidate_files(path)]
        if not files:
            raise InputError(f"{path}: no .py or .ipynb files to grade")
        providers = {name: s for name in WANTED if (s := choose(files, name)) is not None}
        if not providers:
            raise InputError(f"{path}: no file defines Value or train_step")
        return Submission(path, files, providers, directory=path)
    if path.stat().st_size == 0:
        raise InputError(f"{path}: the file is empty")
    source = read_file(path, path.name)
    return Submission(path, [source], {name: source for name in WANTED})
