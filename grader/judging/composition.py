"""Which op of the learner's class is at fault when a whole computation goes wrong, read from its graph.

The child sends the graph as the learner's nodes hold it after their own backward
pass: each node's value, gradient, ``_op`` label and operands. Each node that has
operands is read as the op that gives its value from its operands' (its label
decides between ops that agree); that op's local derivatives then say what gradient
each operand must get from it. So every node is checked on its own, with the numbers
around it as they are: a node whose value no op gives (or not the op its label
names) is that op's forward pass at fault; an operand whose gradient is not the sum
of what its users' local derivatives pass it is one of its users' backward at fault
(the one whose share alone it holds, when a share replaced the others). One op's bug
is found where it is, whatever it did to the rest of the graph; when the suspects of
every wrong gradient share no single op, nothing is said.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

from grader.exercise.ops import BUILT_IN, OPS

# The ops a node of one or two operands may be read as, and the labels learners give them: from the op table.
UNARY = tuple(name for name in BUILT_IN if OPS[name].arity == 1 and not OPS[name].exponent)
BINARY = tuple(name for name in BUILT_IN if OPS[name].arity == 2 and not OPS[name].number_first)
EXPONENTS = (2.0, 3.0, -1.0, -2.0, 0.5, -0.5, 1.5, 4.0)  # pow's exponents tried when the label gives none
LABELS = {spelled: name for name in (*BINARY, *UNARY) for spelled in (name, OPS[name].label, *OPS[name].spellings)}


@dataclass(frozen=True)
class Fault:
    """An op of the learner's (``grader.exercise.ops`` name, or ``backward`` for the seed) and what is wrong."""

    op: str
    code: str  # wrong-forward, wrong-local-grad, grad-overwrite or missing-seed
    position: int | None = None  # the operand whose gradient it passes wrongly (0: self, 1: other), if known


@dataclass(frozen=True)
class Reading:
    """What one node is: its op (None: not known), each operand's local derivative (None: not known), and
    whether its value is its op's."""

    op: str | None
    local: tuple[float, ...] | None
    forward_ok: bool = True
    roles: tuple[int, ...] | None = None  # each operand's place in the op's call (0: self, 1: other), if known


def same(x: float, y: float) -> bool:
    return math.isclose(x, y, rel_tol=1e-7, abs_tol=1e-12)


def labelled(label: object, operands: int) -> str | None:
    """The op a node's label names, if any (``-`` on a node of one operand is a negation)."""
    if not isinstance(label, str):
        return None
    if label == "-" and operands == 1:
        return "neg"
    return "pow" if label.startswith("**") else LABELS.get(label, LABELS.get(label.lower()))


def exponents(label: object) -> tuple[float, ...]:
    if isinstance(label, str) and label.startswith("**"):
        try:
            return (float(label[2:]),)
        except ValueError:
            pass
    return EXPONENTS


def unary(x: float, z: float, label: object) -> list[tuple[str, tuple[float, ...]]]:
    """The ops of one operand that give ``z`` from ``x``, with their local derivative (an op of two operands
    used on one node twice, ``a * a``, keeps it once in a set)."""
    found = []
    for name in UNARY:
        try:
            out = OPS[name].forward(x)
        except (ArithmeticError, ValueError):
            continue
        if same(out, z):
            found.append((name, OPS[name].local(x, out)))
    for k in exponents(label):
        try:
            out = x**k
        except (ArithmeticError, ValueError):
            continue
        if isinstance(out, float) and same(out, z):
            found.append(("pow", (k * x ** (k - 1),)))
    found += [(name, (local,)) for name, out, local in (("add", 2 * x, 2.0), ("mul", x * x, 2 * x)) if same(out, z)]
    return found


def binary(x: float, y: float, z: float) -> list[tuple[str, tuple[float, ...], tuple[int, ...]]]:
    """The ops of two operands that give ``z`` from ``x`` and ``y`` (in either order: a set keeps none), each with
    its local derivatives and the operands' places in its call."""
    found = []
    for name in BINARY:
        for first, second, roles in ((x, y, (0, 1)), (y, x, (1, 0))):
            try:
                out = OPS[name].forward(first, second)
            except (ArithmeticError, ValueError):
                continue
            if same(out, z):
                local = OPS[name].local(first, second, out)
                found.append((name, local[::-1] if roles == (1, 0) else local, roles))
    return found


