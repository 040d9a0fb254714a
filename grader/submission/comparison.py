"""An autograd library outside the graded code: left out before anything runs, the rest graded.

Learners compare their gradients with PyTorch, try the installed ``micrograd`` in an exploratory cell,
or keep ``import torch`` at the top of a file for a check under ``if __name__ == "__main__":``. The rule,
the same for files and notebooks: a forbidden library is penalised (``forbidden-import``) only where
graded code reaches it; elsewhere it is neutralised, and the report flags it for a human. So the
library's top-level imports (plain, or inside a ``try``, ``if`` or ``with``), every top-level function
or class of ungraded code that imports it, and every top-level statement that uses what those bound (or
what such a statement bound in turn) are left out, line numbers kept, and the rest runs. Graded code is
the class and function the course grades and every top-level name they read, at any depth
(``graded_names``): if it uses the library, nothing is left out and the import is ``forbidden-import``.
An import that reading cannot see (a name built at run time) is caught as it runs, and is that too.
"""

from __future__ import annotations

import ast

from grader.child.inside.policy import AUTOGRAD_LIBRARIES as LIBRARIES
from grader.submission.notebook import SKIP_TAG
from grader.submission.tree import walk

DEFINITIONS = (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
# What a warning about a library left out ends with: the grade stands, and a person may want to look.
REVIEW = "flagged for a human to look at"


def graded_names(trees: list[ast.Module], roles: set[str]) -> set[str]:
    """The roles' own names and the global names their top-level definitions read (a name the
    definition never binds itself: not a parameter, a local or a loop variable), and the names those
    definitions read in turn, at any depth."""
    definitions: dict[str, list[ast.stmt]] = {}
    for tree in trees:
        for node in tree.body:
            if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                definitions.setdefault(node.name, []).append(node)
    found, pending = set(roles), list(roles)
    while pending:
        for node in definitions.get(pending.pop(), []):
            inner = list(walk(node))
            local = {n.arg for n in inner if isinstance(n, ast.arg)} | {
                n.id for n in inner if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
            read = {n.id for n in inner if isinstance(n, ast.Name) and n.id not in local} - found
            found |= read
            pending.extend(read)
    return found


def bound_names(node: ast.stmt) -> set[str]:
    """The names a top-level statement binds (assignment targets, loop and ``with`` targets, definitions)."""
    if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
        return {node.name}
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".")[0] for a in node.names}
    return {n.id for n in walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def library_import(node: ast.stmt, own: set[str]) -> tuple[str, list[ast.alias]] | None:
    """For an import of a library (not one of the submission's ``own`` modules): the library, and
    the aliases of the statement to keep."""
    libraries = LIBRARIES - own
    if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] in libraries:
        return node.module.split(".")[0], []
    if isinstance(node, ast.Import):
        found = [a.name.split(".")[0] for a in node.names if a.name.split(".")[0] in libraries]
        if found:
            return found[0], [a for a in node.names if a.name.split(".")[0] not in libraries]
    return None


def nested_import(node: ast.stmt, own: set[str]) -> tuple[str, set[str]] | None:
    """For a top-level statement that imports a library somewhere inside it (a ``try``, an ``if``, a function
    or class of ungraded code): the library, and the names leaving it out takes away."""
    for inner in walk(node):
        found = library_import(inner, own) if isinstance(inner, (ast.Import, ast.ImportFrom)) else None
        if found is not None:
            if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                return found[0], {node.name}
            aliases = {(a.asname or a.name).split(".")[0] for n in walk(node)
                       if isinstance(n, (ast.Import, ast.ImportFrom)) for a in n.names}
            return found[0], bound_names(node) | aliases
    return None


def redefined_later(trees: list[ast.Module | None]) -> list[set[str]]:
    """For each of a file's trees in order (a notebook's cells), the names a later one defines again, with a
    class or function of its own: an earlier import of ``Value`` from a library (an exploratory cell trying the
    installed ``micrograd``) is superseded by then, and what is graded is the later definition."""
    later: set[str] = set()
    found = []
    for tree in reversed(trees):
        found.append(set(later))
        later |= {n.name for n in tree.body if isinstance(n, DEFINITIONS) and n.name not in read_when_defined(n)
                  } if tree else set()
    return found[::-1]


