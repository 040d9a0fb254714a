"""Expressions the grader asks a submission to compute, as plain data.

An expression is a tuple of nodes in topological order, the last node being
the root: ``("leaf", name)``, ``("const", number)``, or an op of ``grader.exercise.ops``
with the indices of its operands (``("mul", 0, 1)`` multiplies nodes 0 and 1) and,
for ``pow``, its exponent (``("pow", 0, 2.0)``). Because nodes refer to earlier nodes by index, one node can be
used many times: expressions are DAGs, which is what exposes gradient bugs
that trees never show.

``Sym`` writes expressions the way a person would (``a * a``, ``2 + b``) and
keeps sharing: the same ``Sym`` object used twice is one node used twice.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from grader.exercise import ops

Node = tuple
Expr = tuple[Node, ...]


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

    def __sub__(self, other: object) -> Sym:
        return self._binary("sub", other)

    def __rsub__(self, other: object) -> Sym:
        return self._binary("sub", other, reflected=True)

    def __truediv__(self, other: object) -> Sym:
        return self._binary("truediv", other)

    def __rtruediv__(self, other: object) -> Sym:
        return self._binary("truediv", other, reflected=True)

    def __neg__(self) -> Sym:
        return Sym("neg", (self,))

    def __pow__(self, exponent: float) -> Sym:
        return Sym("pow", (self, exponent))

    def apply(self, kind: str, *others: object) -> Sym:
        """Any op by name (``a.apply("radd", 2)`` is ``2 + a`` through ``__radd__``)."""
        if ops.OPS[kind].number_first:
            return Sym(kind, (Sym("const", (float(others[0]),)), self))
        return Sym(kind, (self, *(o if isinstance(o, Sym) else Sym("const", (float(o),)) for o in others)))

    def __getattr__(self, name: str):
        """Unary methods by their op's name: ``a.tanh()``, ``a.relu()``, ``a.log()``."""
        spec = ops.OPS.get(name)
        if spec is None or spec.arity != 1 or spec.exponent or not spec.call.startswith("method."):
            raise AttributeError(name)
        return lambda: Sym(name, (self,))


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
        elif ops.OPS[s.kind].exponent:
            node = (s.kind, visit(s.args[0]), s.args[1])
        else:
            node = (s.kind, *(visit(a) for a in s.args))
        nodes.append(node)
        index[key] = len(nodes) - 1
        return index[key]

    visit(root)
    return tuple(nodes)


def operands(node: Node) -> tuple[int, ...]:
    """Indices of the nodes that ``node`` is computed from."""
    return tuple(node[1:1 + ops.operand_count(node)])


def exponent(node: Node) -> float | None:
    """The plain-number parameter of an op that takes one (pow's exponent)."""
    return node[-1] if node[0] in ops.OPS and ops.OPS[node[0]].exponent else None


def with_operands(node: Node, renumber: dict[int, int]) -> Node:
    """``node`` with its operand indices renumbered (an index ``renumber`` does not name stays)."""
    if node[0] in ("leaf", "const"):
        return node
    k = exponent(node)
    return (node[0], *(renumber.get(j, j) for j in operands(node)), *(() if k is None else (k,)))


def prune(expr: Expr) -> Expr:
    """Drop nodes the root does not depend on and renumber the rest."""
    needed = {len(expr) - 1}
    for i in range(len(expr) - 1, -1, -1):
        if i in needed:
            needed.update(operands(expr[i]))
    renumber = {old: new for new, old in enumerate(sorted(needed))}
    return tuple(with_operands(expr[i], renumber) for i in sorted(needed))


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
    # A plain number is part of a reflected op (2 + a through __radd__), not a special case of it.
    constant = target not in ops.OPS or not ops.OPS[target].number_first
    constant = constant and any(
        node[0] == target and any(expr[j][0] == "const" for j in operands(node)) for node in expr
    )
    return Features(reuse=any(c > 1 for c in counts), constant=constant, size=len(expr))


def fmt_number(x: float) -> str:
    return repr(int(x)) if float(x).is_integer() and abs(x) < 1e15 else repr(x)


def render(expr: Expr) -> str:
    """A readable form: ``((a * b) + c)``; nodes used twice are named ``t1``, ``t2``, ... ."""
    counts = use_counts(expr)
    names: dict[int, str] = {}
    bindings: list[str] = []

    def text(i: int, top: bool = False) -> str:
        if i in names:
            return names[i]
        node = expr[i]
        if node[0] == "leaf":
            return node[1]
        if node[0] == "const":
            return fmt_number(node[1])
        k = exponent(node)
        body = ops.OPS[node[0]].render([text(j) for j in operands(node)], None if k is None else fmt_number(k))
        if counts[i] > 1 and not top:
            names[i] = f"t{len(names) + 1}"
            bindings.append(f"{names[i]} = {body}")
            return names[i]
        return body

    root = text(len(expr) - 1, top=True)
    return root if not bindings else f"{root}  where {', '.join(bindings)}"


def node_symbol(node: Node) -> str:
    """What a drawing writes in the circle of an operation node: ``+``, ``** 2``, ``tanh``."""
    k = exponent(node)
    label = ops.OPS[node[0]].label
    return label if k is None else f"{label} {fmt_number(k)}"