def read(node: list, data: list) -> Reading:
    """The op ``node`` is, from its operands' values, its own and its label (and, where they are kept in order,
    which operand is ``self``)."""
    z, label, children, ordered = node[0], node[2], node[3], node[4]
    if not isinstance(z, float) or any(c is None or not isinstance(data[c], float) for c in children):
        return Reading(labelled(label, len(children)), None)
    values = [data[c] for c in children]
    found = ([(op, local, (0,)) for op, local in unary(values[0], z, label)] if len(values) == 1 else
             binary(values[0], values[1], z) if len(values) == 2 else [])
    named = labelled(label, len(values))
    if named is not None:
        mine = [entry for entry in found if entry[0] == named]
        fits = len(values) in (1, 2) if named in BINARY else len(values) == 1
        if not mine:  # the op its label names, with these operands, gives another value: its forward is wrong
            return Reading(named, None, forward_ok=not fits)
        found = mine
    if found and any(abs(v) == 1.0 for v in values) and any(local != found[0][1] for _, local, _ in found):
        # An operand of 1 or -1 makes a product a quotient too (-1 * x is x / -1): the simpler op, as code writes it.
        found = [entry for entry in found if entry[0] == found[0][0]]
    if not found or any(local != found[0][1] for _, local, _ in found):
        return Reading(None, None)
    roles = {entry[2] for entry in found}
    known = roles.pop() if len(roles) == 1 else (0, 1) if ordered else None  # a*b reads as b*a too: the order says
    return Reading(found[0][0], tuple(found[0][1]), roles=known)


def fault(nodes: list, cap: int = 5000, inputs: frozenset[int] | None = None) -> Fault | None:
    """The one op at fault in the learner's graph ``nodes`` (the root first), if the graph shows one; ``inputs``
    are the computation's inputs' positions, where known: any other node with no operands is a constant, whose
    gradient says nothing."""
    nodes = nodes[:cap]
    data = [n[0] for n in nodes]
    readings = [read(n, data) if n[3] else None for n in nodes]
    wrong = [r.op for r in readings if r is not None and not r.forward_ok and r.op]
    if wrong:
        return Fault(Counter(wrong).most_common(1)[0][0], "wrong-forward")
    grads = [n[1] for n in nodes]
    if not (isinstance(grads[0], float) and same(grads[0], 1.0)):
        return Fault("backward", "missing-seed")
    shares: dict[int, list[tuple[int, float]]] = {}
    known = set()
    for p, (node, reading) in enumerate(zip(nodes, readings)):
        for position, child in enumerate(node[3] if reading is not None else ()):
            if child is None:
                continue  # a plain number, or a node past the graph's cap
            shares.setdefault(child, []).append((p, reading.local[position] if reading.local else math.nan))
        if reading is not None and reading.local is not None and isinstance(grads[p], float):
            known.add(p)
    suspects = []
    for child, given in shares.items():
        if child == 0 or any(p not in known for p, _ in given):
            continue
        constant = inputs is not None and child not in inputs
        if not nodes[child][3] and (not isinstance(grads[child], float) or constant):
            continue  # a constant (one the engine keeps no gradient on, ``requires_grad=False``): nothing to compare
        parts = [local * grads[p] for p, local in given]
        if isinstance(grads[child], float) and same(grads[child], math.fsum(parts)):
            continue
        got = grads[child]
        alone = [p for (p, _), part in zip(given, parts) if len(parts) > 1 and isinstance(got, float)
                 and same(got, part)]
        # Holding one user's share alone: that user replaced the others' (an overwrite), or the others passed it
        # nothing; which of them is told by the other wrong gradients (the op every suspect has in common).
        users = [alone[-1], *(p for p, _ in given if p != alone[-1])] if alone else \
            explained(given, parts, got, readings) or [p for p, _ in given]
        suspects.append(({readings[p].op for p in users}, bool(alone),
                         {role_of(nodes[p], readings[p], child) for p in users}))
    if not suspects:
        return None
    common = set.intersection(*(ops for ops, _, _ in suspects))
    if len(common) != 1:
        return None
    op = common.pop()
    mine = [(replaced, roles) for ops, replaced, roles in suspects if ops == {op}]
    positions = set.union(*(roles for _, roles in mine)) if mine else {None}
    code = "grad-overwrite" if mine and all(replaced for replaced, _ in mine) else "wrong-local-grad"
    return Fault(op, code, positions.pop() if len(positions) == 1 else None)


def explained(given: list[tuple[int, float]], parts: list[float], got: object, readings: list) -> list[int]:
    """The users of a node whose share alone, passed wrongly in one of the usual ways (not at all, with its sign
    reversed, twice, or without ``out.grad``), explains the gradient it got, if they are all one op's."""
    if not isinstance(got, float) or len(parts) < 2:
        return []
    total = math.fsum(parts)
    found = [p for (p, local), part in zip(given, parts)
             if any(same(got, total - part + wrong) for wrong in (0.0, -part, 2 * part, local))]
    return found if len({readings[p].op for p in found}) == 1 else []


