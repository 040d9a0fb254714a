"""Judging a whole computation: the learner's value and gradients against the reference engine's, and, when
they differ, where the fault is.

The reference side is the course's code on the reference engine (``reference_run``); the
second oracle, a central difference of that computation's value. When the learner's
numbers differ, the graph the child sent says whether one op of the learner's class is at
fault (``grader.judging.composition``). If that op is graded on its own in this course and the
graph, each node computed right as the op it reads as, gives the reference's numbers (the op
is its only fault), the computation inherits the op's bug: the case passes, and says so
(``details["inherits"]``), for as long as the same grade charges the op
(``grader.diagnosis.inheritance``). Otherwise the case fails with the op's misconception, or, where
every op computes right from its operands, with the computation's own: a value that is right
with gradients that are not (``detached-data``: part of it went through ``.data``), or a
wrong value (``wrong-expression``).
"""

from __future__ import annotations

from grader.exercise.expression import ExpressionCase, reference_run, reference_value, result_name
from grader.exercise.targets import Target
from grader.judging.composition import fault, recomputed
from grader.judging.judge import Tolerance, Verdict, close, received_error, shown

MAX_NODES = 5000  # nodes of a graph read: the child sends at most this many


def differences(options: dict, point: tuple[float, ...], functions: tuple[tuple[str, str], ...] = ()) -> list[float]:
    """Each input's gradient by a central difference of the computation's value on the reference engine."""
    inputs = tuple(options["inputs"])
    found = []
    for i, x in enumerate(point):
        h = 1e-6 * max(1.0, abs(x))
        up = tuple(y + h * (i == j) for j, y in enumerate(point))
        down = tuple(y - h * (i == j) for j, y in enumerate(point))
        found.append((reference_value(options["code"], inputs, up, result_name(options), functions)
                      - reference_value(options["code"], inputs, down, result_name(options), functions)) / (2 * h))
    return found


def judge_expression(case: ExpressionCase, reply: dict, target: Target, tolerance: Tolerance) -> Verdict:
    """The verdict on the computation at ``case``'s inputs: its value, then every input's gradient."""
    if "error" in reply:
        return Verdict(case, error=received_error(reply["error"]))
    options = target.settings
    names = list(options["inputs"])
    value, exact = reference_run(options["code"], tuple(names), case.point, result_name(options), case.functions)
    estimate = differences(options, case.point, case.functions)
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
    graph = [node if valid(node, len(nodes)) else [None, None, None, [], False] for node in nodes[:MAX_NODES]]
    given = reply.get("leaves")
    inputs = frozenset(p for p in given if isinstance(p, int)) if isinstance(given, list) else None
    found = fault(graph, inputs=inputs)
    if found is not None and found.op in target.course and found.op != target.name:
        if right_but_for_the_op(graph, reply.get("leaves"), case.point, value, exact, tolerance):
            # Right in itself: its points stand, if the same grade charges the op (``grader.diagnosis.inheritance``).
            charged = Verdict(case, expected=verdict.expected, actual=verdict.actual, expected_data=value,
                              actual_data=verdict.actual_data, details={"inherits": found.op, "code": found.code,
                                                                        "revoked": verdict})
            verdict.details = {"fault": found.op, "code": found.code, "position": found.position, "uncharged": True}
            return charged
        verdict.details = {"code": own_code(options, verdict)}
    elif found is not None:
        verdict.details = {"fault": found.op, "code": found.code, "position": found.position}
    else:
        verdict.details = {"code": own_code(options, verdict)}
    return verdict


def own_code(options: dict, verdict: Verdict) -> str:
    """The code of a computation wrong in itself: the learner's function's, or, for the course's code on the
    class's ops alone with no one op to show for it, the ops' as a whole."""
    if options.get("function"):  # every op right on its own (or not the whole story): the function is wrong
        return "detached-data" if verdict.forward_ok else "wrong-expression"
    return "wrong-forward" if not verdict.forward_ok else "wrong-local-grad"


def right_but_for_the_op(graph: list, leaves: object, point: tuple[float, ...], value: float,
                         exact: list[float], tolerance: Tolerance) -> bool:
    """Whether the learner's graph, every node computed right as the op it reads as (``recomputed``), from inputs
    that are the case's, gives the reference's value and gradients: then the op at fault is its only fault. A
    graph made to blame an op (a constant result beside a node of that op) does not."""
    if not isinstance(leaves, list) or len(leaves) != len(point):
        return False
    if any(not isinstance(p, int) or isinstance(p, bool) or not 0 <= p < len(graph) or graph[p][3]
           or not close(graph[p][0], x, tolerance.reference) for p, x in zip(leaves, point)):
        return False
    again = recomputed(graph, leaves)
    return again is not None and close(again[0], value, tolerance.reference) and all(
        close(g, e, tolerance.reference) for g, e in zip(again[1], exact))


def valid(node: object, count: int) -> bool:
    """A node as the child must send it: value, gradient, label, operands (positions in the graph or None), and
    whether they are in order."""
    return (isinstance(node, list) and len(node) == 5 and (node[2] is None or isinstance(node[2], str))
            and isinstance(node[4], bool)
            and isinstance(node[3], list) and len(node[3]) <= count
            and all(c is None or (isinstance(c, int) and not isinstance(c, bool) and 0 <= c < count)
                    for c in node[3]))
