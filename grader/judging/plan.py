"""What the child is asked to build for one case, and what only the grader knows about it.

Only the nodes of the op under test are built by the student's code. Every
other node is a *fixed* node: a node of the student's class whose value and
local derivatives are numbers the grading process computed for this very
case, not rules. So the child holds nothing that could compute a student's
target (no reference engine, no derivative rules), and a node the student did
not write cannot be passed off as one they did. The finite-difference oracle
is computed here too: the child only evaluates the student's op at operand
values nudged by ``h`` (the probes), and the chain rule over the expression
is done by the grading process.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

from grader.exercise import ops
from grader.exercise.cases import Case
from grader.exercise.expr import Expr, exponent, forward_values, operands


def step(x: float) -> float:
    """The finite-difference step for an input ``x``."""
    return 1e-5 * max(1.0, abs(x))


@dataclass
class OpPlan:
    """An op case as sent to the child, with what is needed to read the reply."""

    request: dict
    values: list[float]  # every node's value by the ops' rules, computed here
    student: list[int]  # the nodes the student's op builds
    probes: list[tuple[int, int, float]] = field(default_factory=list)  # (node, operand position, h)


def student_node(node: tuple) -> list:
    spec = ops.OPS[node[0]]
    return ["student", spec.call, list(operands(node)), exponent(node), spec.method,
            1 if spec.number_first else 0]


def wire_nodes(expr: Expr, values: list[float], target: str | None) -> list[list]:
    """The request's nodes: leaves, plain numbers, the student's op, and fixed nodes."""
    wired: list[list] = []
    for i, node in enumerate(expr):
        if node[0] == "leaf":
            wired.append(["leaf", values[i], node[1]])
        elif node[0] == "const":
            wired.append(["const", node[1]])
        elif node[0] == target:
            wired.append(student_node(node))
        else:
            # A fixed node carries the op it stands for too: an engine that cannot take micrograde's nodes into
            # its own backward pass (a tape of its own) builds it with that op instead.
            wired.append(["fixed", values[i], list(operands(node)),
                          list(ops.local_derivatives(node, values)), ops.OPS[node[0]].label, student_node(node)])
    return wired


@functools.lru_cache(maxsize=4096)  # a pure function of the case; callers never change a plan
def plan_op(case: Case, target: str) -> OpPlan:
    """The child's request for one op case: build it, backpropagate, and probe the student's nodes."""
    expr = case.expr
    values = forward_values(expr, case.values)
    if values is None:
        raise ValueError(f"{case.label}: the ops are undefined at these inputs")
    student = [i for i, node in enumerate(expr) if node[0] == target]
    plan = OpPlan({}, values, student)
    probes = []
    for i in student:
        node = expr[i]
        args = [["value" if expr[j][0] != "const" else "number", values[j]] for j in operands(node)]
        for position, (kind, x) in enumerate(args):
            if kind != "value":
                continue
            h = step(x)
            for shifted in (x + h, x - h):
                nudged = [list(a) for a in args]
                nudged[position][1] = shifted
                probes.append([student_node(node), nudged])
            plan.probes.append((i, position, h))
    plan.request = {"kind": "op", "nodes": wire_nodes(expr, values, target), "probes": probes}
    return plan


@functools.lru_cache(maxsize=1024)
def plan_backward(case: Case) -> dict:
    """The child's request for a backward case: every node fixed, the student's ``backward()`` on each root."""
    exprs = []
    for expr in case.exprs:
        values = forward_values(expr, case.values)
        if values is None:
            raise ValueError(f"{case.label}: the ops are undefined at these inputs")
        exprs.append(wire_nodes(expr, values, None))
    return {"kind": "backward", "exprs": exprs}
