"""A target's diagnoses: the codes its verdicts lead to, refined, worded, and pointed at a line."""

from __future__ import annotations

from collections.abc import Callable

from grader.diagnosis import blame, equality, feedback, gradients, loops, members, modules, optimizers, rules, training
from grader.diagnosis.findings import Diagnosis
from grader.exercise import ops
from grader.exercise.cases import Case, TrainCase
from grader.exercise.loops import RETURNED
from grader.exercise.targets import Target
from grader.judging.judge import Verdict
from grader.submission.source import Location, Submission

TYPE_CHECKING = False  # as in grader/__init__.py
if TYPE_CHECKING:
    from grader.child.worker import WorkerLost


def refined(code: str, verdict: Verdict | None, kind: str) -> str:
    """A crash that is a module missing where micrograde runs, or a train_step asking the exercise's
    model for what it does not have (``p.zero_grad()``), is said as such."""
    error = verdict.error if verdict is not None else None
    if code != "crash" or not error:
        return code
    if error.get("type") == "ModuleNotFoundError":
        return "missing-module"
    if kind == "train" and error.get("type") == "AttributeError" and "object has no attribute" in str(
            error.get("message", "")):
        return "interface"
    return code


def op_codes(target: Target, verdicts: list[Verdict], function: blame.Written | None) -> dict[str, Verdict]:
    """An op's codes: how kinds of its cases compare, and what its ``_backward`` visibly does."""
    return rules.diagnose_op(target.name, verdicts, blame.attaches_backward(function.node) if function else None,
                             blame.overwrites_gradient(function.node) if function else None)


def backward_codes(target: Target, verdicts: list[Verdict], function: blame.Written | None) -> dict[str, Verdict]:
    """``backward``'s codes: what the order of the nodes' ``_backward`` runs shows."""
    return rules.diagnose_backward(verdicts)


def train_codes(target: Target, verdicts: list[Verdict], function: blame.Written | None) -> dict[str, Verdict]:
    """A training function's codes: how parameters and losses moved, and what the function visibly does."""
    return rules.diagnose_train(verdicts, training.train_shape(function.node if function else None))


def gradient_target_codes(target: Target, verdicts: list[Verdict], function: blame.Written | None
                          ) -> dict[str, Verdict]:
    """A hand-derived gradient's codes: whether it follows the course's function from point to point."""
    return gradients.gradient_codes(verdicts)


def module_target_codes(target: Target, verdicts: list[Verdict], function: blame.Written | None
                        ) -> dict[str, Verdict]:
    """A module's codes: its parameters, its outputs and gradients, its ``zero_grad``, read together."""
    return modules.module_codes(verdicts)


def optimizer_target_codes(target: Target, verdicts: list[Verdict], function: blame.Written | None
                           ) -> dict[str, Verdict]:
    """An optimizer's codes: what each call of its method did to the data and the gradients."""
    return optimizers.optimizer_codes(verdicts)


def training_target_codes(target: Target, verdicts: list[Verdict], function: blame.Written | None
                          ) -> dict[str, Verdict]:
    """A training function's codes: as ``train_step``'s, from its steps and what it visibly calls."""
    return rules.diagnose_train(verdicts, loops.loop_shape(function.node if function else None, verdicts))


def training_location(code: str, target: Target, verdict: Verdict | None, submission: Submission) -> Location | None:
    """Where a training function's diagnosis points: where a stub wants its code, the line its error names, else
    the statement at fault."""
    if code == "not-implemented" and (stub := members.first_stub(members.find_function(submission, target.role.key))):
        return stub
    raised = blame.error_location(submission, verdict.error) if verdict is not None and verdict.error else None
    function = blame.written(submission, target.role.key)
    return raised or loops.loop_location(function, code, verdict) or submission.location(target.role.key)


# The rules of each kind of target (``grader.exercise.kinds``): its verdicts, and the function as written,
# to the codes they show, each with the smallest verdict that shows it.
RULES: dict[str, Callable[[Target, list[Verdict], blame.Written | None], dict[str, Verdict]]] = {
    "op": op_codes,
    "backward": backward_codes,
    "train": train_codes,
    "gradient": gradient_target_codes,
    "module": module_target_codes,
    "optimizer": optimizer_target_codes,
    "training": training_target_codes,
}

# Where the diagnoses of a kind whose part is a class point (a method of it, found in the class): every other
# kind's point where ``blame.blame`` says.
LOCATE: dict[str, Callable[[str, Target, Verdict | None, Submission], Location | None]] = {
    "module": modules.module_location,
    "optimizer": optimizers.optimizer_location,
    "training": training_location,
}


def reflected_method(target: str) -> str | None:
    """The method Python calls for ``target`` with a plain number first (``__radd__`` for add)."""
    reflected = ops.reflection(target)
    return ops.OPS[reflected].method if reflected else None


def diagnose_target(target: Target, method: str, verdicts: list[Verdict], submission: Submission,
                    equality_seen: str | None, lost: WorkerLost | None = None,
                    running: Case | TrainCase | None = None) -> list[Diagnosis]:
    """The diagnoses of one target (``method`` is what the student writes for it), each pointing at
    the statement most likely at fault. ``equality_seen`` is how the class compares nodes (see
    ``equality``); ``lost`` ended the target's child early, while it ran ``running``."""
    function = blame.written(submission, method)
    codes = equality.explain(equality_seen, RULES[target.kind.name](target, verdicts, function), verdicts)
    found: list[tuple[str, Verdict | None, str]] = [(refined(code, v, target.kind.name), v, "")
                                                    for code, v in codes.items()]
    if lost is not None:
        code = "timeout" if lost.reason == "timeout" else "crash"
        detail = lost.detail
        if lost.reason == "timeout":
            detail += f" ({target.time_limit:g} s for this target; see --timeout)"
        if running is not None:
            detail += f"; on {feedback.describe_case(running)}"
        found.append((code, None, detail))
    focus = target.kind.focus
    diagnoses = []
    for code, v, detail in found:
        locate = LOCATE.get(target.kind.name)
        where = locate(code, target, v, submission) if locate is not None else blame.blame(
            code, target.kind.name, target.name, method, v, submission, reflected_method(target.name))
        note = ""
        if code == "wrong-local-grad" and function is not None and (
                operand := blame.unreached_operand(function.node, v, target.name)) is not None:
            note = f"Nothing in its _backward adds to {operand}.grad, so {operand} gets no gradient from the result."
        elif target.kind.name == "gradient":
            note = gradients.note(code, v)
        elif target.kind.name == "module":
            note = modules.note(code, v)
        if code == "wrong-loss":
            detail = RETURNED[target.settings.get("returns", "loss")]
        words = feedback.message(code, target.name, v, focus, detail, note, method=method)
        diagnoses.append(Diagnosis(code, target.name, words, where,
                                   feedback.counterexample(v, focus) if v is not None else None))
    return diagnoses
