"""Turning raw observations from the child into verdicts, with two oracles.

The reference oracle is the reference engine on the same expression and
inputs. The finite-difference oracle is the central difference of a forward
pass: of the student's own forward pass for the ops (so a gradient that is
right for a wrong forward value is told apart from a wrong derivative), of the
reference forward pass for ``backward``. Nothing received from the child is
trusted: a value that is not a finite float is a failure of the case.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, field

import reference
from grader.exercise import ops
from grader.exercise.cases import Case, Check
from grader.exercise.expr import (
    Expr,
    engine_for,
    evaluate,
    operands,
    shares_a_value,
)
from grader.judging.closeness import REL_TOL, close
from grader.judging.plan import OpPlan

FD_TOL = 1e-4  # against finite differences, whose own error is about 1e-9


@dataclass(frozen=True)
class Tolerance:
    """How close counts as equal, relative to the numbers' size (a course may change them)."""

    reference: float = REL_TOL
    finite_difference: float = FD_TOL


def shown(x: object) -> object:
    """A received value as the report shows it: a finite number, ``None`` for a constant,
    or what it was instead (a child's description, or the JSON type a forged reply sent)."""
    if x is None or (isinstance(x, float) and math.isfinite(x)):
        return x
    if isinstance(x, float):
        return f"<{x!r}>"
    if isinstance(x, dict) and isinstance(x.get("invalid"), str):
        return f"<{x['invalid'][:60]}>"
    return f"<{type(x).__name__}>"


def received_error(error: object) -> dict:
    """The child's description of a failure, kept to plain, short fields: what a forged
    reply puts there can neither break a report nor fill it."""
    fields = error if isinstance(error, dict) else {}
    kept: dict = {}
    for key, value in list(fields.items())[:20]:
        if isinstance(value, str):
            kept[key] = value[:400]
        elif value is None or (isinstance(value, int) and abs(value) < 2**31):
            kept[key] = value
    for key, default in (("type", "Error"), ("message", ""), ("phase", "grader")):
        if not isinstance(kept.get(key), str):
            kept[key] = default
    for key in ("line", "file"):
        kept.setdefault(key, None)
    if isinstance(kept["line"], bool) or not isinstance(kept["line"], int | None):
        kept["line"] = None
    if not isinstance(kept["file"], str | None):
        kept["file"] = None
    return kept


def slope(probe: object) -> float | None:
    """The central difference of a finite-difference probe ``[f(x+h), f(x-h), h]``, or ``None``
    when the probe is not three finite floats with ``h > 0``."""
    if not (isinstance(probe, list) and len(probe) == 3
            and all(isinstance(p, float) and math.isfinite(p) for p in probe) and probe[2] > 0):
        return None
    return (probe[0] - probe[1]) / (2 * probe[2])


def valid_list(x: object, length: int) -> bool:
    return isinstance(x, list) and len(x) == length


@dataclass
class Verdict:
    """How one case went: an error, or what was compared and which oracle disagreed."""

    case: Case
    error: dict | None = None
    forward_ok: bool = True
    grads_ok: bool = True
    fd_ok: bool = True
    expected: dict[str, float] = field(default_factory=dict)
    actual: dict[str, object] = field(default_factory=dict)
    expected_data: float | None = None
    actual_data: object = None
    train: dict = field(default_factory=dict)  # train_step: what was compared
    faults: set = field(default_factory=set)  # what the traces (backward) or the graph (ops) show went wrong
    traces: list = field(default_factory=list)  # backward: the order the nodes' _backward ran in, per root
    graph: tuple | None = None  # (expression, expected, actual (data, grad) of every node)
    check: Check | None = None  # the check the case belongs to
    reference: str = "the reference engine"  # what the expected values came from, as a message names it
    details: dict = field(default_factory=dict)  # what a kind's judge read beyond the numbers (its rules use it)

    def passed(self, focus: str) -> bool:
        if self.error is not None:
            return False
        if focus == "data":
            return self.forward_ok
        if focus == "grad":
            return self.grads_ok
        return self.forward_ok and self.grads_ok

    @property
    def oracle(self) -> str:
        if not self.grads_ok and not self.fd_ok:
            return "both"
        if not self.grads_ok:
            return "reference"
        if not self.fd_ok:
            return "finite-difference"
        return "reference"


# A batch worker meets the same reply to the same request again and again: every correct
# submission's, and every submission's to the cases its bugs do not touch. Replies with the
# same content are one object (``grader.child.worker.read_reply``), so a verdict is reached
# once a process for each request (which stands for its case and plan) and reply.
_JUDGED: dict[tuple, tuple[dict, dict, Verdict]] = {}
JUDGED_LIMIT = 16384


