"""Naming the misconception behind a target's failures.

Each rule compares kinds of cases with each other, so the diagnosis follows
from evidence rather than from a guess: gradients right when every node is
used once but wrong when one is used twice can only be ``=`` where ``+=``
belongs; a backward pass whose nodes all ran once, but a node before one of
its users, is in the wrong order. Every code comes with the smallest verdict
that shows it.
"""

from __future__ import annotations

import re

from grader.diagnosis.codes import UNUSABLE
from grader.diagnosis.training import TrainShape
from grader.exercise import ops
from grader.exercise.expr import features, operands
from grader.exercise.ops import OPS
from grader.judging.judge import Verdict, close

PLAIN_NUMBER_USED = re.compile(r"'(float|int)' object has no attribute ")


def smallest(verdicts: list[Verdict]) -> Verdict:
    """The verdict with the smallest case: the one a student can check by hand."""
    return min(verdicts, key=lambda v: v.case.rank)


def unusable_and_errors(verdicts: list[Verdict]) -> tuple[dict[str, Verdict], list[Verdict]]:
    """The one code that makes every other one moot (the method is missing, no node can be
    made of the class), if any; and every verdict that ended in an error."""
    errors = [v for v in verdicts if v.error is not None]
    for kind, unusable in UNUSABLE.items():
        found = next((v for v in errors if v.error.get("type") == kind), None)
        if found is not None:
            return {unusable.code: found}, errors
    return {}, errors


def settled(verdicts: list[Verdict], focus: str) -> tuple[dict[str, Verdict] | None, list[Verdict]]:
    """For a kind whose rules read its failing verdicts: the codes that settle it before they are read (the one
    that makes every other moot, else ``crash`` for an error), or ``None`` and the verdicts that failed."""
    unusable, errors = unusable_and_errors(verdicts)
    if unusable:
        return unusable, []
    if errors:
        return {"crash": smallest(errors)}, []
    return None, [v for v in verdicts if not v.passed(focus)]


def diagnose_op(target: str, verdicts: list[Verdict], attached: bool | None = None,
                overwrites: bool | None = None) -> dict[str, Verdict]:
    """Codes for an op target from all its verdicts.

    A check that names its own code (``relu.at-zero``) speaks only through that
    code; the other checks are read together, by the rules below. ``attached`` is
    whether the method visibly sets ``_backward`` on the node it returns (``None``:
    not known): then a ``_backward`` that passes nothing is a wrong derivative.
    ``overwrites`` is whether it visibly assigns an operand's gradient with ``=``
    (``False``: every update visibly adds to it): gradients wrong only where a node is
    used twice are then a wrong term that happens to be right once, not an overwrite."""
    unusable, errors = unusable_and_errors(verdicts)
    if unusable:
        return unusable
    special = [v for v in verdicts if v.check is not None and v.check.code and not v.passed(v.check.focus)]
    verdicts = [v for v in verdicts if v.check is None or not v.check.code]
    codes = general_op_codes(target, verdicts, errors, attached, overwrites)
    if not codes:
        # The special case fails alone: its own code says it (a bug seen elsewhere too
        # is that bug, not a special one).
        for verdict in sorted(special, key=lambda v: v.case.rank):
            codes.setdefault(verdict.check.code, verdict)
    return codes


