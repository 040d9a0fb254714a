"""A target's diagnoses: the codes its verdicts lead to, refined, worded, and pointed at a line."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from grader.diagnosis import (
    blame,
    engines,
    equality,
    expression,
    feedback,
    gradients,
    loops,
    members,
    modules,
    numeric,
    optimizers,
    rules,
    tensors,
    training,
)
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


# What a part the submission has nothing of needs (a course's Tensor or Linear that no file defines).
NOT_WRITTEN = "Write it where your course's notebook or files ask for it, with the name and arguments they give."

# The types of plain numbers, as an ``AttributeError`` names them: a train_step's own loss that is one.
NUMBER_TYPES = ("int", "float", "bool")


def refined(code: str, verdict: Verdict | None, kind: str) -> str:
    """A crash that is a module missing where micrograde runs, a training function asking the exercise's
    model for what it does not have (``p.zero_grad()``), or a training function whose loss is a plain number
    (computed from the targets alone, so ``loss.backward()`` has nothing to call), is said as such."""
    error = verdict.error if verdict is not None else None
    if code != "crash" or not error:
        return code
    if error.get("type") == "ModuleNotFoundError":
        return "missing-module"
    message = str(error.get("message", ""))
    if kind in ("train", "training") and error.get("type") == "AttributeError" and "object has no attribute" in message:
        return "wrong-loss" if message.startswith(tuple(f"'{t}' object" for t in NUMBER_TYPES)) else "interface"
    return code


def op_codes(target: Target, verdicts: list[Verdict], function: blame.Written | None) -> dict[str, Verdict]:
    """An op's codes: how kinds of its cases compare, and what its ``_backward`` visibly does."""
    return rules.diagnose_op(target.op_name, verdicts,
                             blame.attaches_backward(function.node, target.words) if function else None,
                             blame.overwrites_gradient(function.node, target.words) if function else None)


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


def tensor_target_codes(target: Target, verdicts: list[Verdict], function: blame.Written | None) -> dict[str, Verdict]:
    """A tensor op's codes: how its failing cases' shapes, operands and links differ from the passing ones'."""
    return tensors.tensor_codes(verdicts)


def estimate_target_codes(target: Target, verdicts: list[Verdict], function: blame.Written | None
                          ) -> dict[str, Verdict]:
    """A numerical estimate's codes: the difference it takes and its step, whether it follows the function."""
    return numeric.estimate_codes(verdicts, function.node if function else None)


def expression_target_codes(target: Target, verdicts: list[Verdict], function: blame.Written | None
                            ) -> dict[str, Verdict]:
    """A whole computation's codes: the op at fault, or the learner's own function."""
    return expression.expression_codes(verdicts)


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
    raised = blame.error_location(submission, verdict.error) if verdict is not None and verdict.error and \
        code not in blame.RAISED_AFTER_THE_FAULT else None
    function = blame.written(submission, target.role.key)
    return raised or loops.loop_location(function, code, verdict) or submission.location(target.role.key)


# The rules of each kind of target (``grader.exercise.kinds``): its verdicts, and the function as written,
# to the codes they show, each with the smallest verdict that shows it.
RULES: dict[str, Callable[[Target, list[Verdict], blame.Written | None], dict[str, Verdict]]] = {
    "op": op_codes,
    "backward": backward_codes,
    "train": train_codes,
    "gradient": gradient_target_codes,
    "tensor": tensor_target_codes,
    "numerical-gradient": estimate_target_codes,
    "numerical-derivative": estimate_target_codes,
    "expression": expression_target_codes,
    "module": module_target_codes,
    "optimizer": optimizer_target_codes,
    "graph": optimizer_target_codes,
    "training": training_target_codes,
}

# Kinds that word and point their diagnoses themselves (what they grade is not one method's statements): a
# code, its evidence and detail, the target, what the student wrote for it and the submission, to a diagnosis.
SAY: dict[str, Callable[[str, Verdict | None, str, Target, str, Submission], Diagnosis]] = {
    "numerical-gradient": numeric.value_diagnosis,
    "numerical-derivative": numeric.derivative_diagnosis,
    "expression": expression.expression_diagnosis,
}

