"""Building a case's graph from the student's class, and the grader's own backward pass over it.

Expressions arrive as a list of nodes in topological order, the last being the
root: leaves, plain numbers, the student's op, and "fixed" nodes whose value and
local derivatives the grading process computed for this very case.
"""

import operator

from .failures import MissingMethod, SubmissionError
from .reading import address, stored_or_none

# The child knows no op and no derivative rule. Nodes the student did not write
# arrive as "fixed" nodes: their value and local derivatives are numbers the
# grading process computed for this very case. The student's ops are applied
# the way Python code applies them: an operator (so reflected methods are
# reached as Python reaches them) or a method call.
OPERATORS = {"add": operator.add, "mul": operator.mul, "pow": operator.pow, "neg": operator.neg,
             "sub": operator.sub, "truediv": operator.truediv, "lt": operator.lt, "gt": operator.gt,
             "le": operator.le, "ge": operator.ge, "eq": operator.eq, "ne": operator.ne}
COMPARISONS = ("lt", "gt", "le", "ge", "eq", "ne")


def student_op(engine, call, method, args, exponent, value_position):
    """Apply the student's own op (as the course calls it, else as Python code does); a missing method is
    not-implemented, a result that is not a node an error (a comparison may give a plain truth value)."""
    V = engine.V
    how, _, name = call.partition(".")
    out = engine.called(method, args, exponent)
    if out is None:
        owner = type(args[value_position])
        if getattr(owner, method, None) is None:
            raise MissingMethod(f"{V.__name__} has no method {method}")
        if exponent is not None:
            args = [*args, exponent]
        if how == "operator" and name in OPERATORS:
            out = OPERATORS[name](*args)
        elif how == "method" and name.isidentifier():
            out = getattr(args[0], name)(*args[1:])
        else:
            raise SubmissionError(f"unknown call {call}")
    if not isinstance(out, V):
        if name in COMPARISONS and type(out) in (bool, int, float):
            return float(out)  # a comparison that gives a truth value: a plain number, with no gradient
        raise SubmissionError(f"returned {type(out).__name__}, not a {V.__name__}")
    return out


def recorder(record, index):
    """A leaf's ``_backward`` that reports the leaf's index and, like any ``_backward``,
    takes no argument (so a backward pass that passes one fails as it would on its own)."""
    return lambda: record(index)


def build(engine, nodes, record=None, leaves=None, positions=None, moved=None):
    """Build the requested nodes: leaves, plain numbers, the student's op, fixed nodes.

    With ``record``, every fixed node's ``_backward`` first reports the node's
    index; ``leaves`` shares leaf objects between several expressions by name;
    ``positions`` gets each node's index as soon as it exists (before any node
    that uses it puts it in a set); ``moved`` gets the index of every student
    node whose op replaced an operand's own ``_backward`` (attached its closure
    to the wrong node).
    """
    built = []
    for index, node in enumerate(nodes):
        kind = node[0]
        if kind == "const":
            built.append(node[1])
        elif kind == "leaf":
            if leaves is not None and node[2] in leaves:
                built.append(leaves[node[2]])
                continue
            v = engine.leaf(node[1])
            if record is not None and engine.mode == "closure":
                engine.set_step(v, recorder(record, index))
            if leaves is not None:
                leaves[node[2]] = v
            built.append(v)
        elif kind == "student":
            _, call, operand_ids, exponent, method, value_position = node
            operands = [built[j] for j in operand_ids]
            before = [engine.step(v) for v in operands if not isinstance(v, (int, float))]
            built.append(student_op(engine, call, method, operands, exponent, value_position))
            after = [engine.step(v) for v in operands if not isinstance(v, (int, float))]
            if moved is not None and any(b is not a for b, a in zip(before, after)):
                moved.append(index)
        else:
            data, operand_ids, derivs, label, op = node[1:6]
            operands = [built[j] for j in operand_ids]
            if (record is not None and not engine.steppable) or engine.mode == "engine":
                # The pass cannot run micrograde's steps (the engine keeps its own tape, or micrograde knows no step
                # of a node to run alone): the real op makes the node.
                built.append(student_op(engine, op[1], op[4], operands, op[3], op[5]))
            else:
                hook = None if record is None else (lambda g=None, i=index: record(i, g))
                built.append(engine.fixed_node(data, operands, derivs, label, hook))
        if positions is not None:
            positions.setdefault(address(built[-1]), index)
    if record is not None:
        labelled(engine, nodes, built)
    return built


