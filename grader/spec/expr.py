"""Expressions the grader asks a submission to compute, as plain data.

An expression is a tuple of nodes in topological order, the last node being
the root, in the form ``grader.child.harness`` documents (``("mul", 0, 1)`` multiplies
nodes 0 and 1). Because nodes refer to earlier nodes by index, one node can be
used many times: expressions are DAGs, which is what exposes gradient bugs
that trees never show.

``Sym`` writes expressions the way a person would (``a * a``, ``2 + b``) and
keeps sharing: the same ``Sym`` object used twice is one node used twice.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

Node = tuple
Expr = tuple[Node, ...]

OPS = ("add", "mul", "pow", "tanh")
SYMBOLS = {"add": "+", "mul": "*"}


class Sym:
    """A symbolic node: arithmetic on ``Sym`` records the expression instead of computing it."""

    def __init__(self, kind: str, args: tuple = ()):
        self.kind = kind
        self.args = args

    def _binary(self, kind: str, other: object, reflected: bool = False) -> Sym:
        other = other if isinstance(other, Sym) else Sym("const", (float(other),))
        return Sym(kind, (other, self) if reflected else (self, other))

    def __add__(self, other: object) -> Sym:
        return self._binary("add", other)

    def __radd__(self, other: object) -> Sym:
        return self._binary("add", other, reflected=True)

    def __mul__(self, other: object) -> Sym:
        return self._binary("mul", other)

    def __rmul__(self, other: object) -> Sym:
        return self._binary("mul", other, reflected=True)

    def __pow__(self, exponent: float) -> Sym:
        return Sym("pow", (self, exponent))

    def tanh(self) -> Sym:
        return Sym("tanh", (self,))


def leaf(name: str) -> Sym:
    return Sym("leaf", (name,))


def compile_sym(root: Sym) -> Expr:
    """Turn a ``Sym`` into node-list form, one node per distinct ``Sym`` object or leaf name."""
    nodes: list[Node] = []
    index: dict[object, int] = {}

    def visit(s: Sym) -> int:
        key = ("leaf", s.args[0]) if s.kind == "leaf" else id(s)
        if key in index:
            return index[key]
        if s.kind in ("leaf", "const"):
            node: Node = (s.kind, s.args[0])
        elif s.kind == "pow":
            node = ("pow", visit(s.args[0]), s.args[1])
        else:
            node = (s.kind, *(visit(a) for a in s.args))
        nodes.append(node)
        index[key] = len(nodes) - 1
        return index[key]

    visit(root)
    return tuple(nodes)


def operands(node: Node) -> tuple[int, ...]:
    """Indices of the nodes that ``node`` is computed from."""
    if node[0] in ("leaf", "const"):
        return ()
    if node[0] in ("pow", "tanh"):
        return (node[1],)
    return (node[1], node[2])


def prune(expr: Expr) -> Expr:
    """Drop nodes the root does not depend on and renumber the rest."""
    needed = {len(expr) - 1}
    for i in range(len(expr) - 1, -1, -1):
        if i in needed:
            needed.update(operands(expr[i]))
    renumber = {old: new for new, old in enumerate(sorted(needed))}
    out = []
    for i in sorted(needed):
        node = expr[i]
        if node[0] in ("leaf", "const"):
            out.append(node)
        elif node[0] == "pow":
            out.append(("pow", renumber[node[1]], node[2]))
        else:
            out.append((node[0], *(renumber[j] for j in operands(node))))
    return tuple(out)


def leaf_names(expr: Expr) -> list[str]:
    return [node[1] for node in expr if node[0] == "leaf"]


def use_counts(expr: Expr) -> list[int]:
    """How many times each node is used as an operand."""
    counts = [0] * len(expr)
    for node in expr:
        for j in operands(node):
            counts[j] += 1
    return counts


@dataclass(frozen=True)
class Features:
    """What kind of mistake an expression is able to expose for a given op."""

    reuse: bool  # some node feeds two uses, so `=` instead of `+=` shows
    constant: bool  # the op under test meets a plain number
    size: int


def features(expr: Expr, target: str | None = None) -> Features:
    counts = use_counts(expr)
    constant = any(
        node[0] == target and any(expr[j][0] == "const" for j in operands(node)) for node in expr
    )
    return Features(reuse=any(c > 1 for c in counts), constant=constant, size=len(expr))


def render(expr: Expr) -> str:
    """A readable form: ``((a * b) + c)``; nodes used twice are named ``t1``, ``t2``, ... ."""
    counts = use_counts(expr)
    names: dict[int, str] = {}
    bindings: list[str] = []

    def fmt_number(x: float) -> str:
        return repr(int(x)) if float(x).is_integer() and abs(x) < 1e15 else repr(x)

    def text(i: int, top: bool = False) -> str:
        if i in names:
            return names[i]
        node = expr[i]
        kind = node[0]
        if kind == "leaf":
            return node[1]
        if kind == "const":
            return fmt_number(node[1])
        if kind == "tanh":
            body = f"{text(node[1])}.tanh()"
        elif kind == "pow":
            body = f"({text(node[1])} ** {fmt_number(node[2])})"
        else:
            body = f"({text(node[1])} {SYMBOLS[kind]} {text(node[2])})"
        if counts[i] > 1 and not top:
            names[i] = f"t{len(names) + 1}"
            bindings.append(f"{names[i]} = {body}")
            return names[i]
        return body

    root = text(len(expr) - 1, top=True)
    return root if not bindings else f"{root}  where {', '.join(bindings)}"


def build_values(
    expr: Expr, inputs: Mapping[str, float], value_class: Callable, leaves: dict | None = None
) -> list:
    """Build ``expr`` from ``value_class`` (an engine with micrograd's API).

    ``leaves`` shares leaf objects by name between several expressions.
    """
    leaves = {} if leaves is None else leaves
    built: list = []
    for node in expr:
        kind = node[0]
        if kind == "leaf":
            if node[1] not in leaves:
                leaves[node[1]] = value_class(float(inputs[node[1]]))
            built.append(leaves[node[1]])
        elif kind == "const":
            built.append(node[1])
        elif kind == "add":
            built.append(built[node[1]] + built[node[2]])
        elif kind == "mul":
            built.append(built[node[1]] * built[node[2]])
        elif kind == "pow":
            built.append(built[node[1]] ** node[2])
        else:
            built.append(built[node[1]].tanh())
    return built


def observe(built: list, attr: str) -> list:
    """``attr`` of every built node, ``None`` for the plain-number constants."""
    return [None if isinstance(v, (int, float)) else getattr(v, attr) for v in built]


def evaluate(expr: Expr, inputs: Mapping[str, float], value_class: Callable) -> tuple[list, list]:
    """Data and gradient of every node after ``backward()`` from the root."""
    built = build_values(expr, inputs, value_class)
    built[-1].backward()
    return observe(built, "data"), observe(built, "grad")


def safe_domain(expr: Expr, inputs: Mapping[str, float]) -> bool:
    """True when every node stays where floating point and the ops are well behaved:
    no huge values, no power of a number near zero, no fractional power of a negative."""
    values: list[float] = []
    for node in expr:
        kind = node[0]
        if kind in ("leaf", "const"):
            value = float(inputs[node[1]]) if kind == "leaf" else node[1]
        elif kind == "pow":
            base, k = values[node[1]], node[2]
            if abs(base) < 0.2 or (base < 0 and not float(k).is_integer()):
                return False
            value = base**k
        elif kind == "tanh":
            value = math.tanh(values[node[1]])
        else:
            x, y = values[node[1]], values[node[2]]
            value = x + y if kind == "add" else x * y
        if not abs(value) <= 50.0:
            return False
        values.append(value)
    return True