# Where the diagnoses of a kind whose part is a class point (a method of it, found in the class): every other
# kind's point where ``blame.blame`` says.
LOCATE: dict[str, Callable[[str, Target, Verdict | None, Submission], Location | None]] = {
    "module": modules.module_location,
    "optimizer": optimizers.optimizer_location,
    "graph": optimizers.optimizer_location,
    "training": training_location,
}


def reflected_method(target: str) -> str | None:
    """The method Python calls for ``target`` with a plain number first (``__radd__`` for add)."""
    reflected = ops.reflection(target)
    return ops.OPS[reflected].method if reflected else None


def diagnose_target(target: Target, method: str, verdicts: list[Verdict], submission: Submission,
                    equality_seen: str | None, lost: WorkerLost | None = None,
                    running: Case | TrainCase | None = None, allowed: tuple[str, ...] = ()) -> list[Diagnosis]:
    """The diagnoses of one target (``method`` is what the student writes for it), each pointing at
    the statement most likely at fault. ``equality_seen`` is how the class compares nodes (see
    ``equality``); ``lost`` ended the target's child early, while it ran ``running``; ``allowed`` are the
    modules the course allows (one missing where micrograde runs is the course's to install)."""
    function = blame.written(submission, engines.part_method(submission, method, "wrong-local-grad"))
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
        if target.kind.name in SAY:
            said = SAY[target.kind.name](code, v, detail, target, method, submission)
            diagnoses.append(replace(said, message=target.words.speak(said.message)))
            continue
        # A tensor target that grades another op too (mul with rmul) names the failing case's own method.
        shown = tensors.case_method(method, v) if target.kind.name == "tensor" else engines.part_method(
            submission, method, code)
        locate = LOCATE.get(target.kind.name)
        where = locate(code, target, v, submission) if locate is not None else blame.blame(
            code, target.kind.name, target.op_name, shown, v, submission, reflected_method(target.op_name),
            target.words, target.given_code)
        note = ""
        if target.kind.name == "tensor":
            note = tensors.note(code, v)
        elif code == "wrong-loss" and v is not None and v.error:
            note = (f"The loss it computes is a plain number, not a node ({feedback.describe_error(v.error)}), so "
                    "no gradient can flow back from it to the parameters: compute it from the model's outputs.")
        elif code == "wrong-local-grad" and function is not None and (
                operand := blame.unreached_operand(function.node, v, target.op_name)) is not None:
            note = f"Nothing in its _backward adds to {operand}.grad, so {operand} gets no gradient from the result."
        elif target.kind.name == "gradient":
            note = gradients.note(code, v)
        elif target.kind.name == "module":
            note = modules.note(code, v)
        if code == "missing-zero-grad" and v is not None and v.train and not v.train["right_steps"][0]:
            # Beside a wrong update, whose case shows the first step: what shows the pile-up is the second.
            note = ("Beside the wrong update: the second step moved each parameter by the same multiple of both "
                    "steps' gradients as the first moved it by its own.")
            v = None
        if code == "wrong-loss":
            detail = RETURNED[target.settings.get("returns", "loss")]
        module = v.error.get("module") if code == "missing-module" and v is not None and v.error else None
        concept = feedback.allowed_but_missing(module) if module in allowed else None
        if code == "not-implemented" and where is None:
            concept = NOT_WRITTEN  # no stub to fill in: the submission has nothing of that name
        words = target.words.speak(feedback.message(code, target.op_name, v, focus, detail, note, concept,
                                                    method=shown))
        diagnoses.append(Diagnosis(code, target.name, words, where,
                                   feedback.counterexample(v, focus) if v is not None else None))
    return same_statement_once(diagnoses, found, submission)


def same_statement_once(diagnoses: list[Diagnosis], found: list[tuple[str, Verdict | None, str]],
                        submission: Submission) -> list[Diagnosis]:
    """``diagnoses`` without a ``constant-operand`` whose error was raised by the very statement another of them
    points at: one mistake (an update written for the wrong operand, which raises where that operand is a plain
    number's node) is one diagnosis."""
    blamed = {d.where for d in diagnoses if d.code != "constant-operand"}
    kept = []
    for diagnosis, (code, verdict, _) in zip(diagnoses, found):
        raised = blame.error_location(submission, verdict.error) if verdict is not None and verdict.error else None
        if code == "constant-operand" and raised is not None and raised in blamed:
            continue
        kept.append(diagnosis)
    return kept
