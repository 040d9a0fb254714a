"""Grading a submission: every check of every target, then the diagnoses.

Targets are graded one after another against one child process. A target
whose code hangs or kills its process loses that target's remaining checks;
the next target gets a fresh process, so one bad method never costs another.
"""

from __future__ import annotations

import functools
import random
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from grader.child import launcher, sandbox
from grader.child.session import Session
from grader.child.worker import WorkerLost
from grader.diagnosis import blame, equality, feedback, missing, rules
from grader.exercise import config as course_config
from grader.exercise import ops
from grader.exercise.cases import Check, TrainCase
from grader.exercise.config import Config
from grader.exercise.targets import Exercise, Target
from grader.judging.judge import (
    MODEL_INPUTS,
    MODEL_LAYERS,
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
from grader.submission.notebook import SKIP_TAG, first_line
from grader.submission.source import Location, Submission, read_submission

TRAIN_XS = [[2.0, 3.0, -1.0], [3.0, -1.0, 0.5], [0.5, 1.0, 1.0], [1.0, 1.0, -1.0]]
TRAIN_YS = [1.0, -1.0, -1.0, 1.0]
TRAIN_WEIGHTS = [round(w, 6) for w in (random.Random(2024 + i).uniform(-1, 1) for i in range(41))]


@dataclass(frozen=True)
class Options:
    """How to grade: the course configuration, and what the command line overrides in it."""

    config: Config | None = None  # None: the default exercise
    timeout: float | None = None  # seconds for loading and for each target, instead of the config's
    audience: str = "student"  # "staff" also runs and reports the checks hidden from students

    def exercise(self) -> Exercise:
        config = self.config or course_config.default()
        return Exercise(config if self.timeout is None else config.with_time_limit(self.timeout))


# Errors after which no further check of the target can tell anything, and what the skipped ones say.
UNUSABLE_REASONS = {"NotImplementedError": "not implemented", "InterfaceError": "no nodes can be made",
                    "ComputedAttribute": "gradients are computed when read"}


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
                                         training=any(isinstance(case, TrainCase) for case in cases))
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

            target, roots = (self.target.name, 1) if self.target.kind == "op" else (None, 2)
            ops = self.exercise.generated_ops

            def strategy():  # Hypothesis is imported only if the search has to run it
                from grader.search.strategies import expressions

                return expressions(target, roots=roots, ops=ops)

            verdicts = search(strategy, self.answered, check.focus, self.exercise.config.examples,
                              key=f"{target}:{roots}:{','.join(ops)}", target=target)
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
                result.message = feedback.explain_case(result.counterexample)
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
            unusable = {v.error.get("type") for v in found if v.error} & set(UNUSABLE_REASONS)
            if unusable:
                missing = UNUSABLE_REASONS[min(unusable)]
        return results, verdicts


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
    return next((op.method for op in ops.OPS.values() if op.number_first and op.uses == (target,)), None)


def diagnoses_for(run: TargetRun, verdicts: list[Verdict], submission: Submission) -> list[Diagnosis]:
    """The target's diagnoses, each pointing at the statement most likely at fault."""
    target = run.target
    method = run.exercise.method(target.name)
    function = blame.written(submission, method)
    if target.kind == "op":
        codes = rules.diagnose_op(target.name, verdicts, blame.attaches_backward(function.node) if function else None)
    elif target.kind == "backward":
        codes = rules.diagnose_backward(verdicts)
    else:
        codes = rules.diagnose_train(verdicts, blame.train_shape(function.node if function else None))
    codes = equality.explain(run.session.equality, codes, verdicts)
    found: list[tuple[str, Verdict | None, str]] = [(refined(code, v, target.kind), v, "")
                                                    for code, v in codes.items()]
    if run.lost is not None:
        code = "timeout" if run.lost.reason == "timeout" else "crash"
        detail = run.lost.detail
        if run.lost.reason == "timeout":
            detail += f" ({target.time_limit:g} s for this target; see --timeout)"
        if run.running is not None:
            detail += f"; on {feedback.describe_case(run.running)}"
        found.append((code, None, detail))
    focus = "grad" if target.kind == "backward" else "both"
    diagnoses = []
    for code, v, detail in found:
        where = blame.blame(code, target.kind, target.name, method, v, submission, reflected_method(target.name))
        diagnoses.append(Diagnosis(code, target.name, feedback.message(code, target.name, v, focus, detail),
                                   line=where.line if where else None,
                                   file=where.file if where else None,
                                   cell=where.cell if where else None,
                                   counterexample=feedback.counterexample(v, focus) if v is not None else None))
    return diagnoses


def cell_warning(submission: Submission, failure: dict) -> str:
    """A notebook cell that raised: its number, its first line, and the error (not a lost point)."""
    cell = failure["unit"]
    first = next((first_line(unit.source) for source in submission.files for unit in source.units
                  if unit.filename == failure.get("unit_file")), "")
    error = {**failure, "line": None}
    return f"cell {cell} (`{first[:60]}`) raised {feedback.describe_error(error)}"


def exit_warning(failure: dict) -> str:
    """A file that called ``sys.exit()`` while loading: it stopped there, and what it defined is graded."""
    where = failure.get("unit_file") or "the submission"
    if isinstance(failure.get("line"), int):
        where += f", line {failure['line']}"
    return (f"{where} called sys.exit({failure.get('message', '')}) while loading: the code after it did not run, "
            "as when running the file; what was defined before it is graded")


