"""The shape of the house: the sandbox boundary in the layout, small modules, no import circle."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from helpers import ROOT

GRADER = ROOT / "grader"
INSIDE = GRADER / "child" / "inside"
MAX_FUNCTION_LINES = 100
MAX_LINES = 400
INTERNALS = ROOT / "docs" / "internals.md"
# The rooms of grader/, in the order a submission goes through them and docs/internals.md tells them: each imports
# only from the rooms before it. A tuple is one room of top-level modules (the grade, run by every route).
ROOMS = ("grader.exercise", "grader.submission", "grader.child", "grader.judging", "grader.search",
         "grader.diagnosis", "grader.report", ("grader.course", "grader.grade", "grader.staging", "grader.student"),
         "grader.staff", "grader.commands", ("grader.cli", "grader.__main__"))
# What every room may import: the error family, the grader's secrets, the version; and the one statement of what a
# submission may not reach, which the inside of the sandbox keeps and the grading process reads.
FOUNDATIONS = ("grader.errors", "grader.keyfile", "grader.version", "grader.child.inside.policy")


def python_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path) -> set[str]:
    """Every module ``path`` imports, at the top or inside a function, with relative imports resolved."""
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def test_the_inside_of_the_sandbox_imports_nothing_of_the_grader():
    """What runs in the child and the fork server is shipped as code and must stand alone: standard
    library and its own modules only."""
    inside = module_name(INSIDE / "__init__.py")
    for path in python_files(INSIDE):
        outside = sorted(m for m in imported_modules(path)
                         if m.split(".")[0] in ("grader", "reference") and not m.startswith(inside))
        assert outside == [], f"{path.relative_to(ROOT)} imports {outside}"


def test_the_grading_process_imports_nothing_of_the_inside_but_its_policy():
    """The child's modules are shipped as code (``grader.child.shipping``), never imported by the grading
    process, which reads only the one statement of what a submission may not reach (``policy``)."""
    inside = module_name(INSIDE / "__init__.py")
    for path in python_files(GRADER):
        if path.is_relative_to(INSIDE):
            continue
        reached = sorted(m for m in imported_modules(path) if m.startswith(inside + ".")
                         and not m.startswith(f"{inside}.policy"))
        assert reached == [], f"{path.relative_to(ROOT)} imports {reached}"


def test_every_inside_module_is_shipped():
    """A module of the inside that the child or the fork server is never given would be dead code there."""
    from grader.child.shipping import CHILD_MODULES, FORK_SERVER_MODULES

    modules = {p.stem for p in python_files(INSIDE) if p.name != "__init__.py"}
    assert modules == set(CHILD_MODULES) | set(FORK_SERVER_MODULES) | {"training"}


def test_no_module_is_too_long_to_read_in_one_sitting():
    long = {str(p.relative_to(ROOT)): n for p in python_files(GRADER)
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert long == {}


def test_no_function_is_too_long_to_read_in_one_sitting():
    """A function over a hundred lines is several ideas: each gets a name of its own."""
    long = {f"{p.relative_to(ROOT)}:{node.name}": node.end_lineno - node.lineno + 1
            for p in [*python_files(GRADER), *python_files(ROOT / "reference")]
            for node in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES}
    assert long == {}


def test_no_import_circle():
    """Imports follow the flow of a submission: no two modules of the grader need each other."""
    modules = {module_name(p): p for p in [*python_files(GRADER), *python_files(ROOT / "reference")]}
    graph = {name: sorted(m for m in imported_modules(path) if m in modules and m != name)
             for name, path in modules.items()}
    # A package's __init__ is imported by each of its modules; it may import its children lazily.
    graph = {name: [m for m in edges if not name.startswith(m + ".")] for name, edges in graph.items()}
    state: dict[str, str] = {}

    def visit(name: str, path: list[str]) -> None:
        state[name] = "open"
        for nxt in graph[name]:
            assert state.get(nxt) != "open", "import circle: " + " -> ".join([*path, name, nxt])
            if nxt not in state:
                visit(nxt, [*path, name])
        state[name] = "done"

    for name in graph:
        if name not in state:
            visit(name, [])


def room_of(name: str) -> int | None:
    """The place in ``ROOMS`` of the room that module (or name) ``name`` lies in; None for a foundation."""
    if name == "grader" or any(name == f or name.startswith(f + ".") for f in FOUNDATIONS):
        return None
    for place, room in enumerate(ROOMS):
        if any(name == m or name.startswith(m + ".") for m in (room if isinstance(room, tuple) else (room,))):
            return place
    raise AssertionError(f"{name} lies in no room of ROOMS (tests/unit/test_layout.py): add it as the docs say")


def front_door(package: str) -> list[str]:
    """The modules a package's ``__init__.py`` lets other rooms import (its ``__all__``), read without importing it."""
    init = ROOT.joinpath(*package.split("."), "__init__.py")
    for node in ast.parse(init.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["__all__"]:
            return list(ast.literal_eval(node.value))
    return []


def grader_modules() -> dict[str, Path]:
    """Every module of the grader but its front, ``grader/__init__.py`` (the public API, which may reach any room)."""
    return {module_name(p): p for p in python_files(GRADER) if p != GRADER / "__init__.py"}


def test_each_room_imports_only_from_the_rooms_before_it():
    against = sorted(f"{name} imports {m}" for name, path in grader_modules().items()
                     for m in imported_modules(path) if m.split(".")[0] == "grader"
                     and (there := room_of(m)) is not None and there > room_of(name))
    assert against == []


def test_another_room_comes_in_only_by_its_front_door():
    """A package's ``__init__.py`` says what the room is and which of its modules others use; everything else in it
    may change without a look outside."""
    packages = {module_name(p) for p in GRADER.glob("*/__init__.py")}
    doors = {package: front_door(package) for package in packages}
    for package, names in doors.items():
        assert names, f"{package}/__init__.py names no module others may import (__all__)"
        assert all((ROOT.joinpath(*package.split("."), n + ".py")).exists()
                   or ROOT.joinpath(*package.split("."), n).is_dir() for n in names), f"{package}: {names}"
    through = sorted(f"{name} imports {m}" for name, path in grader_modules().items() for m in imported_modules(path)
                     if (package := ".".join(m.split(".")[:2])) in packages and not name.startswith(package + ".")
                     and len(m.split(".")) > 2 and room_of(m) is not None and m.split(".")[2] not in doors[package])
    assert through == []


def test_the_rooms_are_in_the_order_the_internals_tell():
    """docs/internals.md's numbered flow names the rooms of ``ROOMS`` in its order, each by its files."""
    flow = INTERNALS.read_text(encoding="utf-8").split("## The flow of a submission")[1].split("\n## ")[0]
    told = [[path.rstrip("/").removesuffix(".py").replace("/", ".") for path in re.findall(r"`(grader/[\w/.]+)`", item)]
            for item in re.findall(r"^\d+\. \*\*[^*]+\*\* \(([^)]*)\)", flow, re.M)]
    assert told[:-1] == [list(room) if isinstance(room, tuple) else [room] for room in ROOMS[:-2]]
    assert told[-1] == [ROOMS[-2], ROOMS[-1][0]]
