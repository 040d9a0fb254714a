"""Reading a learner's code written for an engine of another shape than micrograd's, for the statement at fault.

micrograd's learner writes an op as one method whose ``_backward`` closure adds to its operands' ``.grad``;
``grader.diagnosis.blame`` reads that. A course's engine may have the op written as a Function class whose
``forward`` computes the value and whose ``backward`` returns the operands' gradients (``Mul``), and a
backward pass that keeps the gradients in a table of its own (``grads[id(p)] += g``). This module reads
those: which of the class's functions a diagnosis is about, the returned share at fault, the entry of
the table replaced where it should have been added to.
"""

from __future__ import annotations

import ast

from grader.diagnosis import traversal
from grader.diagnosis.syntax import Function, enclosing, parameter, statements
from grader.submission.source import Submission
from grader.submission.tree import walk

# What a Function class of the engine's does for an op: its forward pass computes the value, its backward pass
# the local derivatives (``Mul.forward``, ``Mul.backward``).
FORWARD_CODES = frozenset({"wrong-forward", "missing-child", "constant-operand"})


def part_method(submission: Submission, method: str, code: str) -> str:
    """``method`` as the function a diagnosis of ``code`` is about: for a Function class the learner writes an op
    in (``Mul``), its ``forward`` for a wrong value and its ``backward`` for a wrong gradient; else ``method``."""
    if "." in method:
        return method
    for source in submission.files:
        for unit in source.units:
            for node in unit.tree.body if unit.tree else ():
                if isinstance(node, ast.ClassDef) and node.name == method:
                    own = {item.name for item in node.body if isinstance(item, Function)}
                    wanted = "forward" if code in FORWARD_CODES else "backward"
                    return f"{method}.{wanted}" if wanted in own else method
    return method


def returned_share(function: Function, wrong: list[int]) -> ast.stmt | None:
    """In a function that returns its operands' gradients (``return b * d, a * d``), or the node it makes with them
    (``return TAPE.record(v, inputs, (d_a, d_b))``), and keeps no closure: the statement computing the first wrong
    operand's (the assignment of the name in its place), else the ``return``; ``None`` for any other function."""
    if any(isinstance(s, Function) for s in function.body):
        return None
    returned = next((s for s in reversed(function.body) if isinstance(s, ast.Return) and s.value is not None), None)
    if returned is None:
        return None
    value = returned.value
    if isinstance(value, ast.Call):  # the node made with its local derivatives: ``TAPE.record(v, inputs, partials)``
        steps = [a.body for a in (*value.args, *(k.value for k in value.keywords)) if isinstance(a, ast.Lambda)]
        given = [a for a in value.args if isinstance(a, (ast.Tuple, ast.List))]
        value = steps[-1] if steps else given[-1] if given else value  # a step made there: ``lambda g: (g * b, ...)``
    shares = value.elts if isinstance(value, (ast.Tuple, ast.List)) else [value]
    if wrong and wrong[0] < len(shares) and isinstance(shares[wrong[0]], ast.Name):
        name = shares[wrong[0]].id
        assigned = [s for s in statements(function) if isinstance(s, (ast.Assign, ast.AugAssign))
                    and s.lineno < returned.lineno and any(isinstance(t, ast.Name) and t.id == name
                                                           for t in (s.targets if isinstance(s, ast.Assign)
                                                                     else [s.target]))]
        if assigned:
            return assigned[-1]
    return returned


def replaced_entry(function: Function) -> ast.stmt | None:
    """A pass that keeps gradients in a table of its own (``grads[id(p)] = g``): the assignment of an entry that
    does not read the entry it replaces, inside a loop (where adding to it belongs)."""
    for stmt in statements(function):
        if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1 or not isinstance(stmt.targets[0], ast.Subscript):
            continue
        table, key = ast.dump(stmt.targets[0].value), ast.dump(stmt.targets[0].slice)
        reads = any((isinstance(n, ast.Subscript) and ast.dump(n.value) == table and ast.dump(n.slice) == key) or (
            isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and ast.dump(n.func.value) == table
            and n.args and ast.dump(n.args[0]) == key) for n in walk(stmt.value))  # the entry itself, or .get(key)
        if not reads and any(isinstance(n, (ast.For, ast.While)) for n in enclosing(function, stmt)):
            return stmt
    return None


ORDER_CODES = frozenset({"wrong-order", "incomplete-traversal", "repeated-visit"})


def sort_helper(submission: Submission, function: Function, given: frozenset[str] = frozenset()
                ) -> tuple[Function, object] | None:
    """The sort a backward pass calls as a function of its own (``topological_sort(variable)``, or the ``_dfs`` that
    one calls in turn: the first top-level function of the submission, reached through calls, that reads nodes'
    operands), with the source and unit it is in; ``None`` when there is none, or when it is the course's own
    (``given``): then what the pass does with its order is the learner's."""
    tops = {node.name: (node, (source, unit)) for source in submission.files for unit in source.units
            for node in (unit.tree.body if unit.tree else ()) if isinstance(node, Function)}
    stack, seen = [function], {function.name}
    while stack:
        current = stack.pop(0)
        for name in dict.fromkeys(n.func.id for n in walk(current) if isinstance(n, ast.Call)
                                  and isinstance(n.func, ast.Name)):
            if name in tops and name not in seen:
                seen.add(name)
                node, where = tops[name]
                if any(traversal.children_reads(n) for n in walk(node) if isinstance(n, (Function, ast.While))):
                    return None if name in given else (node, where)
                stack.append(node)
    return None


def sort_statement(code: str, helper: Function) -> ast.stmt | None:
    """Where a sort of its own breaks a backward pass: the statement of its builder at fault; for nodes out of
    order with a builder that reads right, the ``return`` that hands the order over (in which direction the
    nodes are to run is decided there)."""
    recursive = any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == helper.name
                    for n in walk(helper))
    found = traversal.builder_fault(helper, parameter(helper, 0), recursive)
    if found is None and code == "wrong-order":
        found = next((s for s in reversed(helper.body) if isinstance(s, ast.Return)), None)
    return found


def gradient_table(function: Function) -> ast.stmt | None:
    """Where a pass that keeps its gradients in a table of its own makes it empty (``result = {}``, ``dict()``),
    to be filled by entry (``result[inp] = ...``): the place of the output's seed (``{out: 1.0}``). A table made
    with a default (``defaultdict(float)``) takes its seed later, before the nodes run."""
    made = {}
    for stmt in function.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) and (
                (isinstance(stmt.value, ast.Dict) and not stmt.value.keys) or (
                isinstance(stmt.value, ast.Call) and isinstance(stmt.value.func, ast.Name)
                and stmt.value.func.id == "dict" and not stmt.value.args and not stmt.value.keywords)):
            made[stmt.targets[0].id] = stmt
    filled = [node.value.id for node in walk(function) if isinstance(node, ast.Subscript)
              and isinstance(node.ctx, ast.Store) and isinstance(node.value, ast.Name) and node.value.id in made]
    returned = {node.value.id for node in walk(function) if isinstance(node, ast.Return)
                and isinstance(node.value, ast.Name)}
    chosen = [name for name in filled if name in returned] or filled  # the table the pass hands back, if it does
    return made[chosen[0]] if chosen else None
