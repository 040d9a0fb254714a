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
import re
from dataclasses import dataclass

from grader.diagnosis.backward import backward_statement
from grader.diagnosis.engines import (
    ORDER_CODES,
    returned_share,
    sort_helper,
    sort_statement,
)
from grader.diagnosis.gradients import gradient_statement
from grader.diagnosis.rules import wrong_operands
from grader.diagnosis.syntax import (
    Function,
    attribute_target,
    grad_updates,
    owner,
    parameter,
    statements,
    top_level,
)
from grader.diagnosis.tensors import tensor_statement
from grader.diagnosis.training import train_statement
from grader.exercise.expr import operands
from grader.exercise.words import MICROGRAD, Words
from grader.judging.judge import Verdict
from grader.submission.source import Location, Submission
from grader.submission.tree import walk


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
            for node in walk(unit.tree):
                if isinstance(node, Function) and node.name == method.rpartition(".")[2] and \
                        node.lineno == where.line:
                    return Written(node, where)
    return None


# Codes whose error is raised after the statement at fault, so the line it names is not theirs: a plain number
# that is not lifted to a node fails where it is first used (the fault is the lifting); a loss that is a plain
# number fails at its backward() (the fault is where it is computed).
RAISED_AFTER_THE_FAULT = frozenset({"constant-operand", "wrong-loss"})


def error_location(submission: Submission, error: dict | None) -> Location | None:
    """The line a child's error report names, in the submission's own files (with its cell): where a
    constructor raised on what it was given (``Value(x, (self), 'exp')``), the student's call of it."""
    if not error:
        return None
    line, file = error.get("line"), error.get("file")
    if isinstance(error.get("caller_line"), int):
        line, file = error["caller_line"], error.get("caller_file")
    if not isinstance(line, int):
        return None
    for source in submission.files:
        for unit in source.units:
            if unit.filename == file:
                return Location(source.display, line, unit.cell)
    return None


def attaches_backward(function: Function, words: Words = MICROGRAD) -> bool:
    """Whether the method sets ``_backward`` on the node it returns (``out._backward = ...``)
    before it returns it (an assignment after the ``return`` never runs)."""
    returned = next((s for s in reversed(function.body) if isinstance(s, ast.Return)), None)
    if returned is None or not isinstance(returned.value, ast.Name):
        return False
    return any(owner(target) == returned.value.id and stmt.lineno < returned.lineno
               for stmt in statements(function) if (target := attribute_target(stmt, words.step)) is not None)


def result_statement(function: Function) -> ast.stmt | None:
    """The statement that makes the node the method returns: ``out = Value(...)``; the ``return``
    itself when it returns something the method did not make (an operand, a plain number)."""
    returned = next((s for s in reversed(function.body) if isinstance(s, ast.Return)), None)
    if returned is None or returned.value is None:
        return None
    parameters = {a.arg for a in function.args.posonlyargs + function.args.args}
    if isinstance(returned.value, ast.Name) and returned.value.id not in parameters:
        name = returned.value.id
        made = [s for s in function.body if isinstance(s, ast.Assign) and s.lineno < returned.lineno
                and isinstance(s.value, ast.Call) and any(isinstance(t, ast.Name) and t.id == name
                                                          for t in s.targets)]
        if made:
            return made[-1]
    return returned


def returns_nothing(function: Function) -> bool:
    """Whether the method's own code (not its nested ``_backward``) has no ``return`` of a value."""
    stack: list[ast.AST] = list(function.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Return) and node.value is not None:
            return False
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(node))
    return True


def after_closure(function: Function) -> ast.stmt | None:
    """The statement after the method's nested ``def`` (its ``_backward``): where the closure is
    attached to the result, when it is not."""
    body = function.body
    for k, stmt in enumerate(body):
        if isinstance(stmt, Function):
            return body[k + 1] if k + 1 < len(body) else stmt
    return None


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


