"""Naming what is wrong with a module the learner wrote, and where: from how its cases' runs came out.

One mistake is one diagnosis. A stub is ``not-implemented`` whatever else fails;
``parameters()`` that holds lists, or the wrong Values, explains every case the
grader could not then set up (its weights, ``zero_grad`` over lists); a wrong
output that a known mistake gives exactly (a bias left out, another
nonlinearity) is that mistake, and its gradients are wrong through it. A case
right with the grader's ``Value`` (or neurons, layers) in the learner's place
is the op's or the part's fault, charged there: it gives no code here.
"""

from __future__ import annotations

import ast

from grader.diagnosis.blame import error_location
from grader.diagnosis.members import Member, find_class, find_method, first_stub, forward_method
from grader.diagnosis.rules import smallest, unusable_and_errors
from grader.diagnosis.syntax import calls
from grader.exercise.targets import Target
from grader.judging.judge import Verdict
from grader.submission.source import Location, Submission
from grader.submission.tree import walk

# What the faults of a failing case say, most telling first.
FAULT_CODES = (("none", "not-implemented"), ("nested", "nested-parameters"), ("count", "wrong-parameters"),
               ("repeated", "wrong-parameters"), ("foreign", "wrong-parameters"), ("missing-bias", "missing-bias"),
               ("activation", "wrong-activation"), ("output", "wrong-output"), ("shape", "wrong-output"),
               ("zero-gradient", "detached-data"), ("gradient", "wrong-output"), ("not-reset", "grad-not-reset"))
# Codes after which the grader could not set the module up as the course does: what fails then is theirs.
SETUP = ("not-implemented", "nested-parameters", "wrong-parameters")


def code_of(verdict: Verdict) -> str | None:
    return next((code for fault, code in FAULT_CODES if fault in verdict.faults), None)


def module_codes(verdicts: list[Verdict]) -> dict[str, Verdict]:
    """The codes of a module target, each with the smallest case that shows it."""
    unusable, errors = unusable_and_errors(verdicts)
    if unusable:
        return unusable
    failing = [v for v in verdicts if not v.passed(v.check.focus if v.check is not None else "both")]
    found: dict[str, list[Verdict]] = {}
    for verdict in failing:
        code = code_of(verdict) or ("crash" if verdict.error is not None else "wrong-output")
        found.setdefault(code, []).append(verdict)
    setup = [code for code in SETUP if code in found]
    if setup:
        return {setup[0]: smallest(found[setup[0]])}
    named = [code for code in found if code not in ("wrong-output", "crash", "detached-data")]
    if named:
        found = {code: vs for code, vs in found.items() if code in named or code == "crash"}
    elif "wrong-output" in found:
        found.pop("detached-data", None)
    return {code: smallest(vs) for code, vs in found.items()}


def module_location(code: str, target: Target, verdict: Verdict | None, submission: Submission) -> Location | None:
    """Where a module's diagnosis points: the statement of its method most likely at fault."""
    cls = find_class(submission, target.role.key)
    if cls is None:
        return None
    if code == "not-implemented":
        return first_stub(cls) or first_stub(find_method(submission, cls, "parameters")) or cls.at()
    if verdict is not None and verdict.error is not None:
        raised = error_location(submission, verdict.error)
        if raised is not None:
            return raised
    if code in ("nested-parameters", "wrong-parameters"):
        method = find_method(submission, cls, "parameters")
        own = method is not None and any(item is method.node for item in cls.node.body)
        return method.at(last_return(method.node)) if own else cls.at()
    if code == "grad-not-reset":
        method = find_method(submission, cls, "zero_grad")
        return method.at(grad_reset(method.node, target.words.grad)) if method is not None else cls.at()
    method = forward_method(submission, cls)
    if method is None:
        return cls.at()
    if code == "missing-bias":
        return method.at(weighted_sum(method.node))
    if code == "wrong-activation":
        return activation_statement(submission, cls, method)
    if code == "wrong-output" and verdict is not None and "sum" in verdict.faults:
        return method.at(last_return(method.node))
    if code == "detached-data":
        return method.at(next((s for s in body_statements(method.node) if reads_data(s)), None)
                         or last_return(method.node))
    return method.at(result_statement(method.node))