def load_diagnoses(submission: Submission, session: Session, report: Report) -> dict[str, str]:
    """Record load-level problems; return, for ``Value`` and ``train_step``, why they could not be loaded."""
    blocked: dict[str, str] = {}

    def problem(code: str, detail: str, line: int | None = None, file: str | None = None) -> None:
        report.diagnoses.append(Diagnosis(code, "submission",
                                          feedback.message(code, "submission", None, "both", detail),
                                          line=line, file=file))

    for detail, location in submission.load_problems():
        problem("load-error", detail, location.line, location.file)
        for name, source in submission.providers.items():
            if source.display == location.file:
                blocked[name] = f"{location.describe()} did not load"
    if session.load_lost is not None:
        lost = session.load_lost
        if lost.reason == "timeout":
            where = shape.top_level_work(submission)
            report.diagnoses.append(load_timeout(where, session.exercise.config.load_time_limit))
        else:
            problem("load-error", f"while loading, {lost.detail}")
        return {name: "the submission did not load" for name in ("Value", "train_step")}
    for module in session.missing_modules:
        report.warnings.append(f"{module[:80]} is not installed where micrograde runs: the submission was graded "
                               f"without it, and only code that uses it fails (as missing-module)")
    for failure in session.failures:
        if failure.get("type") == "LoadTimeout":
            where = shape.statement_at(submission, failure.get("unit_file"), failure.get("line"))
            where = where or shape.top_level_work(submission)
            report.diagnoses.append(load_timeout(where, session.exercise.config.load_time_limit))
            return {name: "the submission did not load in time" for name in ("Value", "train_step")}
        if failure.get("exit") is True:
            report.warnings.append(exit_warning(failure))
            for name in ("Value", "train_step"):
                if not session.defined.get(name):
                    blocked.setdefault(name, "the submission called sys.exit() before defining it")
            continue
        if failure.get("unit") is not None:
            report.warnings.append(cell_warning(submission, failure))
            continue
        line, file = failure.get("line"), failure.get("file")
        problem("load-error", feedback.describe_error(failure), line if isinstance(line, int) else None,
                file if isinstance(file, str) else None)
        for name in ("Value", "train_step"):
            if not session.defined.get(name):
                blocked.setdefault(name, "the submission stopped with an error before defining it")
    return blocked


def load_timeout(where: Location | None, seconds: float) -> Diagnosis:
    """Module-level code that outlived the load limit: where it runs, and what to do about it."""
    place = f"the code at {where.describe()}" if where else "code at the top level"
    if where is not None and where.cell is not None:
        advice = f"tag that cell {SKIP_TAG} (Jupyter: View > Cell Toolbar > Tags) so the grader leaves it out"
    else:
        advice = 'put demo and training code under if __name__ == "__main__": so it runs only when you run the file'
    detail = f"{place} was still running after {seconds:g} s; {advice}"
    return Diagnosis("load-timeout", "submission", feedback.message("load-timeout", "submission", None, "both",
                                                                    detail),
                     where.line if where else None, where.file if where else None, where.cell if where else None)


def cheating(submission: Submission, session: Session, report: Report) -> None:
    """One ``forbidden-import`` for any use of an autograd library or of the grader, seen or attempted."""
    static = submission.forbidden_imports()
    evidence = [f"imports {name}" for name, _ in static]
    evidence += [f"tried to {what}" for what in session.violations
                 if not any(what == f"import {name}" for name, _ in static)]
    if not evidence:
        return
    location = static[0][1] if static else None
    report.diagnoses.append(Diagnosis(
        "forbidden-import", "submission",
        feedback.message("forbidden-import", "submission", None, "both", "; ".join(dict.fromkeys(evidence[:5]))),
        line=location.line if location else None, file=location.file if location else None,
        cell=location.cell if location else None))


def merge_interface_problems(report: Report, constructor: Location | None) -> None:
    """A class the grader cannot make nodes of is one problem of the submission, said once and
    pointed at its constructor, not a failure of every method in turn."""
    found = [d for d in report.diagnoses if d.code == "interface" and d.target != "train_step"]
    if found:
        report.diagnoses = [d for d in report.diagnoses if d not in found]
        where = constructor or Location(found[0].file or "", found[0].line, found[0].cell)
        report.diagnoses.insert(0, Diagnosis("interface", "submission", found[0].message,
                                             where.line, where.file or None, where.cell))


def session_sandbox(session: Session) -> dict:
    return launcher.detect().to_json(session.confinement)


def grade(path: Path, options: Options | None = None) -> Report:
    """Grade the submission at ``path``; ``InputError`` if there is nothing to grade."""
    options = options or Options()
    exercise = options.exercise()
    return grade_submission(read_submission(path, exercise.config), options)


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
    with tempfile.TemporaryDirectory(prefix="micrograde-", ignore_cleanup_errors=True) as tmp:
        session = Session(submission, Path(tmp), exercise)
        try:
            session.open()
            blocked = load_diagnoses(submission, session, report)
            for target in exercise.targets:
                checks = [c for c in target.checks if options.audience == "staff" or c.id not in target.hidden]
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
                report.diagnoses.extend(diagnoses_for(run, verdicts, submission))
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