def role_of(node: list, reading: Reading, child: int) -> int | None:
    """The place in the op's call (0: self, 1: other) of ``child`` among ``node``'s operands, if known."""
    if reading.roles is None or node[3].count(child) != 1:
        return None
    return reading.roles[node[3].index(child)]


def recomputed(nodes: list, leaves: list) -> tuple[float, list[float]] | None:
    """The learner's graph computed again with every node the op it reads as, done right: the root's value and the
    gradient of each input's leaf (``leaves``: their positions), from the leaves' own values. ``None`` where that
    cannot be done: a node whose op, exponent or operands' order is not known, an operand past the graph's cap, a
    cycle, an input not in the graph. What a computation gives once its one faulty op is right: a computation whose
    only fault is that op must then give the reference's numbers."""
    if not nodes or any(not isinstance(p, int) or isinstance(p, bool) or not 0 <= p < len(nodes) for p in leaves):
        return None
    data = [n[0] for n in nodes]
    order = postorder(nodes)
    if order is None:
        return None
    value: dict[int, float] = {}
    rules = {}
    for p in order:
        node = nodes[p]
        if not node[3]:
            if not isinstance(node[0], float):
                return None
            value[p] = node[0]
            continue
        rule = rule_of(node, data)
        if rule is None:
            return None
        forward, local, operands = rule
        try:
            value[p] = forward(*(value[c] for c in operands))
        except (ArithmeticError, ValueError):
            return None
        rules[p] = (local, operands)
    grads = dict.fromkeys(value, 0.0)
    grads[0] = 1.0
    for p in reversed(order):
        if p in rules:
            local, operands = rules[p]
            try:
                parts = local(*(value[c] for c in operands), value[p])
            except (ArithmeticError, ValueError):
                return None
            for c, d in zip(operands, parts):
                grads[c] += d * grads[p]
    return value[0], [grads[p] for p in leaves]


def postorder(nodes: list) -> list[int] | None:
    """The graph's nodes from the root, each after its operands (an explicit stack: no recursion); ``None`` for a
    cycle or an operand past the graph."""
    state = [0] * len(nodes)  # 0: unseen, 1: on the way, 2: done
    order, stack = [], [(0, False)]
    while stack:
        p, done = stack.pop()
        if done:
            state[p] = 2
            order.append(p)
            continue
        if state[p] == 2:
            continue
        if state[p] == 1:
            return None
        state[p] = 1
        stack.append((p, True))
        for c in nodes[p][3]:
            if c is None:
                return None
            if state[c] == 1:
                return None
            if state[c] == 0:
                stack.append((c, False))
    return order


def rule_of(node: list, data: list):
    """How ``node`` is computed right from its operands, as the op it reads as: its forward function, its local
    derivatives' (of the operands and the output), and the operands in the op's order; ``None`` if not known."""
    reading = read(node, data)
    children = node[3]
    name = reading.op
    if name is None:
        return None
    if len(children) == 1:
        if name in UNARY:
            return OPS[name].forward, lambda x, out: OPS[name].local(x, out), children
        if name == "add":
            return (lambda x: 2 * x), (lambda x, out: (2.0,)), children
        if name == "mul":
            return (lambda x: x * x), (lambda x, out: (2 * x,)), children
        if name == "pow":
            k = exponent(node, data)
            if k is None:
                return None
            return (lambda x: x**k), (lambda x, out: (k * x ** (k - 1),)), children
        return None
    if len(children) == 2 and name in BINARY:
        roles = reading.roles or ((0, 1) if name in ("add", "mul") else None)
        if roles is None:
            return None
        ordered = [children[roles.index(0)], children[roles.index(1)]]
        return OPS[name].forward, lambda x, y, out: OPS[name].local(x, y, out), ordered
    return None


def exponent(node: list, data: list) -> float | None:
    """A power node's exponent: the one its label names, else the one of ``EXPONENTS`` that gives its value."""
    label = node[2]
    named = exponents(label)
    if named is not EXPONENTS:
        return named[0]
    x = data[node[3][0]]
    found = [k for k in EXPONENTS if isinstance(x, float) and isinstance(node[0], float)
             and isinstance(power := _power(x, k), float) and same(power, node[0])]
    return found[0] if len(found) == 1 else None


def _power(x: float, k: float) -> object:
    try:
        return x**k
    except (ArithmeticError, ValueError):
        return None
