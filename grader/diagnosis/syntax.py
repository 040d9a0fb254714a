"""Reading a graded function's syntax tree: its statements, what they assign, what they call.

Blame and the reading of a topological sort both ask the same questions of student code
(which statement holds this expression, which ``x.grad`` does it assign, which calls does it
make); the answers live here, read from the tree and never run.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from grader.exercise.names import CHILDREN_NAMES
from grader.exercise.words import MICROGRAD, Words
from grader.submission.tree import walk

Function = ast.FunctionDef | ast.AsyncFunctionDef


def statements(node: ast.AST) -> Iterator[ast.stmt]:
    """Every statement inside ``node``, nested functions included, in source order."""
    found = [n for n in walk(node) if isinstance(n, ast.stmt) and n is not node]
    return iter(sorted(found, key=lambda n: (n.lineno, n.col_offset)))


def top_level(function: Function, inner: ast.AST) -> ast.stmt | None:
    """The statement of ``function``'s own body that contains ``inner``."""
    for stmt in function.body:
        if any(n is inner for n in walk(stmt)):
            return stmt
    return None


def attribute_target(stmt: ast.stmt, attr: str) -> ast.Attribute | None:
    """The ``x.attr`` that ``stmt`` assigns to (``=`` or an augmented assignment), if any."""
    targets = stmt.targets if isinstance(stmt, ast.Assign) else (
        [stmt.target] if isinstance(stmt, (ast.AugAssign, ast.AnnAssign)) else [])
    for target in targets:
        for node in walk(target):
            if isinstance(node, ast.Attribute) and node.attr == attr:
                return node
    return None


def owner(attribute: ast.Attribute) -> str | None:
    """The variable an attribute belongs to: ``self`` in ``self.grad``."""
    return attribute.value.id if isinstance(attribute.value, ast.Name) else None


def calls(node: ast.AST, name: str) -> list[ast.Call]:
    """Calls of a method or function called ``name`` inside ``node``, in source order."""
    found = [n for n in walk(node) if isinstance(n, ast.Call) and (
        (isinstance(n.func, ast.Attribute) and n.func.attr == name)
        or (isinstance(n.func, ast.Name) and n.func.id == name))]
    return sorted(found, key=lambda n: (n.lineno, n.col_offset))


def enclosing(function: Function, inner: ast.AST) -> list[ast.AST]:
    """The nodes from ``function`` down to ``inner``'s parent."""
    path: list[ast.AST] = []

    def walk(node: ast.AST) -> bool:
        for child in ast.iter_child_nodes(node):
            if child is inner or walk(child):
                path.append(node)
                return True
        return False

    walk(function)
    return path[::-1]


def statement_of(function: Function, inner: ast.AST) -> ast.stmt | None:
    """The innermost statement that contains ``inner``."""
    if isinstance(inner, ast.stmt):
        return inner
    return next((n for n in reversed(enclosing(function, inner)) if isinstance(n, ast.stmt)), None)


def walks_children(node: ast.AST, function_names: set[str]) -> bool:
    """Whether ``node`` visits a node's operands: reads ``_prev`` (or its other names) or recurses."""
    for n in walk(node):
        if isinstance(n, ast.Attribute) and n.attr in CHILDREN_NAMES:
            return True
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in function_names:
            return True
    return False


def parameter(function: Function, position: int) -> str | None:
    """The name of a positional parameter (``self``, ``other``), if the function has it."""
    args = function.args.posonlyargs + function.args.args
    return args[position].arg if position < len(args) else None


def last_statement(stmt: ast.stmt) -> ast.stmt:
    """The last statement that runs at the end of ``stmt``: itself, or the last of its body (a loop's
    last inner statement). A statement missing after a block belongs right below that one."""
    while isinstance(getattr(stmt, "body", None), list) and stmt.body and not isinstance(stmt, ast.ClassDef):
        stmt = stmt.body[-1]
    return stmt


def grad_updates(function: Function, words: Words = MICROGRAD) -> list[tuple[ast.stmt, str | None]]:
    """Every statement that assigns to some ``x.grad`` (the engine's name for it), with ``x``'s name, in source
    order."""
    found = []
    for stmt in statements(function):
        target = attribute_target(stmt, words.grad)
        if target is not None and not isinstance(stmt, ast.AnnAssign):
            found.append((stmt, owner(target)))
    return found
