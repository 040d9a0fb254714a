"""Running a learner's code as the course runs it: notebook cells in order, files unit by unit.

A notebook cell that does not compile is skipped (Jupyter runs the others); a cell that raises is
recorded and the next cells run. In a ``.py`` file a top-level statement that does not compile is left
out, so the rest of the file still defines what it defines. Modules that are not installed here
(plots, datasets, the installed ``micrograd``) are inert stand-ins; cells that use PyTorch are skipped;
the network is closed, so a download cell fails at once.
"""

from __future__ import annotations

import contextlib
import importlib.abc
import importlib.util
import io
import json
import random
import re
import socket
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path

STAND_INS = ("matplotlib", "sklearn", "micrograd", "graphviz", "IPython", "tqdm", "seaborn")


class Inert(types.ModuleType):
    """A module, function or object that accepts every use and does nothing."""

    def __getattr__(self, name: str) -> Inert:
        if name.startswith("__"):
            raise AttributeError(name)
        return Inert(f"{self.__name__}.{name}")

    def __call__(self, *args: object, **kwargs: object) -> Inert:
        return Inert(f"{self.__name__}()")


class _InertFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Found last: only a module that is not installed (or not the learner's own) becomes inert."""

    def find_spec(self, name, path=None, target=None):  # noqa: ANN001, ANN201 (the import system's protocol)
        if name.split(".")[0] in STAND_INS:
            return importlib.util.spec_from_loader(name, self, is_package=True)
        return None

    def create_module(self, spec):  # noqa: ANN001, ANN201
        module = Inert(spec.name)
        module.__path__ = []
        return module

    def exec_module(self, module):  # noqa: ANN001, ANN201
        return None


def _no_network(*args: object, **kwargs: object) -> None:
    raise OSError("the network is closed while the corpus is checked")


def prepare() -> None:
    """Once per process: stand-ins for missing modules, no network, no bytecode written beside learners' files, and
    one seed for the learners' random weights, so that a check whose outcome depends on them (a missing bias that a
    relu hides when every pre-activation is negative) comes out the same every run."""
    random.seed(20261205)
    sys.dont_write_bytecode = True
    sys.meta_path.append(_InertFinder())
    socket.socket = _no_network  # type: ignore[assignment, misc]
    socket.create_connection = _no_network  # type: ignore[assignment]


def neutralise(source: str) -> str:
    """IPython's line magics and shell escapes become ``pass``, as micrograde's notebook reader does."""
    return "\n".join(re.sub(r"^(\s*)[%!].*$", r"\1pass", line) for line in source.split("\n"))


def uses_torch(source: str) -> bool:
    return re.search(r"^\s*(import torch|from torch\b)", source, re.M) is not None


@dataclass
class Cell:
    number: int  # from 1, every cell counted, as Jupyter shows them top to bottom
    kind: str
    source: str
    status: str = "not run"  # ran | raised | syntax-error | skipped (torch) | markdown
    error: BaseException | None = None


@dataclass
class Notebook:
    path: Path
    cells: list[Cell]
    namespace: dict = field(default_factory=lambda: {"__name__": "__main__"})

    def cell(self, number: int) -> Cell:
        return self.cells[number - 1]


def read_notebook(path: Path) -> Notebook:
    raw = json.loads(path.read_text(encoding="utf-8"))
    cells = []
    for number, cell in enumerate(raw["cells"], 1):
        source = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
        cells.append(Cell(number, cell["cell_type"], source, "markdown" if cell["cell_type"] != "code" else "not run"))
    return Notebook(path, cells)


def run_cell(notebook: Notebook, cell: Cell) -> None:
    """Run one code cell in the notebook's namespace, quietly, recording how it ended."""
    if uses_torch(cell.source):
        cell.status = "skipped"
        return
    try:
        code = compile(neutralise(cell.source), f"<cell {cell.number}>", "exec")
    except SyntaxError as exc:
        cell.status, cell.error = "syntax-error", exc
        return
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            exec(code, notebook.namespace)
        cell.status = "ran"
    except Exception as exc:  # noqa: BLE001 (a learner's cell may raise anything; Jupyter goes on)
        cell.status, cell.error = "raised", exc


def run_notebook(path: Path, after=None) -> Notebook:  # noqa: ANN001 (after: a callback on each code cell)
    """Every code cell in order; ``after(notebook, cell)`` runs right after each one."""
    notebook = read_notebook(path)
    for cell in notebook.cells:
        if cell.kind == "code":
            run_cell(notebook, cell)
            if after is not None:
                after(notebook, cell)
    return notebook


def compilable(source: str, filename: str) -> tuple[str, list[SyntaxError]]:
    """``source`` with each top-level statement that does not compile blanked out, and the errors."""
    lines = source.split("\n")
    errors: list[SyntaxError] = []
    while True:
        try:
            compile("\n".join(lines), filename, "exec")
            return "\n".join(lines), errors
        except SyntaxError as exc:
            errors.append(exc)
            at = (exc.lineno or 1) - 1
            start = next(i for i in range(min(at, len(lines) - 1), -1, -1) if _top_level(lines[i]) or i == 0)
            end = next((i for i in range(at + 1, len(lines)) if _top_level(lines[i])), len(lines))
            lines[start:end] = [""] * (end - start)


def _top_level(line: str) -> bool:
    return bool(line) and not line[0].isspace() and not line.startswith(("#", ")", "]", "}"))


class UnitLoader(importlib.abc.Loader):
    """Loads a learner's module unit by unit: what compiles is defined even when a later class does not."""

    errors: dict[str, list[SyntaxError]] = {}

    def __init__(self, path: Path) -> None:
        self.path = path

    def create_module(self, spec):  # noqa: ANN001, ANN201
        return None

    def exec_module(self, module):  # noqa: ANN001, ANN201
        source, errors = compilable(self.path.read_text(encoding="utf-8"), str(self.path))
        UnitLoader.errors[module.__name__] = errors
        exec(compile(source, str(self.path), "exec"), module.__dict__)


class LearnerFinder(importlib.abc.MetaPathFinder):
    """Finds modules in the learner's folder first, loading them with ``UnitLoader``."""

    def __init__(self, root: Path, alias: str | None = None, package: str | None = None) -> None:
        self.root, self.alias, self.package = root, alias, package

    def find_spec(self, name, path=None, target=None):  # noqa: ANN001, ANN201
        parts = name.split(".")
        if self.alias:
            if parts[0] != self.alias:
                return None
            parts = [self.package, *parts[1:]]
        base = self.root.joinpath(*parts)
        if (base / "__init__.py").exists():
            return importlib.util.spec_from_file_location(name, base / "__init__.py", loader=UnitLoader(
                base / "__init__.py"), submodule_search_locations=[str(base)])
        if base.with_suffix(".py").exists():
            return importlib.util.spec_from_file_location(name, base.with_suffix(".py"),
                                                          loader=UnitLoader(base.with_suffix(".py")))
        return None


def learner_imports(root: Path, alias: str | None = None, package: str | None = None) -> None:
    """Imports of the learner's modules (or, with ``alias``, of ``package`` under another name) come from root."""
    sys.meta_path.insert(0, LearnerFinder(root, alias, package))


def load_file(path: Path) -> tuple[dict, list[SyntaxError]]:
    """A ``.py`` submission run as a module (its ``__main__`` guard not taken), unit by unit."""
    source, errors = compilable(path.read_text(encoding="utf-8"), str(path))
    namespace: dict = {"__name__": path.stem, "__file__": str(path)}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(source, str(path), "exec"), namespace)
    return namespace, errors