def general_op_codes(target: str, verdicts: list[Verdict], errors: list[Verdict],
                     attached: bool | None, overwrites: bool | None = None) -> dict[str, Verdict]:
    """The codes of an op's ordinary checks, read together."""
    codes: dict[str, Verdict] = {}
    errors = [v for v in errors if v in verdicts]

    def constant(v: Verdict) -> bool:
        return features(v.case.expr, target).constant

    def number_as_node(v: Verdict) -> bool:
        """A reflected op (``2 + a``: its other operand is always a plain number) that failed by using that
        number as a node: the error says a plain number has no attribute (``'float' ... no attribute 'data'``)."""
        error = v.error or {}
        return (target in OPS and OPS[target].number_first and error.get("type") == "AttributeError"
                and PLAIN_NUMBER_USED.match(str(error.get("message", ""))) is not None)

    def own_first(found: list[Verdict]) -> Verdict:
        """The smallest case with the plain number second (``a + 2``, the op's own method), if any:
        only when every such case is right does the reflected method (``2 + a``) take the blame."""
        own = [v for v in found if not any(node[0] == target and v.case.expr[operands(node)[0]][0] == "const"
                                           for node in v.case.expr)]
        return smallest(own or found)

    plain_errors = [v for v in errors if not constant(v) and not number_as_node(v)]
    if plain_errors:
        codes["crash"] = smallest(plain_errors)
    elif errors:
        codes["constant-operand"] = own_first(errors)
    ran = [v for v in verdicts if v.error is None]
    plain = [v for v in ran if not constant(v)]
    forward_bad = [v for v in ran if not v.forward_ok]
    if forward_bad:
        if all(constant(v) for v in forward_bad) and plain:
            codes.setdefault("constant-operand", own_first(forward_bad))
        else:
            codes["wrong-forward"] = smallest([v for v in forward_bad if not constant(v)])
    if "wrong-forward" in codes and "crash" in codes and all(v.error.get("phase") == "forward" for v in plain_errors):
        # A wrong formula that also raises at some inputs (a division by zero the right one never makes, a
        # node stored as the data that the next op cannot read): one misconception, the wrong value.
        del codes["crash"]
    # Where the forward value is already wrong, the gradients prove nothing more:
    # only cases with a right forward pass speak about the derivative.
    grads_bad = [v for v in ran if v.forward_ok and not v.grads_ok]
    # Gradient lost in the wiring says more than any derivative rule: it alone is the code.
    # An operand missing from the children is seen directly; a ``_backward`` that passes
    # nothing must do so in every failing case where each node is used once (a derivative can
    # be 0 by accident once), or, where only reused nodes fail (they mix what several nodes
    # passed), in most failing cases.
    # A plain number among the children (the exponent): seen directly, unless an operand is missing from them.
    numbers = [v for v in grads_bad if "number-child" in v.faults]
    grads_bad = [v for v in grads_bad if v not in numbers]
    missing = [v for v in grads_bad if "missing-child" in v.faults]
    if numbers and not missing:
        codes["number-child"] = smallest(numbers)
    if missing and all(constant(v) for v in missing):
        # An operand lost only beside a plain number: the number's handling (``__radd__`` making a
        # new node of ``self``) cut it off, not the op's own children.
        codes.setdefault("constant-operand", own_first(missing))
        grads_bad = [v for v in grads_bad if v not in missing]
    elif missing:
        codes["missing-child"] = smallest(missing)
        return codes
    once = [v for v in grads_bad if not features(v.case.expr).reuse]
    detached = [v for v in grads_bad if "detached-backward" in v.faults]
    if attached is not True and (all(v in detached for v in once) if once
                                 else 2 * len(detached) >= len(grads_bad) > 0):
        codes["detached-backward"] = smallest(detached)
        return codes
    single = [v for v in grads_bad if not constant(v) and not features(v.case.expr).reuse]
    reused = [v for v in grads_bad if not constant(v) and features(v.case.expr).reuse]
    with_constant = [v for v in grads_bad if constant(v)]
    if single:
        codes["wrong-local-grad"] = smallest(single)
        # A second bug only a node used twice shows: an operand the single-use cases never get wrong comes out
        # wrong where a node is reused, in an op that visibly assigns a gradient with ``=`` (self's, beside a
        # wrong derivative of other's). Each is its own diagnosis, at its own line.
        told = {i for v in single for i in wrong_operands(v, target)}
        more = [v for v in reused if told and set(wrong_operands(v, target)) - told]
        if overwrites and more:
            codes["grad-overwrite"] = smallest(more)
    elif reused:
        codes["grad-overwrite" if overwrites is not False else "wrong-local-grad"] = smallest(reused)
    elif with_constant:
        codes.setdefault("constant-operand", own_first(with_constant))
    return codes


# The errors of a name read where it is not bound.
UNBOUND = ("NameError", "UnboundLocalError")


# The faults a pass's gradients alone may show, the likelier first (``grader.judging.passes``).
SIMULATED_ORDER = ("missing-seed", "no-accumulation", "wrong-order", "incomplete-traversal")


