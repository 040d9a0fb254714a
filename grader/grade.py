"""Grading a submission: every check of every target, then the diagnoses.

Targets are graded one after another against one child process. A target
whose code hangs or kills its process loses that target's remaining checks;
the next target gets a fresh process, so one bad method never costs another.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from grader.child import ahead, launcher, sandbox
from grader.child.session import OPS, TRAIN, Session
from grader.child.worker import WorkerLost
from grader.diagnosis import equality, feedback, missing, rules
from grader.diagnosis.codes import UNUSABLE
from grader.diagnosis.submission import cheating, inferred_warning, load_diagnoses, merge_interface_problems
from grader.diagnosis.target import diagnose_target
from grader.exercise import config as course_config
from grader.exercise.cases import MODEL_INPUTS, MODEL_LAYERS, TRAIN_WEIGHTS, TRAIN_XS, TRAIN_YS, Check, TrainCase
from grader.exercise.config import Config
from grader.exercise.targets import Exercise, Target
from grader.judging.judge import (
    Tolerance,
    Verdict,
    judge_backward,
    judge_op,
    judge_train,
    judged,
    malformed,
)
from grader.judging.plan import plan_backward, plan_op
from grader.report.model import CheckResult, Diagnosis, Report
from grader.submission import shape
from grader.submission.errors import InputError
from grader.submission.siblings import read_as_run
from grader.submission.source import Submission


@dataclass(frozen=True)
class Options:
    """How to grade: the course configuration, and what the command line overrides in it."""

    config: Config | None = None  # None: the default exercise
    timeout: float | None = None  # seconds for loading and for each target, instead of the config's
    audience: str = "student"  # "student" reports withhold why a hidden check failed; "staff" ones show it
    # Where else a course configuration of the submission's may lie (the directory a course's CI grades
    # in), besides the submission's own: any found there is ignored, with a warning.
    around: tuple[Path, ...] = ()

    def exercise(self) -> Exercise:
        config = self.config or course_config.default()
        return Exercise(config if self.timeout is None else config.with_time_limit(self.timeout))


# What judging a reply the child sent may raise: that case fails as unreadable.
UNREADABLE = (TypeError, ValueError, KeyError, IndexError, AttributeError, ArithmeticError)


@functools.cache
def train_request(case: TrainCase) -> dict:
    """The child's request for a ``train_step`` case (made once a process, like every case's)."""
    return {"kind": "train", "needs": "train_step", "nin": MODEL_INPUTS, "nouts": list(MODEL_LAYERS),
            "weights": TRAIN_WEIGHTS, "xs": TRAIN_XS, "ys": TRAIN_YS, "lr": case.lr, "steps": case.steps}


class TargetRun:
    """Grades one target: its checks in order, until its code is lost."""

    def __init__(self, target: Target, session: Session, exercise: Exercise, checks: list[Check]):
        self.target = target
        self.session = session
        self.exercise = exercise
        self.checks = checks
        self.deadline = time.monotonic() + target.time_limit
        self.lost: WorkerLost | None = None
        self.running = None  # the case last sent to the child: the one it was on if it is lost
        config = exercise.config
        self.tolerance = Tolerance(config.reference_tolerance, config.difference_tolerance)
        self.graphs: set = set()  # every distinct expression the target was checked on

    def evaluate_many(self, cases: list, check: Check | None = None) -> list[Verdict]:
        """Verdicts on ``cases``, all sent to one child ahead of their replies: the child runs them
        in order while the earlier replies are judged (every case is one kind: train or not).
        Raises ``WorkerLost`` if the child is lost before the last one."""
        verdicts, lost = self._evaluate(cases, check)
        if lost is not None:
            raise lost
        return verdicts

    def answered(self, cases: list) -> list[Verdict]:
        """``evaluate_many`` for a search: if the child is lost, the verdicts of the cases it
        answered before (the loss is recorded, and ends the target's work once the search
        has ended with what it found)."""
        verdicts, lost = self._evaluate(cases, None)
        if lost is not None:
            self.lost = lost
            self.session.close()
        return verdicts

    def _evaluate(self, cases: list, check: Check | None) -> tuple[list[Verdict], WorkerLost | None]:
        verdicts: list[Verdict] = []
        if self.lost is not None:
            return verdicts, self.lost
        self.graphs.update(expr for case in cases for expr in getattr(case, "exprs", ()))
        prepared = [self.prepare(case, check) for case in cases]
        replies = self.session.call_many([p[0] for p in prepared if p is not None], self.deadline,
                                         TRAIN if any(isinstance(case, TrainCase) for case in cases) else OPS)
        for case, ready in zip(cases, prepared):
            self.running = case
            try:
                if ready is None:
                    raise ValueError("no request")
                request, judge, context = ready
                verdicts.append(judged(request, next(replies), judge, context))
            except UNREADABLE:
                # The child is not trusted: a reply that cannot be read is this case's failure.
                verdicts.append(malformed(case, "the reply could not be read"))
            except WorkerLost as lost:
                return verdicts, lost
        return verdicts, None

    def prepare(self, case, check: Check | None) -> tuple[dict, Callable[[dict], Verdict], tuple] | None:
        """The request for ``case``, what judges its reply, and what else that reads (see ``judged``);
        None if no request can be made."""
        context = (self.tolerance,)
        if isinstance(case, TrainCase):
            return train_request(case), lambda reply: judge_train(case, TRAIN_WEIGHTS, TRAIN_XS, TRAIN_YS, reply,
                                                                  self.tolerance), context
        try:
            if self.target.kind == "backward":
                return plan_backward(case), lambda reply: judge_backward(case, reply, self.tolerance), context
            plan = plan_op(case, self.target.name)
        except UNREADABLE:  # a case that cannot be planned (its ops undefined at its inputs)
            return None
        kink = check is not None and check.kink
        return plan.request, lambda reply: judge_op(case, reply, plan, self.tolerance, kink=kink), (*context, kink)

    def result(self, check: Check, status: str, message: str = "") -> CheckResult:
        return CheckResult(check.id, self.target.name, check.title, status, self.target.points_of(check),
                           message=message, hidden=check.id in self.target.hidden)

    def run_check(self, check: Check) -> tuple[CheckResult, list[Verdict]]:
        started = time.monotonic()
        result, verdicts = self.judge_check(check)
        result.seconds = time.monotonic() - started
        return result, verdicts

    def judge_check(self, check: Check) -> tuple[CheckResult, list[Verdict]]:
        result = self.result(check, "passed")
        if check.generated:
            from grader.search.engine import search
            from grader.search.generable import Space

            def judgeable(case) -> bool:
                return self.prepare(case, check) is not None

            verdicts = search(Space.of(self.target, self.exercise.generated_ops), self.answered, check.focus,
                              self.exercise.config.examples, judgeable)
            if self.lost is not None and not verdicts:
                raise self.lost  # lost before any failure: the check is lost with its child
        else:
            verdicts = self.evaluate_many(check.cases, check)
        for verdict in verdicts:
            verdict.check = check
        failing = [v for v in verdicts if not v.passed(check.focus)]
        if failing:
            worst = rules.smallest(failing)
            result.status = "error" if worst.error is not None else "failed"
            if worst.error is not None:
                result.message = " ".join(part for part in (feedback.describe_error(worst.error),
                                                            feedback.raising_case(worst)) if part)
            else:
                result.counterexample = feedback.counterexample(worst, check.focus)
                result.message = feedback.train_lead(worst) + feedback.explain_case(result.counterexample)
        return result, verdicts

    def run(self) -> tuple[list[CheckResult], list[Verdict]]:
        results, verdicts = [], []
        missing = None
        for check in self.checks:
            if self.lost is not None or missing is not None:
                status = "error" if missing else self.lost.status
                results.append(self.result(check, status, f"not run: {missing or self.lost.detail}"))
                continue
            try:
                result, found = self.run_check(check)
            except WorkerLost as lost:
                self.lost = lost
                self.session.close()
                results.append(self.result(check, lost.status, lost.detail))
                continue
            results.append(result)
            verdicts.extend(found)
            unusable = {v.error.get("type") for v in found if v.error} & set(UNUSABLE)
            if unusable:
                missing = UNUSABLE[min(unusable)].skipped
        return results, verdicts


def session_sandbox(session: Session) -> dict:
    return launcher.detect().to_json(session.confinement)


def grade(path: Path, options: Options | None = None, siblings: bool = True) -> Report:
    """Grade the submission at ``path``; ``InputError`` if there is nothing to grade. A single file
    takes what it needs from its folder unless ``siblings`` is false (``grader.submission.siblings``)."""
    options = options or Options()
    exercise = options.exercise()
    return grade_submission(read_as_run(path, exercise.config, siblings), options)


def refused(path: Path, options: Options, reason: str) -> Report:
    """The report of a submission refused before anything ran (too many files, too large, not a
    notebook...): a ``load-error`` saying why, and every check not run, so that a platform that
    shows the student a report (Gradescope, Classroom 50) shows them the reason."""
    exercise = options.exercise()
    report = Report(str(path), targets=list(exercise.names), config=exercise.config.to_json(),
                    audience=options.audience)
    report.diagnoses.append(Diagnosis("load-error", "submission",
                                      feedback.message("load-error", "submission", None, "both", reason,
                                                       concept=feedback.REFUSED)))
    report.checks.extend(CheckResult(c.id, target.name, c.title, "error", target.points_of(c),
                                     message=f"not run: {reason}", hidden=c.id in target.hidden)
                         for target in exercise.targets for c in target.checks)
    return report


def grade_submission(submission: Submission, options: Options | None = None) -> Report:
    options = options or Options()
    for source in dict.fromkeys(submission.providers.values()):
        if source.kind == "ipynb" and not source.units:
            raise InputError(f"{source.display}: the notebook has no code cells to grade")
    exercise = options.exercise()
    report = Report(str(submission.path), targets=list(exercise.names), config=exercise.config.to_json(),
                    audience=options.audience)
    renamed = shape.adopt_value_class(submission)
    if renamed:
        report.warnings.append(renamed)
    report.warnings.extend(note for source in dict.fromkeys(submission.providers.values()) for note in source.notes)
    own = submission.path if submission.path.is_dir() else submission.path.parent
    report.warnings.extend(course_config.ignored([own, *options.around], exercise.config))
    with ahead.workspace() as (workdir, started):
        session = Session(submission, workdir, exercise, started)
        try:
            session.open()
            blocked = load_diagnoses(submission, session, report)
            for target in exercise.targets:
                checks = list(target.checks)
                reason = blocked.get("train_step" if target.kind == "train" else "Value")
                if reason is not None:
                    report.checks.extend(CheckResult(c.id, target.name, c.title, "error", target.points_of(c),
                                                     message=f"not run: {reason}", hidden=c.id in target.hidden)
                                         for c in checks)
                    continue
                run = TargetRun(target, session, exercise, checks)
                results, verdicts = run.run()
                if run.graphs:
                    report.coverage[target.name] = {"graphs": len(run.graphs), "nodes": sum(map(len, run.graphs))}
                report.checks.extend(results)
                report.diagnoses.extend(diagnose_target(target, exercise.method(target.name), verdicts, submission,
                                                       session.equality, run.lost, run.running))
            if (named := inferred_warning(submission.names["Value"], session.inferred)) is not None:
                report.warnings.append(named)
            merge_interface_problems(report, submission.location("__init__"))
            missing.explain_missing(report, submission, exercise)
            equality.describe(report, submission, session.equality)
            report.output = session.output()
            if session.truncated:
                report.warnings.append("the submission printed more than the report keeps; the rest was dropped")
            cheating(submission, session, report)
            report.sandbox = session_sandbox(session)
            if (warning := sandbox.not_tamper_proof(report.sandbox)) is not None:
                report.warnings.append(warning)
        finally:
            session.close()
    return report
