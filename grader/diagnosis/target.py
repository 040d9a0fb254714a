"""A target's diagnoses: the codes its verdicts lead to, refined, worded, and pointed at a line."""

from __future__ import annotations

from grader.diagnosis import blame, equality, feedback, rules, training
from grader.exercise import ops
from grader.exercise.cases import Case, TrainCase
from grader.exercise.targets import Target
from grader.judging.judge import Verdict
from grader.report.model import Diagnosis
from grader.submission.source import Submission

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
    if target.kind == "op":
        codes = rules.diagnose_op(target.name, verdicts, blame.attaches_backward(function.node) if function else None,
                                  blame.overwrites_gradient(function.node) if function else None)
    elif target.kind == "backward":
        codes = rules.diagnose_backward(verdicts)
    else:
        codes = rules.diagnose_train(verdicts, training.train_shape(function.node if function else None))
    codes = equality.explain(equality_seen, codes, verdicts)
    found: list[tuple[str, Verdict | None, str]] = [(refined(code, v, target.kind), v, "")
                                                    for code, v in codes.items()]
    if lost is not None:
        code = "timeout" if lost.reason == "timeout" else "crash"
        detail = lost.detail
        if lost.reason == "timeout":
            detail += f" ({target.time_limit:g} s for this target; see --timeout)"
        if running is not None:
            detail += f"; on {feedback.describe_case(running)}"
        found.append((code, None, detail))
    focus = "grad" if target.kind == "backward" else "both"
    diagnoses = []
    for code, v, detail in found:
        where = blame.blame(code, target.kind, target.name, method, v, submission, reflected_method(target.name))
        note = ""
        if code == "wrong-local-grad" and function is not None and (
                operand := blame.unreached_operand(function.node, v, target.name)) is not None:
            note = f"Nothing in its _backward adds to {operand}.grad, so {operand} gets no gradient from the result."
        diagnoses.append(Diagnosis(code, target.name, feedback.message(code, target.name, v, focus, detail, note),
                                   line=where.line if where else None,
                                   file=where.file if where else None,
                                   cell=where.cell if where else None,
                                   counterexample=feedback.counterexample(v, focus) if v is not None else None))
    return diagnoses
