"""Naming what is wrong with a tensor op, from its verdicts on cases of several shapes.

A result of the wrong shape (an axis kept, a product of the wrong sides) is said
before its values, and wrong values before the gradients that follow from them.
With the values right, how the failing cases differ from the passing ones names
the misconception: no gradient reaches the operands at all (the result's entries
are new Values or plain numbers: ``detached-result``); ``max`` gives the gradient
to an entry that is not the largest (``wrong-element``); gradients are wrong only
where an operand is broadcast, on that operand (``broadcast-not-summed``); only
where a Value is used more than once (``grad-overwrite``); else the local
derivative is wrong (``wrong-local-grad``).
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

from grader.diagnosis.findings import TargetOutcome
from grader.diagnosis.rules import smallest, unusable_and_errors
from grader.diagnosis.syntax import Function, attribute_target, calls, owner, parameter
from grader.exercise.tensors import TensorCase, shape_text
from grader.judging.judge import Verdict, close
from grader.submission.tree import walk


def passed(v: Verdict) -> bool:
    return v.passed(v.check.focus if v.check is not None else "both")


def wrong_leaves(verdict: Verdict) -> list[str]:
    """The leaves whose gradient ``verdict`` got wrong, in the case's order."""
    return [name for name, want in verdict.expected.items() if not close(verdict.actual.get(name), want)]


def misshapen(verdict: Verdict) -> dict[str, str]:
    """The operands whose own gradient is not of their shape, with the shape it has (``none``: no gradient)."""
    return dict(f.split(":")[1:] for f in sorted(verdict.faults) if f.startswith("grad-shape:"))


def wrong_tensors(verdict: Verdict) -> set[str]:
    """The operands ``verdict`` got a wrong gradient of: of the wrong shape, or wrong in an entry."""
    case: TensorCase = verdict.case
    wrong = set(wrong_leaves(verdict))
    return set(misshapen(verdict)) | {t.name for t in case.tensors if any(case.names[i] in wrong for i in t.leaves)}


def on_broadcast(verdict: Verdict) -> bool:
    """Whether every wrong gradient of ``verdict`` is of an operand that the case broadcasts."""
    wrong = wrong_tensors(verdict)
    return bool(wrong) and wrong <= verdict.case.broadcast


def tensor_codes(verdicts: list[Verdict]) -> dict[str, Verdict]:
    """The codes of a tensor op target, each with the smallest verdict that shows it."""
    unusable, errors = unusable_and_errors(verdicts)
    if unusable:
        return unusable
    if errors:
        return {"crash": smallest(errors)}
    wrong = [v for v in verdicts if not passed(v)]
    if not wrong:
        return {}
    for code, shows in (("wrong-shape", lambda v: "shape" in v.faults), ("wrong-forward", lambda v: not v.forward_ok)):
        found = [v for v in wrong if shows(v)]
        if found:
            return {code: smallest(found)}
    right = [v for v in verdicts if passed(v)]
    if all(v.case.broadcast for v in wrong) and any(not v.case.broadcast for v in right) and \
            on_broadcast(smallest(wrong)):
        return {"broadcast-not-summed": smallest(wrong)}
    if found := [v for v in wrong if misshapen(v)]:
        return {"wrong-grad-shape": smallest(found)}
    for code, fault in (("detached-result", "detached"), ("wrong-element", "elsewhere"), ("missing-child", "unlisted")):
        found = [v for v in wrong if fault in v.faults]
        if found:
            return {code: smallest(found)}
    if all(v.case.reuses for v in wrong) and any(not v.case.reuses for v in right):
        return {"grad-overwrite": smallest(wrong)}
    return {"wrong-local-grad": smallest(wrong)}


def case_method(method: str, verdict: Verdict | None) -> str:
    """What the learner wrote for the op of ``verdict``'s case: the target's ``method`` (``Tensor.__mul__``), or
    the method of another op the target grades too (``Tensor.__rmul__``)."""
    case = verdict.case if verdict is not None else None
    return f"{method.rpartition('.')[0]}.{case.method}" if isinstance(case, TensorCase) else method


def shape_of(nested: object) -> tuple[int, ...]:
    """The shape of nested lists (a result as a verdict keeps it)."""
    shape = []
    while isinstance(nested, list):
        shape.append(len(nested))
        nested = nested[0] if nested else None
    return tuple(shape)


def note(code: str, verdict: Verdict | None) -> str:
    """What a tensor op's diagnosis shows beside the smallest case: the shapes, the operand no gradient
    reaches, the entry that got the gradient."""
    if verdict is None or verdict.error is not None:
        return ""
    case: TensorCase = verdict.case
    if code == "wrong-shape":
        return (f"{case.call} must have shape {shape_text(shape_of(verdict.expected_data))}; it has shape "
                f"{shape_text(shape_of(verdict.actual_data))}.")
    if code == "detached-result":
        if "numbers" in verdict.faults:
            return "Its entries are plain numbers, not Values."
        lost = [f.partition(":")[2] for f in sorted(verdict.faults) if f.startswith("lost:")]
        return f"The backward pass from the result never reaches {' or '.join(lost)}." if lost else ""
    if code == "broadcast-not-summed":
        stretched = [t for t in case.tensors if t.name in case.broadcast]
        found = misshapen(verdict)
        return " ".join(f"{t.name} of shape {shape_text(t.shape)} is broadcast to {shape_text(case.result_shape)}"
                        + (f"; its gradient has shape {found[t.name]}." if t.name in found else ".")
                        for t in stretched)
    if code == "wrong-grad-shape":
        return " ".join(f"{t.name} of shape {shape_text(t.shape)} gets " + (
            "no gradient array." if shape == "none" else f"a gradient of shape {shape}.")
            for t in case.tensors for name, shape in misshapen(verdict).items() if name == t.name)
    if code == "missing-child":
        lost = [f.partition(":")[2] for f in sorted(verdict.faults) if f.startswith("lost:")]
        return (f"Its gradients are right here, but the result does not hold {' or '.join(lost)} among its "
                "operands." if lost else "")
    if code == "wrong-element":
        wrong = [name for name in wrong_leaves(verdict) if verdict.expected[name] == 0]
        return f"{wrong[0]} is not the largest entry, yet gets a gradient." if wrong else ""
    return ""