def result_statement(function: ast.AST) -> ast.stmt | None:
    """The statement that makes what the method returns: the last assignment of the name it returns (``out =
    layer(x)`` before ``return out``), else its ``return``."""
    returned = last_return(function)
    if returned is None or not isinstance(returned.value, ast.Name):
        return returned
    assigned = [s for s in body_statements(function) if s.lineno < returned.lineno and any(
        isinstance(n, ast.Name) and n.id == returned.value.id and isinstance(n.ctx, ast.Store) for n in walk(s))]
    return assigned[-1] if assigned else returned


def body_statements(function: ast.AST) -> list[ast.stmt]:
    """The simple statements of a method (not its compound ones' headers), in source order."""
    found = [n for n in walk(function) if isinstance(n, ast.stmt) and n is not function and not hasattr(n, "body")]
    return sorted(found, key=lambda n: (n.lineno, n.col_offset))


def last_return(function: ast.AST) -> ast.stmt | None:
    returns = [s for s in body_statements(function) if isinstance(s, ast.Return)]
    return returns[-1] if returns else None


def weighted_sum(function: ast.AST) -> ast.stmt | None:
    """Where a neuron or layer sums its weighted inputs: the first statement that sums, zips, multiplies
    matrices or calls ``dot``; else the first assignment; else the ``return``."""
    statements = body_statements(function)
    for stmt in statements:
        if any((isinstance(n, ast.Call) and isinstance(n.func, (ast.Name, ast.Attribute))
                and (getattr(n.func, "id", None) or getattr(n.func, "attr", None)) in ("sum", "zip", "dot", "matmul"))
               or (isinstance(n, ast.BinOp) and isinstance(n.op, ast.MatMult)) for n in walk(stmt)):
            return stmt
    return next((s for s in statements if isinstance(s, (ast.Assign, ast.AugAssign))), last_return(function))


NONLINEARITIES = ("relu", "tanh", "sigmoid", "exp")


def activation_statement(submission: Submission, cls: Member, method: Member) -> Location:
    """Where a wrong nonlinearity is applied: the forward method's statement that applies one (or decides
    whether to); else, in the constructor, the statement that builds the parts with their nonlinearity."""
    for stmt in body_statements(method.node):
        if any(calls(stmt, name) for name in NONLINEARITIES):
            return method.at(stmt)
    init = find_method(submission, cls, "__init__")
    if init is not None:
        built = [s for s in body_statements(init.node) if any(isinstance(n, ast.Call) and n.keywords
                                                                for n in walk(s))]
        if built:
            return init.at(built[0])
    return method.at(last_return(method.node))


def reads_data(stmt: ast.stmt) -> bool:
    return any(isinstance(n, ast.Attribute) and n.attr == "data" and isinstance(n.ctx, ast.Load) for n in walk(stmt))


def grad_reset(function: ast.AST, grad: str = "grad") -> ast.stmt | None:
    """The statement of ``zero_grad`` that sets a gradient (``grad``: the engine's name for it), else its first."""
    statements = body_statements(function)
    return next((s for s in statements if any(isinstance(n, ast.Attribute) and n.attr == grad
                                              and isinstance(n.ctx, ast.Store) for n in walk(s))),
                statements[0] if statements else None)


def note(code: str, verdict: Verdict | None) -> str:
    """What a module's diagnosis shows beyond its code: a loss that sums its rows where their mean is asked."""
    if code == "wrong-output" and verdict is not None and "sum" in verdict.faults:
        return "It is the sum of the rows' losses, not their mean."
    ungraded = verdict.details.get("ungraded") if verdict is not None else None
    if ungraded == "engine":
        return ("It comes out right on the grader's own Value: the ops of your class it uses are wrong, and no "
                "target of this course that grades them loses points for it, so it is charged here.")
    if ungraded == "parts":
        return ("It comes out right built of the grader's own parts: the neuron or layer of yours it is built of is "
                "wrong, and no target of this course that grades it loses points for it, so it is charged here.")
    return ""
