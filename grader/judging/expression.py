"""Judging a whole computation: the learner's value and gradients against the reference engine's, and, when
they differ, where the fault is.

The reference side is the course's code on the reference engine (``reference_run``); the
second oracle, a central difference of that computation's value. When the learner's
numbers differ, the graph the child sent says whether one op of the learner's class is at
fault (``grader.judging.composition``). If that op is graded on its own in this course, the
computation inherits its bug and is not charged for it again: the case passes, and says so
(``details["inherits"]``). Otherwise the case fails with the op's misconception, or, where
every op computes right from its operands, with the computation's own: a value that is right
with gradients that are not (``detached-data``: part of it went through ``.data``), or a
wrong value (``wrong-expression``).
"""

from __future__ import annotations

from grader.exercise.expression import ExpressionCase, reference_run, reference_value, result_name
from grader.exercise.targets import Target
from grader.judging.composition import fault
from grader.judging.judge import Tolerance, Verdict, close, received_error, shown

MAX_NODES = 5000  # nodes of a graph read: the child sends at most this many


def differences(options: dict, point: tuple[float, ...]) -> list[float]:
    """Each input's gradient by a central difference of the computation's value on the reference engine."""
    inputs = tuple(options["inputs"])
    found = []
    for i, x in enumerate(point):
        h = 1e-6 * max(1.0, abs(x))
        up = tuple(y + h * (i == j) for j, y in enumerate(point))
        down = tuple(y - h * (i == j) for j, y in enumerate(point))
        found.append((reference_value(options["code"], inputs, up, result_name(options))
                      - reference_value(options["code"], inputs, down, result_name(options))) / (2 * h))
    return found


def judge_expression(case: ExpressionCase, reply: dict, target: Target, tolerance: Tolerance) -> Verdict:
    """The verdict on the computation at ``case``'s inputs: its value, then every input's gradient."""
    if "error" in reply:
        return Verdict(case, error=received_error(reply["error"]))
    options = target.settings
    names = list(options["inputs"])
    value, exact = reference_run(options["code"], tuple(names), case.point, result_name(options))
    estimate = differences(options, case.point)
    grads, data, nodes = reply["grads"], reply["data"], reply["nodes"]
    if not isinstance(grads, list) or len(grads) != len(names) or not isinstance(nodes, list) or not nodes:
        raise ValueError("not a gradient for each input")
    verdict = Verdict(case, expected=dict(zip(names, exact)), actual={n: shown(g) for n, g in zip(names, grads)},
                      expected_data=value, actual_data=shown(data))
    verdict.forward_ok = close(data, value, tolerance.reference)
    verdict.grads_ok = all(close(g, e, tolerance.reference) for g, e in zip(grads, exact))
    verdict.fd_ok = all(close(g, e, tolerance.finite_difference) for g, e in zip(grads, estimate))
    if verdict.forward_ok and verdict.grads_ok:
        return verdict
    found = fault([node if valid(node, len(nodes)) else [None, None, None, [], False] for node in nodes[:MAX_NODES]])
    if found is not None and found.op in target.course and found.op != target.name:
        verdict.details = {"inherits": found.op, "code": found.code}
        verdict.forward_ok = verdict.grads_ok = verdict.fd_ok = True
    elif found is not None:
        verdict.details = {"fault": found.op, "code": found.code, "position": found.position}
    elif options.get("function"):  # every op right on its own: the learner's function is what is wrong
        verdict.details = {"code": "detached-data" if verdict.forward_ok else "wrong-expression"}
    else:  # the course's code on the class's ops alone, with no one op to show for it
        verdict.details = {"code": "wrong-forward" if not verdict.forward_ok else "wrong-local-grad"}
    return verdict


def valid(node: object, count: int) -> bool:
    """A node as the child must send it: value, gradient, label, operands (positions in the graph or None), and
    whether they are in order."""
    return (isinstance(node, list) and len(node) == 5 and (node[2] is None or isinstance(node[2], str))
            and isinstance(node[4], bool)
            and isinstance(node[3], list) and len(node[3]) <= count
            and all(c is None or (isinstance(c, int) and not isinstance(c, bool) and 0 <= c < count)
                    for c in node[3]))