def overwrites_gradient(function: Function, words: Words = MICROGRAD) -> bool | None:
    """Whether the op assigns an operand's gradient with ``=`` (not ``x.grad = x.grad + ...``);
    ``None`` when it updates no operand's gradient visibly (a helper may do it)."""
    names = {parameter(function, 0), parameter(function, 1)} - {None}
    updates = [stmt for stmt, name in grad_updates(function, words) if name in names]
    if not updates:
        return None
    return any(isinstance(stmt, ast.Assign) and not any(
        isinstance(n, ast.Attribute) and n.attr == words.grad and owner(n) == name and isinstance(n.ctx, ast.Load)
        for n in walk(stmt.value)) for stmt in updates
        for name in [owner(attribute_target(stmt, words.grad))])


def unbound(function: Function, error: dict) -> ast.stmt | None:
    """For a ``NameError`` on a name the function uses but never sets, the statement where setting
    it belongs: the one of the function's own body holding its first use (the traceback names a
    later use, where it was first needed at run time)."""
    found = re.search(r"name '(\w+)' is not defined|free variable '(\w+)'", str(error.get("message", "")))
    if error.get("type") not in ("NameError", "UnboundLocalError") or found is None:
        return None
    name = found.group(1) or found.group(2)
    bound = {a.arg for n in walk(function) if isinstance(n, ast.arguments)
             for a in n.posonlyargs + n.args + n.kwonlyargs}
    bound |= {n.id for n in walk(function) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    bound |= {n.name for n in walk(function) if isinstance(n, Function)}
    if name in bound:
        return None
    uses = sorted((n for n in walk(function) if isinstance(n, ast.Name) and n.id == name),
                  key=lambda n: (n.lineno, n.col_offset))
    return top_level(function, uses[0]) if uses else None


# ---------------------------------------------------------------- evidence from verdicts


def constant_first(verdict: Verdict | None, target: str) -> bool:
    """Whether the smallest failing case has the plain number before the Value (``2 * a``),
    so Python reached the reflected method, not the op's own."""
    if verdict is None:
        return False
    expr = verdict.case.expr
    return any(node[0] == target and expr[operands(node)[0]][0] == "const" for node in expr)


# ---------------------------------------------------------------- the statement at fault


def op_statement(code: str, function: Function, verdict: Verdict | None, target: str,
                 reflected: Written | None, words: Words = MICROGRAD) -> tuple[ast.AST | None, Written | None]:
    """For an op's diagnosis: the statement at fault, and the function it is in when that is
    not the op's own method (the reflected one)."""
    if code == "wrong-forward":
        return data_statement(function), None
    if words.local is not None and code in ("missing-child", "wrong-local-grad"):
        # An engine whose nodes keep (operand, local derivative) pairs: the statement that states them.
        stated = [s for s in statements(function) if attribute_target(s, words.local) is not None]
        if stated:
            return stated[0], None
    if code in ("missing-child", "number-child"):
        return result_statement(function), None
    if code == "crash" and verdict is not None and verdict.error is not None:
        # Raised outside the student's code (the grader found no node, or a malformed one, where the
        # op's result should be): the missing ``return``'s place, or the statement making the result.
        if returns_nothing(function):
            return function.body[-1], None
        return result_statement(function), None
    if code == "detached-backward":
        returned = next((s for s in reversed(function.body) if isinstance(s, ast.Return)), None)
        if returned is not None and not isinstance(returned.value, ast.Name):
            return returned, None  # it returns another node than the one it attached to
        attached = [s for s in function.body if attribute_target(s, words.step) is not None
                    or (isinstance(s, ast.Assign) and any(isinstance(t, ast.Name) and t.id == words.step
                                                           for t in s.targets))]
        # Never attached: where the attachment belongs, after the closure is defined.
        return (attached[0] if attached else after_closure(function) or result_statement(function)), None
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
        return grad_statement(code, function, verdict, target, words), None
    return None, None


def grad_statement(code: str, function: Function, verdict: Verdict | None, target: str,
                   words: Words = MICROGRAD) -> ast.stmt | None:
    """The ``.grad`` update inside ``_backward`` for the operand whose gradient is wrong."""
    updates = grad_updates(function, words)
    if not updates:
        returned = returned_share(function, wrong_operands(verdict, target))
        if returned is not None:
            return returned  # a step that returns the operands' gradients (a Function class's backward)
        # No gradient update at all: they belong at the start of the closure.
        nested = next((s for s in function.body if isinstance(s, Function)), None)
        return nested.body[0] if nested is not None else None
    names = [parameter(function, 0), parameter(function, 1)]
    if code == "grad-overwrite":
        assigned = [(s, o) for s, o in updates if isinstance(s, ast.Assign)]
        updates = assigned or updates
    returned = next((s for s in reversed(function.body) if isinstance(s, ast.Return)), None)
    if returned is not None and isinstance(returned.value, ast.Name):
        # An update passing on another node's gradient than the result's (``self.grad`` where
        # ``out.grad`` belongs) is wrong whatever the evidence says of the operands.
        result = returned.value.id
        misread = [s for s, o in updates if any(  # (``x.grad = x.grad + ...`` reads its own: that is adding)
            isinstance(n, ast.Attribute) and n.attr == words.grad and owner(n) not in (None, result, o)
            for n in walk(s.value))]
        if misread:
            return misread[0]
    by_operand = {i: [s for s, o in updates if o == name] for i, name in enumerate(names)}
    wrong = wrong_operands(verdict, target)
    missing = [i for i in wrong if not by_operand.get(i)]
    if missing:
        # An operand that no update reaches: the update written for it names another node. That
        # is an update of a node that is no operand (``out.grad += ...``), or a second update of
        # the other operand, the one standing in the missing operand's place (self's first);
        # with neither, the missing update belongs where the operand's own would stand.
        stray = [s for s, o in updates if o not in names]
        doubled = [stmts for stmts in by_operand.values() if len(stmts) > 1]
        if stray:
            return stray[0]
        if doubled:
            return doubled[0][min(missing[0], len(doubled[0]) - 1)]
        return updates[min(missing[0], len(updates) - 1)][0]
    for i in wrong:
        if by_operand.get(i):
            return by_operand[i][0]
    return updates[0][0]


def unreached_operand(function: Function, verdict: Verdict | None, target: str) -> str | None:
    """The operand (as the op names it: ``self``, ``other``) whose gradient came out wrong and that no
    ``.grad`` update of the op names: the one that gets nothing from the result. ``None`` unless every
    update names an operand (one through a loop over the children, or of another node, says nothing)."""
    names = [parameter(function, 0), parameter(function, 1)]
    updated = {name for _, name in grad_updates(function)}
    if not updated or not updated <= set(names):
        return None
    return next((names[i] for i in wrong_operands(verdict, target)
                 if i < len(names) and names[i] is not None and names[i] not in updated), None)


def blame(code: str, kind: str, target: str, method: str, verdict: Verdict | None,
          submission: Submission, reflected: str | None = None, words: Words = MICROGRAD,
          given: frozenset[str] = frozenset()) -> Location | None:
    """Where the diagnosis ``code`` of ``target`` points: the statement most likely at fault.

    ``kind`` is the target's kind (op, backward, train), ``method`` the graded function's name,
    ``reflected`` the op's reflected method (``__radd__``) if it has one; ``verdict`` the evidence.
    """
    function = written(submission, method)
    if verdict is not None and verdict.error is not None and code not in RAISED_AFTER_THE_FAULT:
        never_set = unbound(function.node, verdict.error) if function is not None else None
        if never_set is not None:
            return function.at(never_set)
        raised = error_location(submission, verdict.error)
        if raised is not None:
            return raised
    if function is None:
        return submission.location(method)
    node: ast.AST | None = None
    where = function
    try:
        if kind == "op":
            mirror = written(submission, reflected) if reflected else None
            node, other = op_statement(code, function.node, verdict, target, mirror, words)
            where = other or function
        elif kind == "backward":
            helper = sort_helper(submission, function.node, given) if code in ORDER_CODES else None
            if helper is not None and (found := sort_statement(code, helper[0])) is not None:
                source, unit = helper[1]
                return Location(source.display, found.lineno, unit.cell)
            node = backward_statement(code, function.node, verdict, words)
        elif kind == "train":
            node = train_statement(code, function.node, verdict)
        elif kind == "gradient":
            node = gradient_statement(code, function.node, verdict)
        elif kind == "tensor":
            node = tensor_statement(code, function.node, verdict)
    except (AttributeError, IndexError, KeyError, TypeError, ValueError):
        # Student code comes in every shape, and the verdicts from a child that is not
        # trusted: when they do not fit the reading above, the ``def`` is still true.
        node, where = None, function
    return where.at(node)