def own_returns(function: Function) -> list[ast.Return]:
    """The method's own ``return`` statements with a value (not those of functions defined inside it)."""
    nested = [n for n in walk(function) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
              and n is not function]
    inner = {id(r) for n in nested for r in walk(n) if isinstance(r, ast.Return)}
    found = [n for n in walk(function) if isinstance(n, ast.Return) and n.value is not None and id(n) not in inner]
    return sorted(found, key=lambda n: n.lineno)


def gradient_updates(function: Function, overwrites: bool) -> list[ast.stmt]:
    """Statements that change a ``.grad`` (inside closures too), in source order; with ``overwrites``, only
    those that assign it with ``=`` without reading it (``v.grad = e.data * e.grad``, not ``v.grad = v.grad +
    ...``)."""
    found = []
    for n in walk(function):
        target = attribute_target(n, "grad") if isinstance(n, ast.stmt) else None
        if target is None:
            continue
        if overwrites and not (isinstance(n, ast.Assign) and not any(
                isinstance(a, ast.Attribute) and a.attr == "grad" and ast.dump(a.value) == ast.dump(target.value)
                for a in walk(n.value))):
            continue
        found.append(n)
    return sorted(found, key=lambda n: n.lineno)


def of_wrong_operands(function: Function, updates: list[ast.stmt], verdict: Verdict | None) -> list[ast.stmt]:
    """``updates`` with those of the operands ``verdict`` got a wrong gradient of first: the method's parameter
    for each (its receiver, ``self``, is the first tensor of the call; the others follow in order)."""
    if verdict is None or not isinstance(verdict.case, TensorCase):
        return updates
    case = verdict.case
    tensors = [x for x in case.operands if isinstance(x, str)]
    order = [tensors[0], *(x for x in case.operands if x is not tensors[0])] if tensors else []
    wanted = {parameter(function, order.index(name)) for name in wrong_tensors(verdict) if name in order}
    first = [u for u in updates if owner(attribute_target(u, "grad")) in wanted]
    return first + [u for u in updates if u not in first]


def unlinking(function: Function) -> list[ast.stmt]:
    """Statements that make entries from numbers: read a ``.data``, or call ``float``, ``copy`` or ``deepcopy``."""
    found = []
    for stmt in (n for n in walk(function) if isinstance(n, ast.stmt) and not isinstance(n, ast.FunctionDef)):
        body = [stmt] if not hasattr(stmt, "body") else []
        if any(isinstance(a, ast.Attribute) and a.attr == "data" and not isinstance(a.ctx, ast.Store)
               for b in body for a in walk(b)) or any(calls(b, name) for b in body
                                                      for name in ("float", "copy", "deepcopy")):
            found.append(stmt)
    return sorted(found, key=lambda n: n.lineno)


def tensor_statement(code: str, function: Function, verdict: Verdict | None) -> ast.stmt | None:
    """The statement at fault in a tensor op: the ``return`` that makes a wrong result (the first for a whole
    reduction, the last for one along an axis), the ``=`` where a gradient is overwritten, the ``.grad`` update
    of a closure the method writes, the statement that makes entries from numbers."""
    returns = own_returns(function)
    if not returns:
        return None
    case = verdict.case if verdict is not None else None
    back = returns[0] if isinstance(case, TensorCase) and case.axis is None else returns[-1]
    if code == "grad-overwrite":
        return next(iter(gradient_updates(function, True)), back)
    if code in ("wrong-local-grad", "wrong-element", "wrong-grad-shape"):
        return next(iter(of_wrong_operands(function, gradient_updates(function, False), verdict)), back)
    if code == "broadcast-not-summed":
        updates = of_wrong_operands(function, gradient_updates(function, False), verdict)
        return next(iter([*updates, *unlinking(function)]), back)
    if code == "detached-result":
        return next(iter(unlinking(function)), back)
    if code == "missing-child":  # where the result is made: its operands belong there
        made = [n for n in walk(function) if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call)]
        return min(made, key=lambda n: n.lineno) if made else back
    return back


def assumed(outcomes: Sequence[TargetOutcome]) -> list[str]:
    """A warning for each tensor target whose op was called in another style than numpy's because the learner's
    method shows it takes that one (the course's configuration said none): what was assumed, and how to say it."""
    found = []
    for outcome in outcomes:
        shown = next((v for v in outcome.verdicts if v.details.get("assumed")), None)
        if shown is None:
            continue
        case, owner_class = shown.case, outcome.target.settings.get("class", "the tensor class")
        said = []
        for key in shown.details["assumed"]:
            if key == "shape_as":
                sizes = ", ".join(map(str, case.sizes))
                said.append(f"{owner_class}.{case.method} takes the new shape as one tuple, so it was called as "
                            f"a.{case.method}(({sizes}{',' if len(case.sizes) == 1 else ''})) "
                            f"(shape_as = \"tuple\" in the course's configuration says so)")
            else:
                said.append(f"{owner_class}.{case.method} takes its axis as dim, so it was called as "
                            f"a.{case.method}(dim={case.axis}) (axis_keyword = \"dim\" in the course's "
                            f"configuration says so)")
        found.append(f"{outcome.target.name}: {'; '.join(said)}")
    return found