class RuleNode:
    """A node of the engine the op table itself makes: each op's value and local derivatives by its own rules
    (``grader.exercise.ops``), micrograd's backward pass over them. The expected values of an expression with an
    op the reference engine does not have (a comparison, an op a course names with its formula)."""

    def __init__(self, data: float, operands: tuple = (), local: tuple = ()):
        self.data, self.grad = data, 0.0
        self.operands, self.local = operands, local

    @staticmethod
    def made(node: Node, args: list) -> RuleNode:
        values = [a.data if isinstance(a, RuleNode) else a for a in args]
        spec = ops.OPS[node[0]]
        given = [*values, *([node[-1]] if spec.exponent else [])]
        out = spec.forward(*given)
        return RuleNode(out, tuple(args), spec.local(*given, out))

    def backward(self) -> None:
        order: list[RuleNode] = []
        seen: set[int] = set()
        stack: list[tuple[RuleNode, bool]] = [(self, False)]
        while stack:
            v, done = stack.pop()
            if done:
                order.append(v)
            elif id(v) not in seen:
                seen.add(id(v))
                stack.append((v, True))
                stack.extend((o, False) for o in v.operands if isinstance(o, RuleNode))
        self.grad = 1.0
        for v in reversed(order):
            for o, d in zip(v.operands, v.local):
                if isinstance(o, RuleNode):
                    o.grad += d * v.grad


def engine_for(exprs: tuple[Expr, ...], reference_class: Callable) -> Callable:
    """The reference engine, where it has every op ``exprs`` use (a method of its own, not ``object``'s), else the
    op table's own (``RuleNode``)."""
    for expr in exprs:
        for node in expr:
            if node[0] not in ("leaf", "const"):
                method = ops.OPS[node[0]].method
                if getattr(reference_class, method, None) in (None, getattr(object, method, None)):
                    return RuleNode
    return reference_class


def apply(node: Node, built: list):
    """Apply ``node``'s op to already built operands, exactly as Python code would write it."""
    spec = ops.OPS[node[0]]
    args = [built[j] for j in operands(node)]
    if any(isinstance(a, RuleNode) for a in args):
        return RuleNode.made(node, args)
    how, _, name = spec.call.partition(".")
    if spec.exponent:
        args.append(node[-1])
    if how == "operator":
        return getattr(operator, name)(*args)
    return getattr(args[0], name)(*args[1:])


def build_values(
    expr: Expr, inputs: Mapping[str, float], value_class: Callable, leaves: dict | None = None
) -> list:
    """Build ``expr`` from ``value_class`` (an engine with micrograd's API).

    ``leaves`` shares leaf objects by name between several expressions.
    """
    leaves = {} if leaves is None else leaves
    built: list = []
    for node in expr:
        if node[0] == "leaf":
            if node[1] not in leaves:
                leaves[node[1]] = value_class(float(inputs[node[1]]))
            built.append(leaves[node[1]])
        elif node[0] == "const":
            built.append(node[1])
        else:
            built.append(apply(node, built))
    return built


def observe(built: list, attr: str) -> list:
    """``attr`` of every built node, ``None`` for the plain-number constants."""
    return [None if isinstance(v, (int, float)) else getattr(v, attr) for v in built]


def evaluate(expr: Expr, inputs: Mapping[str, float], value_class: Callable) -> tuple[list, list]:
    """Data and gradient of every node after ``backward()`` from the root."""
    built = build_values(expr, inputs, value_class)
    built[-1].backward()
    return observe(built, "data"), observe(built, "grad")


def forward_values(expr: Expr, inputs: Mapping[str, float]) -> list[float] | None:
    """Every node's value by the ops' own rules; ``None`` where a rule is undefined (log of -1)."""
    values: list[float] = []
    for node in expr:
        if node[0] in ("leaf", "const"):
            values.append(float(inputs[node[1]]) if node[0] == "leaf" else node[1])
            continue
        try:
            values.append(ops.forward(node, values))
        except (ArithmeticError, ValueError, TypeError):
            return None
    return values


def shares_a_value(expr: Expr, values: list[float], numbers: bool = False) -> bool:
    """Whether two distinct nodes of ``expr`` hold the same value (``values``, one per node, a plain
    number's own where it is ``None``): under a
    class whose nodes compare by value they are one node in a set. Plain numbers count with
    ``numbers`` (an op that lifts one into a node makes it one more node)."""
    seen = [round(node[1] if node[0] == "const" else v, 12) for node, v in zip(expr, values)
            if numbers or node[0] != "const"]
    return len(seen) != len(set(seen))


def safe_domain(expr: Expr, inputs: Mapping[str, float]) -> bool:
    """True when every node stays where floating point and the ops are well behaved:
    each op's operands in its safe region (no power of a number near zero, no log of a
    number near zero, no fractional power of a negative) and no huge values."""
    values = forward_values(expr, inputs)
    if values is None:
        return False
    for node, value in zip(expr, values):
        if node[0] not in ("leaf", "const"):
            args = [values[j] for j in operands(node)]
            k = exponent(node)
            if not ops.OPS[node[0]].safe(*args, *(() if k is None else (k,))):
                return False
        if not isinstance(value, (int, float)) or not abs(value) <= 50.0:
            return False
    return True
