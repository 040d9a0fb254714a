"""The shape of the house: the sandbox boundary in the layout, small modules, no import circle."""

from __future__ import annotations

import ast
from pathlib import Path

from helpers import ROOT

GRADER = ROOT / "grader"
INSIDE = GRADER / "child" / "inside"
MAX_FUNCTION_LINES = 100
MAX_LINES = 500


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