LABELS = ("label", "name", "_label", "_name")  # what a learner's nodes call their name, as their class spells it


def labelled(engine, nodes, built):
    """Give the nodes of a ``backward()`` case the names a learner's graph carries, where the class keeps one
    (a ``label`` its constructor stored as a string): the leaves their names, the other nodes names whose sorted
    order is no topological order either way (the first two swapped, then each next two), so a pass that orders
    its nodes by their names fails as it would on the learner's own labelled graphs."""
    inner = 0
    for spec, v in zip(nodes, built):
        if isinstance(v, (int, float)) or not isinstance(v, engine.V):
            continue
        if spec[0] == "leaf":
            name = str(spec[2])
        else:
            inner += 1
            name = f"t{inner + 1 if inner % 2 else inner - 1}"
        for attribute in LABELS:
            if isinstance(stored_or_none(v, attribute), str):
                try:
                    setattr(v, attribute, name)
                except Exception:  # noqa: BLE001 - a name that cannot be set: the node keeps its own
                    pass
                break


def propagate(engine, root, nodes):
    """The grader's own backward pass: reverse topological order over the nodes' operands.

    Operands are visited in expression order (nodes the student's op made on its
    own, such as a plain number wrapped in a Value, last and by value), so the
    result does not depend on how a ``set`` happens to iterate.
    """
    position = {address(v): i for i, v in enumerate(nodes) if not isinstance(v, (int, float))}

    def key(v):
        at = position.get(address(v))  # a node of the expression has a place of its own: no tie to break
        return (at, "") if at is not None else (len(nodes), repr(engine.data(v)))

    engine.own_pass([(root, 1.0)], topological(engine, [root], key))


def topological(engine, roots, key=None, limit=None):
    """Every node reachable from ``roots`` through its operands, each after all of its operands and once
    (a cycle is cut where it closes); ``key`` orders each node's operands, and past ``limit`` nodes the
    walk stops with ``SubmissionError``. A stack, never a recursion: a graph may be of any depth."""
    topo, seen, stack = [], set(), [(root, False) for root in reversed(roots)]
    while stack:
        v, expanded = stack.pop()
        if expanded:
            topo.append(v)
            continue
        at = address(v)
        if at in seen:
            continue
        seen.add(at)
        if limit is not None and len(seen) > limit:
            raise SubmissionError(f"the result's graph has more than {limit} nodes")
        stack.append((v, True))
        children = engine.children(v)  # a fresh list
        if key is not None:
            children.sort(key=key, reverse=True)
        for child in children:
            if address(child) not in seen:
                stack.append((child, False))
    return topo


def observe(nodes, read):
    """Every node's number as ``read`` gives it (its value, its gradient), as the report shows it; ``None``
    for plain numbers."""
    return [None if isinstance(v, (int, float)) else read(v) for v in nodes]


def operand_positions(engine, node, nodes):
    """Which of ``nodes`` (their positions) the student's ``node`` holds as its operands, by identity."""
    operands = engine.children(node)
    return [j for j, w in enumerate(nodes) if any(c is w for c in operands)]


def probe(engine, node, args):
    """The student's op on fresh leaves holding ``args``: one forward value for finite differences."""
    _, call, _, exponent, method, value_position = node
    operands = [engine.leaf(x) if kind == "value" else x for kind, x in args]
    out = student_op(engine, call, method, operands, exponent, value_position)
    return out if isinstance(out, float) else engine.data(out)


def hashed_by_position(V, positions):
    """While ``backward()`` is checked, nodes of a class that compares by identity hash by
    their position in the case, so a set of nodes iterates in the same order on every run
    and an order-dependent bug fails the same way every time. Equality is untouched; a
    class with its own ``__eq__`` or ``__hash__`` keeps them as written, since that is
    part of what is graded. Returns what puts the class back as it was."""
    if V.__hash__ is not object.__hash__ or V.__eq__ is not object.__eq__:
        return lambda: None
    own = V.__dict__.get("__hash__")
    V.__hash__ = lambda self: positions.get(address(self), address(self))

    def restore():
        if own is None:
            del V.__hash__
        else:
            V.__hash__ = own
    return restore