def diagnose_backward(verdicts: list[Verdict]) -> dict[str, Verdict]:
    """Codes for ``backward`` from the order the nodes ran in and the gradients that resulted."""
    unusable, errors = unusable_and_errors(verdicts)
    if unusable:
        return unusable
    codes: dict[str, Verdict] = {}
    if errors:
        codes["crash"] = smallest(errors)
        if codes["crash"].error.get("type") in UNBOUND:
            # A name read where it is bound only on some graphs (the last operand a loop saw): the statement that
            # reads it is the one mistake, and the wrong results of the graphs where it is bound follow from it.
            return codes
    failing = sorted((v for v in verdicts if v.error is None and not v.grads_ok), key=lambda v: v.case.rank)
    told = [v for v in failing if v.details.get("simulated") and v.faults]
    if told:
        # Faults told from the gradients alone (the pass's order not seen): one a traced case shows too, else one
        # every such case shows, else each case's first, in the order the faults are listed here.
        traced = set().union(*(v.faults for v in failing if not v.details.get("simulated")))
        common = set.intersection(*(v.faults for v in told))
        for verdict in told:
            choice = (verdict.faults & traced) or (verdict.faults & common) or verdict.faults
            verdict.faults = {min(choice, key=SIMULATED_ORDER.index)}
    for verdict in failing:
        for fault in sorted(verdict.faults):
            codes.setdefault(fault, verdict)
    if "unexplained" in codes:
        # Gradients wrong in a pass whose trace shows nothing wrong, where the leaves' part is not traced: the
        # fault another case shows, else gradient replaced where it should have been added to.
        unexplained = codes.pop("unexplained")
        if not codes:
            codes["no-accumulation"] = unexplained
    if "incomplete-traversal" in codes or "repeated-visit" in codes:
        # Order only means something for a pass that runs every node once.
        codes.pop("wrong-order", None)
    if "incomplete-traversal" in codes and "repeated-visit" in codes and all(
            len(set(trace)) == 1 for v in verdicts if v.error is None and not v.grads_ok for trace in v.traces):
        # Every pass ran one node's _backward over and over and no other (the order lists the root once per
        # node, the loop runs the root's closure for each): one misconception, said with the smaller case.
        codes = {code: v for code, v in codes.items() if code != max(
            ("incomplete-traversal", "repeated-visit"), key=lambda c: codes[c].case.rank)}
    return codes


def frozen(shape: TrainShape | None) -> str:
    """Why no parameter moved, from what ``train_step`` visibly does: no ``backward()`` call,
    no update, an update of the gradients (or of another node's data) instead of the parameter's
    data, or else gradients reset between the backward pass and the update."""
    if shape is not None and not shape.calls_backward:
        return "missing-backward"
    if shape is not None and not shape.updates:
        return "missing-update"
    if shape is not None and not shape.updates_data:
        return "wrong-update"
    return "zero-grad-misplaced"


def diagnose_train(verdicts: list[Verdict], shape: TrainShape | None = None) -> dict[str, Verdict]:
    """Codes for ``train_step`` from which steps came out right (and, when nothing moved,
    from what the function visibly does: see ``frozen``)."""
    unusable, errors = unusable_and_errors(verdicts)
    if unusable:
        return unusable
    codes: dict[str, Verdict] = {}
    if errors:
        codes["crash"] = errors[0]
    # The fewest steps first: a diagnosis's evidence is then the smallest case that shows it, and its message
    # counts steps as that case does ("2 steps ... after step 2", not a 3-step case's).
    for verdict in sorted((v for v in verdicts if v.error is None), key=lambda v: v.case.steps):
        right, moved = verdict.train["right_steps"], verdict.train["moved"]
        if not verdict.forward_ok and moved[0] and not right[0]:
            # A wrong loss and wrong gradients: the loss itself is wrong, and the update
            # faithfully follows it.
            codes.setdefault("wrong-loss", verdict)
            continue
        if not moved[0]:
            codes.setdefault(frozen(shape), verdict)
        elif not right[0]:
            codes.setdefault("wrong-update", verdict)
            if verdict.train.get("accumulates"):
                # The update is wrong, and what it moves by grows with every earlier step's gradients too.
                codes.setdefault("missing-zero-grad", verdict)
        elif not all(right):
            codes.setdefault("missing-zero-grad", verdict)
        if not verdict.forward_ok:
            codes.setdefault("wrong-loss", verdict)
    if "wrong-update" in codes and shape is not None and shape.updates_returned:
        # The update writes the loss's data: the loss returned is wrong through it, one misconception.
        codes.pop("wrong-loss", None)
    return codes


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
