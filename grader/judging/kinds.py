"""How each kind of target (``grader.exercise.kinds``) asks the child about a case, and judges the reply.

``PREPARE`` has one entry per kind: given a case, the target and its check, it
returns the request the child answers (its handler is the kind's ``request``),
the function that turns the reply into a ``Verdict``, and whatever else that
function reads (so that a verdict can be reused for the same request, reply and
context: ``judged``). A case that cannot be asked about at all (its ops undefined
at its inputs) raises one of ``UNREADABLE``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

from grader.exercise import numeric, ops
from grader.exercise.cases import MODEL_INPUTS, MODEL_LAYERS, TRAIN_WEIGHTS, TRAIN_XS, TRAIN_YS, Case, Check, TrainCase
from grader.exercise.expression import ExpressionCase, learner_code, result_name
from grader.exercise.formula import parse
from grader.exercise.gradients import PointCase, formula_of
from grader.exercise.kinds import KINDS
from grader.exercise.loops import LoopCase
from grader.exercise.modules import ModuleCase
from grader.exercise.numeric import EstimateCase
from grader.exercise.optimizers import StepCase
from grader.exercise.targets import Target
from grader.exercise.tensorcases import values_given
from grader.exercise.tensors import TensorCase
from grader.judging.conventions import judge_backward_accepting
from grader.judging.expression import judge_expression
from grader.judging.gradients import judge_gradient
from grader.judging.judge import Tolerance, Verdict, judge_op
from grader.judging.loops import judge_loop, loop_request
from grader.judging.modules import judge_module, module_request
from grader.judging.numeric import judge_estimate
from grader.judging.optimizers import graph_request, judge_optimizer, optimizer_request
from grader.judging.plan import plan_backward, plan_op
from grader.judging.tensors import judge_tensor, tensor_request
from grader.judging.training import judge_train

# What planning a case, or judging a reply the child sent, may raise: the case fails as unreadable.
UNREADABLE = (TypeError, ValueError, KeyError, IndexError, AttributeError, ArithmeticError)


@dataclass(frozen=True)
class Prepared:
    """A case as the child is asked it, and how its reply is judged."""

    request: dict
    judge: Callable[[dict], Verdict]
    context: tuple  # what ``judge`` reads besides the reply (see ``grader.judging.judge.judged``)


def prepare_op(case: Case, target: Target, check: Check | None, tolerance: Tolerance) -> Prepared:
    plan = plan_op(case, target.op_name)
    kink = check is not None and check.kink
    focus = check.focus if check is not None else "both"
    return Prepared(plan.request, lambda reply: judge_op(case, reply, plan, tolerance, kink=kink, focus=focus),
                    (tolerance, kink, focus))


def prepare_backward(case: Case, target: Target, check: Check | None, tolerance: Tolerance) -> Prepared:
    accept = target.settings.get("accept", ())
    return Prepared(plan_backward(case), lambda reply: judge_backward_accepting(case, reply, tolerance, accept),
                    (tolerance, accept))


@functools.cache
def train_request(case: TrainCase) -> dict:
    """The child's request for a training case (made once a process, like every case's)."""
    kind = KINDS["train"]
    return {"kind": kind.request, "needs": kind.role.key, "nin": MODEL_INPUTS, "nouts": list(MODEL_LAYERS),
            "weights": TRAIN_WEIGHTS, "xs": TRAIN_XS, "ys": TRAIN_YS, "lr": case.lr, "steps": case.steps}


def prepare_train(case: TrainCase, target: Target, check: Check | None, tolerance: Tolerance) -> Prepared:
    return Prepared(train_request(case),
                    lambda reply: judge_train(case, TRAIN_WEIGHTS, TRAIN_XS, TRAIN_YS, reply, tolerance), (tolerance,))


@functools.cache
def call_request(case: PointCase, kind: str, needs: str) -> dict:
    """The child's request to call the function ``needs`` at ``case``'s point (made once a process)."""
    return {"kind": kind, "needs": needs, "args": list(case.point)}


def prepare_gradient(case: PointCase, target: Target, check: Check | None, tolerance: Tolerance) -> Prepared:
    request = call_request(case, target.kind.request, target.role.key)
    formula = formula_of(target.settings)
    return Prepared(request, lambda reply: judge_gradient(case, reply, formula, tolerance), (tolerance,))


def prepare_tensor(case: TensorCase, target: Target, check: Check | None, tolerance: Tolerance) -> Prepared:
    settings = target.settings
    request = tensor_request(case, target.role.key, values_given(settings), settings.get("gradients", "entries"))
    return Prepared(request, lambda reply: judge_tensor(case, reply, tolerance), (tolerance,))


@functools.cache
def estimate_request(case: EstimateCase, kind: str, needs: str) -> dict:
    """The child's request for a numerical estimate: a function called with the grader's ``f``, or a value's
    code run again with it (made once a process)."""
    asked = {"kind": kind, "needs": needs, "inputs": list(case.names), "formula": case.formula}
    if case.argument is not None:
        from grader.exercise.calls import parse as parse_call

        call = parse_call(case.call, numeric.CALL_NAMES)
        return {**asked, "point": list(case.point), "i": case.argument, "h": case.step, "call": call.as_request()}
    if case.arguments:
        return {**asked, "x": case.point[0], "h": case.step, "arguments": list(case.arguments)}
    own = {"own": [list(p) for p in numeric.own_points(case.point)]} if not case.variant else {}
    return {**asked, "value": case.part, "calls": case.calls, **own}


def prepare_estimate(case: EstimateCase, target: Target, check: Check | None, tolerance: Tolerance) -> Prepared:
    request = estimate_request(case, target.kind.request, target.role.key)
    formula = parse(case.formula, case.names)
    method = numeric.method(target.settings)
    # Given a step, a function's accuracy is that step's; with its own (a value's, or a function not given one),
    # the course's tolerance, as the course's check applies it: on the course's function, at the course's point.
    accuracy = None if case.step is not None else numeric.tolerance(target.settings)
    course = (parse(target.settings["of"], case.names), numeric.course_point(target.settings)) \
        if case.variant and accuracy is not None else None
    return Prepared(request, lambda reply: judge_estimate(case, reply, formula, method, accuracy, tolerance, course),
                    (tolerance, method, accuracy, course is not None))


@functools.cache
def expression_request(case: ExpressionCase, kind: str, needs: str, options: tuple, own_pass: bool = False) -> dict:
    """The child's request for a whole computation at ``case``'s inputs (made once a process); with ``own_pass``
    (the course grades ``backward`` as a target of its own), its gradients by micrograde's own backward pass, so
    that a fault of the learner's pass is charged there, not here."""
    settings = dict(options)
    return {"kind": kind, "needs": needs, "code": learner_code(settings), "inputs": list(settings["inputs"]),
            "at": list(case.point), "result": result_name(settings), "function": settings.get("function"),
            "own_pass": own_pass, "tags": op_tags(case.functions)}