def judged(request: dict, reply: dict, judge: Callable[[dict], Verdict], context: tuple) -> Verdict:
    """``judge(reply)``, or a copy of the verdict it gave before for ``request``, ``reply`` and
    ``context`` (whatever else ``judge`` reads: the tolerance, a kink). Judging is a function of
    these alone; the request and reply are kept with the verdict, so that no id is taken for
    another object's."""
    key = (id(request), id(reply), context)
    entry = _JUDGED.get(key)
    if entry is None or entry[0] is not request or entry[1] is not reply:
        verdict = judge(reply)
        if len(_JUDGED) >= JUDGED_LIMIT:
            _JUDGED.clear()
        entry = _JUDGED[key] = (request, reply, verdict)
    # A shallow copy, as dataclasses.replace makes, at a fraction of its cost (it runs per case).
    copy = Verdict.__new__(Verdict)
    copy.__dict__.update(entry[2].__dict__)
    return copy


def malformed(case: Case, what: str) -> Verdict:
    return Verdict(case, error={"type": "MalformedReply", "message": what, "phase": "grader"})


def actual_values(expr: Expr, plan: OpPlan, got_data: list) -> list:
    """Every node's value as the student's op made it: theirs where they built the node,
    else the node's own rule applied to the values its operands actually had."""
    actual: list = []
    student = set(plan.student)
    for i, node in enumerate(expr):
        if node[0] == "const":
            actual.append(node[1])
        elif i in student or node[0] == "leaf":
            actual.append(got_data[i])
        elif all(isinstance(actual[j], float) for j in operands(node)):
            try:
                actual.append(ops.forward(node, actual))
            except (ArithmeticError, ValueError, TypeError):
                actual.append({"invalid": "undefined"})
        else:
            actual.append({"invalid": "from a wrong operand"})
    return actual


def difference_gradients(expr: Expr, plan: OpPlan, probes: list) -> list[float] | None:
    """Each node's gradient by the chain rule, with the student's own nodes' local
    derivatives measured by central differences of their forward pass (the probes)."""
    local: dict[int, list[float]] = {i: list(ops.local_derivatives(node, plan.values))
                                     for i, node in enumerate(expr) if node[0] not in ("leaf", "const")}
    for k, (i, position, h) in enumerate(plan.probes):
        difference = slope([probes[2 * k], probes[2 * k + 1], h])
        if difference is None:
            return None
        local[i][position] = difference
    grads = [0.0] * len(expr)
    grads[-1] = 1.0
    for i in range(len(expr) - 1, -1, -1):
        for j, d in zip(operands(expr[i]), local.get(i, ())):
            grads[j] += d * grads[i]
    return grads


def one_sided(case: Case) -> list[tuple[float, float]]:
    """For a case at a kink (relu at 0): the range of each node's gradient between the two sides."""
    sides = [evaluate(case.expr, {k: v + h for k, v in case.values.items()}, reference.Value)[1]
             for h in (1e-9, -1e-9)]
    return [(min(x, y), max(x, y)) if isinstance(x, float) else (0.0, 0.0) for x, y in zip(*sides)]


# The reference's side of a case depends on the case alone, and a course's submissions
# meet the same cases (the hand-picked ones and every search's opening): a grading
# process that grades many (a batch worker) computes each once.
@functools.lru_cache(maxsize=4096)
def reference_values(case: Case) -> tuple[list, list]:
    """Every node's value and gradient by the reference engine, for the case's (single) expression; by the ops' own
    rules where it uses an op the reference engine does not have (``RuleNode``)."""
    return evaluate(case.expr, case.values, engine_for(case.exprs, reference.Value))


