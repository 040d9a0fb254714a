"""Walking a submission's syntax trees.

The import checks, the shape of the class, the diagnoses and the blame each
walk the same parsed trees, some many times over (every function of a class,
every loop in it). ``walk`` gives the nodes ``ast.walk`` yields, in its order,
without the two generators ``ast.walk`` makes for every node.
"""

from __future__ import annotations

import ast


def walk(node: ast.AST) -> tuple[ast.AST, ...]:
    """``node`` and every node beneath it, breadth first, in the order ``ast.walk`` yields them."""
    found = [node]
    for current in found:  # the list grows while it is read: a queue that keeps what it served
        for field in current._fields:
            value = getattr(current, field, None)
            if isinstance(value, ast.AST):
                found.append(value)
            elif isinstance(value, list):
                found.extend(item for item in value if isinstance(item, ast.AST))
    return tuple(found)


def is_definition(node: ast.AST, name: str) -> bool:
    """Whether ``node`` is a class or function statement named ``name`` (a definition, not an import of it)."""
    return isinstance(node, (ast.ClassDef, ast.FunctionDef)) and node.name == name
