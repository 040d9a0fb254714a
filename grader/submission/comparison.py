"""A notebook's comparison with an autograd library: the library is left out, the rest of the cell runs.

Learners check their gradients against PyTorch in a cell of their own, and that
cell often imports what the work needs too (``import torch`` and ``import math``
above a few lines comparing ``torch.tanh`` with their own). Leaving the whole cell
out would leave ``math`` undefined and blame their ``tanh``; running it would
import a library no submission may use. So the library's imports, and every
top-level statement that uses what they bound (or what such a statement bound in
turn), are left out, line numbers kept, and the rest of the cell runs. Graded code
that uses the library itself is not a comparison: such a cell is left as it is,
and the import is ``forbidden-import``.
"""

from __future__ import annotations

import ast

from grader.child.inside.policy import AUTOGRAD_LIBRARIES as LIBRARIES
from grader.submission.notebook import SKIP_TAG
from grader.submission.tree import walk


def graded_names(trees: list[ast.Module], roles: set[str]) -> set[str]:
    """The roles' own names and the global names their top-level definitions read (a name the
    definition never binds itself: not a parameter, a local or a loop variable)."""
    found = set(roles)
    for tree in trees:
        for node in tree.body:
            if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in roles:
                inner = list(walk(node))
                local = {n.arg for n in inner if isinstance(n, ast.arg)} | {
                    n.id for n in inner if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
                found.update(n.id for n in inner if isinstance(n, ast.Name) and n.id not in local)
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


def without_library(source: str, tree: ast.Module, protected: set[str],
                    own: frozenset[str] = frozenset()) -> tuple[str, str] | None:
    """``source`` with a library's imports and the statements using them left out, and the library;
    ``None`` when the cell imports none (``own``: the submission's modules, never a library), or
    when the names it would leave out are graded code's (``protected``)."""
    library, tainted, edits = None, set(), []
    for node in tree.body:
        found = library_import(node, own)
        if found is not None:
            library = library or found[0]
            kept = found[1]
            tainted |= bound_names(node) - {(a.asname or a.name).split(".")[0] for a in kept}
            text = ("import " + ", ".join(a.name + (f" as {a.asname}" if a.asname else "") for a in kept)
                    if kept else "pass")
            edits.append((node, text))
        elif tainted and any(isinstance(n, ast.Name) and n.id in tainted for n in walk(node)):
            tainted |= bound_names(node)
            edits.append((node, "pass"))
    if library is None or tainted & protected:
        return None
    rewritten = replaced(source, edits)
    try:
        ast.parse(rewritten)
    except SyntaxError:  # statements sharing lines in a way the rewrite cannot keep apart
        return None
    return rewritten, library


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


def note(cell: int | None, library: str) -> str:
    """What the report says of a cell whose comparison was left out."""
    return (f"cell {cell} imports {library}: taken for a comparison with {library}, its lines that use {library} "
            f"were left out and the rest of the cell ran (tag a cell {SKIP_TAG} to leave it out whole)")