def judge_op(case: Case, reply: dict, plan: OpPlan, tolerance: Tolerance, kink: bool = False, focus: str = "both"
             ) -> Verdict:
    """Compare one op case: forward values of every node, then the leaves' gradients.

    At a kink any gradient between the two one-sided derivatives is right: a
    subgradient is a correct choice, whichever a student made."""
    if "error" in reply:
        return Verdict(case, error=received_error(reply["error"]))
    expr = case.expr
    data, grads = reference_values(case)
    if reply.get("equality") == "value" and shares_a_value(expr, data, numbers=True):
        # Nodes that compare by value collapse in a set here, whatever the op does: the damage is
        # the traversal's (charged to backward as value-equality), so this case says nothing of the op.
        return Verdict(case)
    got_data, got_grads, probes = reply.get("data"), reply.get("grads"), reply.get("probes")
    if got_grads is None and valid_list(got_data, len(expr)):
        # An engine with no backward pass yet (a tutorial's forward steps): its values are judged; a check of
        # gradients alone fails, one of values and gradients is of values.
        actual = actual_values(expr, plan, got_data)
        verdict = Verdict(case, expected_data=data[-1], actual_data=shown(actual[-1]), grads_ok=focus != "grad",
                          fd_ok=focus != "grad")
        verdict.forward_ok = all(close(got, want, tolerance.reference)
                                 for node, got, want in zip(expr, actual, data) if node[0] != "const")
        return verdict
    if not (valid_list(got_data, len(expr)) and valid_list(got_grads, len(expr))
            and valid_list(probes, 2 * len(plan.probes))):
        return malformed(case, "the reply does not have the expected shape")
    actual = actual_values(expr, plan, got_data)
    verdict = Verdict(case, expected_data=data[-1], actual_data=shown(actual[-1]))
    verdict.graph = (expr, list(zip(data, grads)), [(shown(d), shown(g)) for d, g in zip(actual, got_grads)])
    verdict.forward_ok = all(
        close(got, want, tolerance.reference) for node, got, want in zip(expr, actual, data) if node[0] != "const"
    )
    slopes = difference_gradients(expr, plan, probes)
    for i, node in enumerate(expr):
        if node[0] != "leaf":
            continue
        name = node[1]
        verdict.expected[name] = grads[i]
        verdict.actual[name] = shown(got_grads[i])
        verdict.grads_ok &= close(got_grads[i], grads[i], tolerance.reference) or (
            kink and isinstance(got_grads[i], float) and within(got_grads[i], one_sided(case)[i], tolerance))
        verdict.fd_ok &= slopes is not None and close(got_grads[i], slopes[i], tolerance.finite_difference)
    if verdict.forward_ok and not verdict.grads_ok:
        verdict.faults = structure_faults(expr, plan, grads, got_grads, reply.get("children"), tolerance,
                                          reply.get("moved"))
    numbers = reply.get("numbers")
    if verdict.forward_ok and isinstance(numbers, list) and any(i in numbers for i in plan.student) \
            and "missing-child" not in verdict.faults:
        # Micrograde's pass steps over a number among the children; a pass that walks the children as nodes (the
        # learner's own, the course's) fails on it. An operand missing from them says more, and is said alone.
        verdict.grads_ok = False
        verdict.faults = {*verdict.faults, "number-child"}
    return verdict


def structure_faults(expr: Expr, plan: OpPlan, want: list[float], got: list, children: object,
                     tolerance: Tolerance, moved: object = None) -> set[str]:
    """Gradient lost through the graph's wiring rather than a wrong derivative.

    ``missing-child``: an operand of the student's node is not among its children, so
    no backward pass reaches it. ``detached-backward``: the node's ``_backward`` does
    not run as the node's own: its operands get nothing from it at all, or an operand
    that did get its gradient passes nothing on (its ``_backward`` was replaced), or the
    child saw the op replace an operand's own ``_backward`` (``moved``: the student nodes
    whose op did), whatever that did to this case's gradients."""
    faults: set[str] = set()
    if isinstance(moved, list) and any(i in moved for i in plan.student):
        faults.add("detached-backward")

    def right(i: int) -> bool:
        """The node got its gradient, and it is one that has something to pass on."""
        return want[i] != 0.0 and close(got[i], want[i], tolerance.reference)

    def nothing(ids: list[int]) -> bool:
        return bool(ids) and all(got[j] == 0.0 for j in ids) and any(want[j] != 0.0 for j in ids)

    for i in plan.student:
        values = [j for j in operands(expr[i]) if expr[j][0] != "const"]
        found = children[i] if isinstance(children, list) and i < len(children) else None
        if isinstance(found, list) and any(j not in found for j in values):
            faults.add("missing-child")
            continue
        if right(i) and nothing(values):
            faults.add("detached-backward")
        for j in values:
            below = [k for k in operands(expr[j]) if expr[k][0] != "const"]
            if j not in plan.student and expr[j][0] != "leaf" and right(j) and nothing(below):
                faults.add("detached-backward")
    return faults


def within(x: float, bounds: tuple[float, float], tolerance: Tolerance) -> bool:
    low, high = bounds
    return low - tolerance.reference <= x <= high + tolerance.reference