@functools.cache
def op_tags(functions: tuple[tuple[str, str], ...]) -> dict[str, dict[str, str]]:
    """What the child tags each node of a computation with, by what made it (the op's name, never its rule): the
    class's methods of every op, and the engine's functions that apply one (``Words.functions``)."""
    return {"methods": {op.method: name for name, op in ops.OPS.items() if not op.number_first},
            "functions": dict(functions)}


def prepare_expression(case: ExpressionCase, target: Target, check: Check | None, tolerance: Tolerance
                       ) -> Prepared:
    request = expression_request(case, target.kind.request, target.role.key, target.options,
                                 "backward" in target.course)
    return Prepared(request, lambda reply: judge_expression(case, reply, target, tolerance),
                    (tolerance, target.options, target.course))


def prepare_module(case: ModuleCase, target: Target, check: Check | None, tolerance: Tolerance) -> Prepared:
    request = module_request(case, target.kind.request, target.role.key, target.options)
    return Prepared(request, lambda reply: judge_module(case, reply, tolerance), (tolerance,))


def prepare_optimizer(case: StepCase, target: Target, check: Check | None, tolerance: Tolerance) -> Prepared:
    request = optimizer_request(case, target.kind.request, target.role.key)
    return Prepared(request, lambda reply: judge_optimizer(case, reply, tolerance), (tolerance,))


def prepare_graph(case: StepCase, target: Target, check: Check | None, tolerance: Tolerance) -> Prepared:
    request = graph_request(case, target.kind.request, target.role.key)
    return Prepared(request, lambda reply: judge_optimizer(case, reply, tolerance), (tolerance,))


def prepare_loop(case: LoopCase, target: Target, check: Check | None, tolerance: Tolerance) -> Prepared:
    request = loop_request(case, target.kind.request, target.role.key)
    return Prepared(request, lambda reply: judge_loop(case, reply, tolerance), (tolerance,))


PREPARE: dict[str, Callable[[Case | TrainCase | PointCase | TensorCase | EstimateCase | ExpressionCase | ModuleCase
                              | StepCase | LoopCase, Target, Check | None, Tolerance], Prepared]] = {
    "op": prepare_op,
    "backward": prepare_backward,
    "train": prepare_train,
    "gradient": prepare_gradient,
    "tensor": prepare_tensor,
    "numerical-gradient": prepare_estimate,
    "numerical-derivative": prepare_estimate,
    "expression": prepare_expression,
    "module": prepare_module,
    "optimizer": prepare_optimizer,
    "graph": prepare_graph,
    "training": prepare_loop,
}
