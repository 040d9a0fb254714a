"""Which statement a diagnosis points at: the one most likely at fault, found by evidence.

A diagnosis names a misconception; the student still has to find where in
their code it lives. Pointing at the ``def`` leaves that search to them. Here
the graded method's syntax tree (read, never run) is matched with what the
verdicts show: which operand's gradient came out wrong picks the ``.grad``
update for that operand; an ``=`` where ``+=`` belongs is that assignment; a
wrong forward value is the statement that computes the result's data; a
missing statement (no seed, no ``zero_grad``, no ``backward()`` call, no
update) is blamed on the statement now standing where it belongs. An error
raised by the student's code points at the line its traceback names.

Everything here is parent-side: it reads ``grader.submission.source`` and the
verdicts, and returns a ``Location`` (file, line and, for notebooks, cell).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

from grader.child.inside.interface import CHILDREN_NAMES
from grader.exercise import ops
from grader.exercise.expr import operands
from grader.judging.judge import Verdict, close
from grader.submission.source import Location, Submission

Function = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(frozen=True)
class Written:
    """A graded function as written: its syntax tree and where it is."""

    node: Function
    where: Location

    def at(self, node: ast.AST | None) -> Location:
        """The location of ``node`` (the function's own ``def`` when there is none)."""
        line = getattr(node, "lineno", None) or self.where.line
        return Location(self.where.file, line, self.where.cell)


def written(submission: Submission, method: str) -> Written | None:
    """The function ``method`` (a ``Value`` method, or the training function) as the student wrote it."""
    where = submission.location(method)
    if where is None or where.line is None:
        return None
    for source in submission.files:
        if source.display != where.file:
            continue
        for unit in source.units:
            if unit.tree is None or unit.cell != where.cell:
                continue
            for node in ast.walk(unit.tree):
                if isinstance(node, Function) and node.name == method and node.lineno == where.line:
                    return Written(node, where)
    return None


def error_location(submission: Submission, error: dict | None) -> Location | None:
    """The line a child's error report names, in the submission's own files (with its cell)."""
    if not error or not isinstance(error.get("line"), int):
        return None
    for source in submission.files:
        for unit in source.units:
            if unit.filename == error.get("file"):
                return Location(source.display, error["line"], unit.cell)
    return None


# ---------------------------------------------------------------- reading a function


def statements(node: ast.AST) -> Iterator[ast.stmt]:
    """Every statement inside ``node``, nested functions included, in source order."""
    found = [n for n in ast.walk(node) if isinstance(n, ast.stmt) and n is not node]
    return iter(sorted(found, key=lambda n: (n.lineno, n.col_offset)))


def top_level(function: Function, inner: ast.AST) -> ast.stmt | None:
    """The statement of ``function``'s own body that contains ``inner``."""
    for stmt in function.body:
        if any(n is inner for n in ast.walk(stmt)):
            return stmt
    return None


def attribute_target(stmt: ast.stmt, attr: str) -> ast.Attribute | None:
    """The ``x.attr`` that ``stmt`` assigns to (``=`` or an augmented assignment), if any."""
    targets = stmt.targets if isinstance(stmt, ast.Assign) else (
        [stmt.target] if isinstance(stmt, (ast.AugAssign, ast.AnnAssign)) else [])
    for target in targets:
        for node in ast.walk(target):
            if isinstance(node, ast.Attribute) and node.attr == attr:
                return node
    return None


def owner(attribute: ast.Attribute) -> str | None:
    """The variable an attribute belongs to: ``self`` in ``self.grad``."""
    return attribute.value.id if isinstance(attribute.value, ast.Name) else None


def calls(node: ast.AST, name: str) -> list[ast.Call]:
    """Calls of a method or function called ``name`` inside ``node``, in source order."""
    found = [n for n in ast.walk(node) if isinstance(n, ast.Call) and (
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
    for n in ast.walk(node):
        if isinstance(n, ast.Attribute) and n.attr in CHILDREN_NAMES:
            return True
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in function_names:
            return True
    return False


def parameter(function: Function, position: int) -> str | None:
    """The name of a positional parameter (``self``, ``other``), if the function has it."""
    args = function.args.posonlyargs + function.args.args
    return args[position].arg if position < len(args) else None


def attaches_backward(function: Function) -> bool:
    """Whether the method sets ``_backward`` on the node it returns (``out._backward = ...``)."""
    returned = next((s for s in reversed(function.body) if isinstance(s, ast.Return)), None)
    if returned is None or not isinstance(returned.value, ast.Name):
        return False
    return any(owner(target) == returned.value.id for stmt in statements(function)
               if (target := attribute_target(stmt, "_backward")) is not None)


def result_statement(function: Function) -> ast.stmt | None:
    """The statement that makes the node the method returns: ``out = Value(...)`` (or the ``return``)."""
    returned = next((s for s in reversed(function.body) if isinstance(s, ast.Return)), None)
    if returned is None or returned.value is None:
        return None
    if isinstance(returned.value, ast.Name):
        name = returned.value.id
        made = [s for s in function.body if isinstance(s, ast.Assign) and s.lineno < returned.lineno
                and any(isinstance(t, ast.Name) and t.id == name for t in s.targets)]
        if made:
            return made[-1]
    return returned


def data_statement(function: Function) -> ast.stmt | None:
    """The statement that computes the result's data: the constructor's first argument, or the
    assignment of the local variable passed there (``t = ...`` before ``Value(t, ...)``)."""
    made = result_statement(function)
    if made is None:
        return None
    value = made.value
    if isinstance(value, ast.Call) and value.args and isinstance(value.args[0], ast.Name):
        name = value.args[0].id
        assigned = [s for s in function.body if isinstance(s, ast.Assign) and s.lineno < made.lineno
                    and any(isinstance(t, ast.Name) and t.id == name for t in s.targets)]
        if assigned:
            return assigned[-1]
    return made


def grad_updates(function: Function) -> list[tuple[ast.stmt, str | None]]:
    """Every statement that assigns to some ``x.grad``, with ``x``'s name, in source order."""
    found = []
    for stmt in statements(function):
        target = attribute_target(stmt, "grad")
        if target is not None and not isinstance(stmt, ast.AnnAssign):
            found.append((stmt, owner(target)))
    return found


# ---------------------------------------------------------------- evidence from verdicts


def wrong_operands(verdict: Verdict | None, target: str) -> list[int]:
    """Which operands of the op (0: self, 1: other) came out with a wrong gradient in the
    smallest failing case, read from every node's expected and actual gradient."""
    if verdict is None or verdict.graph is None:
        return []
    expr, expected, actual = verdict.graph
    spec = ops.OPS.get(target)
    node = next((n for n in expr if n[0] == target), None)
    if spec is None or node is None:
        return []
    indices = list(operands(node))
    values = [j for j in indices if expr[j][0] != "const"]
    wrong = []
    for j in values:
        got = actual[j][1]
        if not close(got, expected[j][1], 1e-6):
            # Python calls the method on the Value: with a number first, that Value is self.
            wrong.append(0 if spec.number_first or expr[indices[0]][0] == "const" else indices.index(j))
    return sorted(set(wrong))


def constant_first(verdict: Verdict | None, target: str) -> bool:
    """Whether the smallest failing case has the plain number before the Value (``2 * a``),
    so Python reached the reflected method, not the op's own."""
    if verdict is None:
        return False
    expr = verdict.case.expr
    return any(node[0] == target and expr[operands(node)[0]][0] == "const" for node in expr)


def every_node_repeated(verdict: Verdict | None) -> bool:
    """Whether, in a pass that ran nodes more than once, every node ran equally often: the
    loop over the order repeats it, rather than the order holding some node twice."""
    if verdict is None or not verdict.traces:
        return False
    for trace in verdict.traces:
        counts = {i: trace.count(i) for i in trace}
        if len(set(counts.values())) == 1 and next(iter(counts.values())) > 1:
            return True
    return False


# ---------------------------------------------------------------- the statement at fault


def op_statement(code: str, function: Function, verdict: Verdict | None, target: str,
                 reflected: Written | None) -> tuple[ast.AST | None, Written | None]:
    """For an op's diagnosis: the statement at fault, and the function it is in when that is
    not the op's own method (the reflected one)."""
    if code == "wrong-forward":
        return data_statement(function), None
    if code == "missing-child":
        return result_statement(function), None
    if code == "detached-backward":
        returned = next((s for s in reversed(function.body) if isinstance(s, ast.Return)), None)
        if returned is not None and not isinstance(returned.value, ast.Name):
            return returned, None  # it returns another node than the one it attached to
        attached = [s for s in function.body if attribute_target(s, "_backward") is not None
                    or (isinstance(s, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "_backward"
                                                           for t in s.targets))]
        return (attached[0] if attached else result_statement(function)), None
    if code == "constant-operand":
        if constant_first(verdict, target) and reflected is not None:
            return (reflected.node.body[-1] if reflected.node.body else None), reflected
        other = parameter(function, 1)
        lifted = [s for s in function.body if isinstance(s, ast.Assign)
                  and any(isinstance(t, ast.Name) and t.id == other for t in s.targets)]
        return (lifted[0] if lifted else function.body[0]), None
    if code == "timeout":
        return next((s for s in statements(function) if isinstance(s, ast.While)), None), None
    if code in ("wrong-local-grad", "grad-overwrite", "relu-at-zero"):
        return grad_statement(code, function, verdict, target), None
    return None, None


def grad_statement(code: str, function: Function, verdict: Verdict | None, target: str) -> ast.stmt | None:
    """The ``.grad`` update inside ``_backward`` for the operand whose gradient is wrong."""
    updates = grad_updates(function)
    if not updates:
        return None
    names = [parameter(function, 0), parameter(function, 1)]
    if code == "grad-overwrite":
        assigned = [(s, o) for s, o in updates if isinstance(s, ast.Assign)]
        updates = assigned or updates
    by_operand = {i: [s for s, o in updates if o == name] for i, name in enumerate(names)}
    wrong = wrong_operands(verdict, target)
    # The same operand updated twice while another is never updated: the second is a copy slip.
    missing = [i for i in wrong if not by_operand.get(i)]
    doubled = [stmts for stmts in by_operand.values() if len(stmts) > 1]
    if missing and doubled:
        return doubled[0][-1]
    for i in wrong:
        if by_operand.get(i):
            return by_operand[i][0]
    return updates[0][0]


def backward_statement(code: str, function: Function, verdict: Verdict | None) -> ast.AST | None:
    """For a diagnosis of ``backward()``: the statement at fault."""
    runs = calls(function, "_backward")
    last_run = loop_or_call(function, runs[-1]) if runs else None
    me = parameter(function, 0)
    if code == "missing-seed":
        seeds = [s for s, o in grad_updates(function) if o == me and top_level(function, s) is s]
        # No seed at all: it belongs before the first statement that runs the nodes.
        return seeds[0] if seeds else (top_level(function, runs[0]) if runs else None)
    if code == "wrong-order":
        early = appended_before_children(function)
        if early is not None:
            return early
        return loop_or_call(function, runs[0]) if runs else None
    if code == "incomplete-traversal":
        return last_run
    if code == "repeated-visit":
        if every_node_repeated(verdict):
            return last_run
        return first_of_builder(function) or last_run
    if code == "no-accumulation":
        resets = [s for s, o in grad_updates(function) if isinstance(s, ast.Assign) and o != me]
        return resets[0] if resets else last_run
    if code == "timeout":
        return next((s for s in statements(function) if isinstance(s, ast.While)), None)
    return None


def loop_or_call(function: Function, call: ast.Call) -> ast.AST:
    """A ``_backward()`` call's ``for`` loop (its header states the order), or the call itself."""
    for node in reversed(enclosing(function, call)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.While)):
            break
        if isinstance(node, ast.For):
            return node
    return statement_of(function, call) or call


def appended_before_children(function: Function) -> ast.stmt | None:
    """A node put in the order before its operands are visited (``topo.append(v)`` above the
    loop over ``v._prev`` or the ``stack.extend(v._prev)``)."""
    names = {n.name for n in ast.walk(function) if isinstance(n, Function)}
    for block in (n for n in ast.walk(function) if hasattr(n, "body")):
        body = [s for s in getattr(block, "body", []) if isinstance(s, ast.stmt)]
        for k, stmt in enumerate(body):
            if (isinstance(stmt, ast.Expr) and calls(stmt, "append")
                    and not walks_children(stmt, names)
                    and any(walks_children(later, names) for later in body[k + 1:])):
                return stmt
    return None


def first_of_builder(function: Function) -> ast.stmt | None:
    """The first statement of the code that walks operands (a nested function or a loop): where a
    check for nodes already visited belongs."""
    names = {n.name for n in ast.walk(function) if isinstance(n, Function)}
    for node in ast.walk(function):
        if isinstance(node, Function) and node is not function and walks_children(node, {node.name}):
            return node.body[0]
    for node in statements(function):
        if isinstance(node, ast.While) and walks_children(node, names):
            return node.body[0]
    return None


@dataclass(frozen=True)
class TrainShape:
    """What ``train_step`` visibly does: the facts its diagnosis needs when no parameter moved."""

    calls_backward: bool
    updates: bool  # assigns to some attribute inside a loop over the parameters
    updates_data: bool  # ... and that attribute is ``.data``


def update_statements(function: Function) -> list[ast.stmt]:
    """Assignments to ``p.data`` (or, by mistake, ``p.grad``) inside a loop over the parameters,
    other than a reset to zero."""
    found = []
    for loop in (n for n in ast.walk(function) if isinstance(n, ast.For)):
        if not calls(loop.iter, "parameters") and not (
                isinstance(loop.iter, ast.Attribute) and loop.iter.attr == "parameters"):
            continue
        for stmt in statements(loop):
            target = attribute_target(stmt, "data") or attribute_target(stmt, "grad")
            if target is None:
                continue
            value = getattr(stmt, "value", None)
            if isinstance(stmt, ast.Assign) and isinstance(value, ast.Constant) and value.value == 0:
                continue
            found.append(stmt)
    return sorted(found, key=lambda s: s.lineno)


def train_shape(function: Function | None) -> TrainShape | None:
    if function is None:
        return None
    updates = update_statements(function)
    return TrainShape(bool(calls(function, "backward")), bool(updates),
                      any(attribute_target(s, "data") is not None for s in updates))


def gradient_resets(function: Function) -> list[ast.AST]:
    """Where gradients are reset: each ``zero_grad()`` call's statement, and each ``p.grad = 0``
    in a loop, in source order."""
    found: list[ast.AST] = [statement_of(function, call) for call in calls(function, "zero_grad")]
    for loop in (n for n in ast.walk(function) if isinstance(n, ast.For)):
        resets = [s for s in loop.body if isinstance(s, ast.Assign) and attribute_target(s, "grad") is not None
                  and isinstance(s.value, ast.Constant) and s.value.value == 0]
        # A loop that only resets is the reset; in a loop that also updates, the reset statement is.
        found.extend([loop] if resets and len(resets) == len(loop.body) else resets)
    return sorted((n for n in found if n is not None), key=lambda n: n.lineno)


def train_statement(code: str, function: Function, verdict: Verdict | None) -> ast.AST | None:
    """For a diagnosis of ``train_step``: the statement at fault, or where the missing one belongs."""
    backward = calls(function, "backward")
    resets = gradient_resets(function)
    updates = update_statements(function)
    returned = next((s for s in reversed(function.body) if isinstance(s, ast.Return)), None)
    if code == "missing-zero-grad":
        return resets[0] if resets else (top_level(function, backward[0]) if backward else None)
    if code == "zero-grad-misplaced":
        return resets[-1] if resets else None
    if code == "missing-backward":
        return top_level(function, updates[0]) if updates else returned
    if code == "missing-update":
        if backward:
            after = top_level(function, backward[-1])
            rest = function.body[function.body.index(after) + 1:] if after in function.body else []
            return rest[0] if rest else after
        return returned
    if code == "wrong-update":
        return updates[0] if updates else None
    if code == "wrong-loss":
        if verdict is not None and verdict.train and not verdict.train["right_steps"][0] and backward:
            # The gradients are wrong too: the loss itself is computed wrongly.
            return loss_statement(function, backward[0]) or returned
        return returned
    return None


def loss_statement(function: Function, backward: ast.Call) -> ast.stmt | None:
    """The assignment of the variable whose ``backward()`` is called."""
    if not isinstance(backward.func, ast.Attribute) or not isinstance(backward.func.value, ast.Name):
        return None
    name = backward.func.value.id
    assigned = [s for s in statements(function) if isinstance(s, ast.Assign) and s.lineno < backward.lineno
                and any(isinstance(t, ast.Name) and t.id == name for t in s.targets)]
    return assigned[-1] if assigned else None


def blame(code: str, kind: str, target: str, method: str, verdict: Verdict | None,
          submission: Submission, reflected: str | None = None) -> Location | None:
    """Where the diagnosis ``code`` of ``target`` points: the statement most likely at fault.

    ``kind`` is the target's kind (op, backward, train), ``method`` the graded function's name,
    ``reflected`` the op's reflected method (``__radd__``) if it has one; ``verdict`` the evidence.
    """
    if verdict is not None and verdict.error is not None:
        raised = error_location(submission, verdict.error)
        if raised is not None:
            return raised
    function = written(submission, method)
    if function is None:
        return submission.location(method)
    node: ast.AST | None = None
    where = function
    try:
        if kind == "op":
            mirror = written(submission, reflected) if reflected else None
            node, other = op_statement(code, function.node, verdict, target, mirror)
            where = other or function
        elif kind == "backward":
            node = backward_statement(code, function.node, verdict)
        elif kind == "train":
            node = train_statement(code, function.node, verdict)
    except (AttributeError, IndexError, KeyError, TypeError, ValueError):
        # Student code comes in every shape, and the verdicts from a child that is not
        # trusted: when they do not fit the reading above, the ``def`` is still true.
        node, where = None, function
    return where.at(node)