def read_when_defined(node: ast.stmt) -> set[str]:
    """The names a class or function statement reads as it runs (bases, decorators, defaults), not later when
    it is called: ``class Value(Value)`` builds on what ``Value`` was, ``Value.__add__`` inside a method reads
    what it is."""
    if isinstance(node, ast.ClassDef):
        parts = [*node.bases, *(k.value for k in node.keywords), *node.decorator_list]
    else:
        parts = [*node.decorator_list, *node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)]
    return {n.id for part in parts for n in walk(part) if isinstance(n, ast.Name)}


def without_library(source: str, tree: ast.Module, protected: set[str],
                    own: frozenset[str] = frozenset(), superseded: set[str] = frozenset()) -> (
        tuple[str, str, int] | None):
    """``source`` with a library's imports and the statements using them left out, the library, and the
    line of its first import; ``None`` when the source imports none (``own``: the submission's modules,
    never a library), or when what it would leave out is graded code's (``protected``).

    A name the library bound that is defined again before graded code is read (further down: a class or
    function of the same name that uses nothing the library bound; or in a later cell, ``superseded``) is the
    learner's by then: leaving the import out takes nothing graded code reads. The library is never loaded
    either way (the child refuses its import), so no rewrite here can credit its code."""
    library, line, tainted, edits = None, 0, set(), []
    for node in tree.body:
        found = library_import(node, own)
        nested = nested_import(node, own) if found is None else None
        if found is not None:
            kept = found[1]
            tainted |= bound_names(node) - {(a.asname or a.name).split(".")[0] for a in kept}
            text = ("import " + ", ".join(a.name + (f" as {a.asname}" if a.asname else "") for a in kept)
                    if kept else "pass")
            edits.append((node, text))
        elif nested is not None:
            found = nested
            tainted |= nested[1]
            edits.append((node, "pass"))
        elif tainted:
            uses = {n.id for n in walk(node) if isinstance(n, ast.Name)} & tainted
            if isinstance(node, DEFINITIONS) and node.name not in read_when_defined(node):
                uses.discard(node.name)  # its own name, read when it is called: the new definition
            if uses:
                tainted |= bound_names(node)
                edits.append((node, "pass"))
            else:
                tainted -= bound_names(node)  # bound again by the learner's own code
        if found is not None and library is None:
            library, line = found[0], node.lineno
    if library is None or (tainted - superseded) & protected:
        return None
    rewritten = replaced(source, edits)
    try:
        ast.parse(rewritten)
    except SyntaxError:  # statements sharing lines in a way the rewrite cannot keep apart
        return None
    return rewritten, library, line


def replaced(source: str, edits: list[tuple[ast.stmt, str]]) -> str:
    """``source`` with each statement's text replaced, on the statement's first line; the rest of
    its lines become blank, so every other statement keeps its line."""
    lines = source.splitlines(keepends=True)

    def offset(line: int, byte_column: int) -> int:
        return sum(len(text) for text in lines[:line - 1]) + len(
            lines[line - 1].encode("utf-8")[:byte_column].decode("utf-8", "replace"))

    for node, text in sorted(edits, key=lambda edit: (edit[0].lineno, edit[0].col_offset), reverse=True):
        start, end = offset(node.lineno, node.col_offset), offset(node.end_lineno, node.end_col_offset)
        blank = "".join(c if c in "\r\n" else "" for c in source[start:end])
        source = source[:start] + text + blank + source[end:]
        lines = source.splitlines(keepends=True)
    return source


def note(display: str, cell: int | None, line: int, library: str) -> str:
    """What the report says of a file or cell whose library was left out."""
    if cell is not None:
        return (f"cell {cell} imports {library}: taken for a comparison with {library}, its lines that use "
                f"{library} were left out and the rest of the cell ran (tag a cell {SKIP_TAG} to leave it out "
                f"whole); no graded code uses it, so the grade stands, {REVIEW}")
    return (f"{display}, line {line} imports {library} outside the graded code: it and the lines that use it were "
            f"left out and the rest of the file ran; no graded code uses it, so the grade stands, {REVIEW}")
