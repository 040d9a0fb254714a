"""Grading a submission: every check of every target, then the diagnoses.

Targets are graded one after another against one child process. A target
whose code hangs or kills its process loses that target's remaining checks;
the next target gets a fresh process, so one bad method never costs another.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import grader.staging as staging
from grader.child import ahead, launcher, sandbox
from grader.child.session import Observed, Session
from grader.child.worker import WorkerLost
from grader.course import said
from grader.diagnosis import feedback, inheritance, rules
from grader.diagnosis.codes import UNUSABLE
from grader.diagnosis.diagnose import diagnose
from grader.diagnosis.findings import CheckResult, Diagnosis, Findings, TargetOutcome
from grader.diagnosis.submission import LoadFindings, read_load
from grader.diagnosis.ungraded import Ungraded, read_by, ungraded
from grader.errors import InputError, MissingDependency
from grader.exercise import config as course_config
from grader.exercise.cases import Check
from grader.exercise.config import Config
from grader.exercise.targets import Exercise, Target
from grader.judging.judge import (
    Tolerance,
    Verdict,
    judged,
    malformed,
)
from grader.judging.kinds import PREPARE, UNREADABLE, Prepared
from grader.report.model import Report
from grader.submission import broken
from grader.submission.cells import cut, others
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
        """The exercise to grade; ``MissingDependency`` if its targets need a module this machine lacks."""
        config = self.config or course_config.default()
        exercise = Exercise(config if self.timeout is None else config.with_time_limit(self.timeout))
        for module, targets in exercise.missing_modules().items():
            kind = exercise.target(targets[0]).kind.name  # the extra that installs what a kind needs is its name
            raise MissingDependency(
                f"the {kind} targets ({', '.join(targets)}) need {module}, which is not installed where micrograde "
                f"runs: install it with `python -m pip install {module}` (micrograde's {kind} extra has it: "
                f"`python -m pip install 'micrograde[{kind}]'`)")
        return exercise


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
        replies = self.session.call_many([p.request for p in prepared if p is not None], self.deadline,
                                         self.target.kind.lane)
        for case, ready in zip(cases, prepared):
            self.running = case
            try:
                if ready is None:
                    raise ValueError("no request")
                verdicts.append(judged(ready.request, next(replies), ready.judge, ready.context))
            except UNREADABLE:
                # The child is not trusted: a reply that cannot be read is this case's failure.
                verdicts.append(malformed(case, "the reply could not be read"))
            except WorkerLost as lost:
                return verdicts, lost
        return verdicts, None

    def prepare(self, case, check: Check | None) -> Prepared | None:
        """The request for ``case`` and how its reply is judged, as the target's kind asks it; None if no
        request can be made (its ops undefined at its inputs)."""
        try:
            return PREPARE[self.target.kind.name](case, self.target, check, self.tolerance)
        except UNREADABLE:
            return None

    def result(self, check: Check, status: str, message: str = "", **found) -> CheckResult:
        return not_run(self.target, check, status, message, **found)

    def judge_check(self, check: Check) -> tuple[CheckResult, list[Verdict]]:
        """The check's result (how long it took included) and the verdicts of its cases."""
        started = time.monotonic()
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
            if isinstance(verdict.details.get("revoked"), Verdict):
                verdict.details["revoked"].check = check
        return check_result(self.target, check, verdicts, time.monotonic() - started), verdicts

    def run(self) -> TargetOutcome:
        """Every check of the target in turn; once its code is lost or unusable, the rest are not run."""
        results, verdicts = [], []
        missing = None
        for check in self.checks:
            if self.lost is not None or missing is not None:
                status = "error" if missing else self.lost.status
                results.append(self.result(check, status, f"not run: {missing or self.lost.detail}"))
                continue
            try:
                result, found = self.judge_check(check)
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
        coverage = {"graphs": len(self.graphs), "nodes": sum(map(len, self.graphs))} if self.graphs else None
        return TargetOutcome(self.target, tuple(results), tuple(verdicts), self.lost, self.running, coverage,
                             self.session.watch.equality)


def check_result(target: Target, check: Check, verdicts: list[Verdict], seconds: float) -> CheckResult:
    """A check's result from the verdicts of its cases: passed, or what its smallest failing case shows."""
    failing = [v for v in verdicts if not v.passed(check.focus)]
    if not failing:
        return not_run(target, check, "passed", seconds=seconds)
    worst = rules.smallest(failing)
    if worst.error is not None:
        message = " ".join(part for part in (feedback.describe_error(worst.error), feedback.raising_case(worst))
                           if part)
        return not_run(target, check, "error", message, seconds=seconds)
    example = feedback.counterexample(worst, check.focus)
    message = target.words.speak(feedback.train_lead(worst) + feedback.explain_case(example))
    return not_run(target, check, "failed", message, counterexample=example, seconds=seconds)


def not_run(target: Target, check: Check, status: str, message: str = "", **found) -> CheckResult:
    """A check's result, with its share of the target's points and its visibility."""
    return CheckResult(check.id, target.name, check.title, status, target.points_of(check), message=message,
                       hidden=check.id in target.hidden, **found)


def grade(path: Path, options: Options | None = None, siblings: bool = True) -> Report:
    """Grade the submission at ``path``; ``InputError`` if there is nothing to grade. A single file
    takes what it needs from its folder unless ``siblings`` is false (``grader.submission.siblings``)."""
    options = options or Options()
    exercise = options.exercise()
    return grade_submission(read_as_run(path, exercise.config, siblings), options)


def shown_checks(target: Target, options: Options) -> list[Check]:
    """The target's checks this grade runs: all of them, for every audience (a hidden check counts for
    students too; what their report withholds is why it failed: ``Report.withheld``)."""
    return list(target.checks)


def refusal(reason: str) -> Diagnosis:
    """The ``load-error`` of a submission refused before anything ran: running the file would not show why,
    so its advice is what to submit."""
    return Diagnosis("load-error", "submission",
                     feedback.message("load-error", "submission", None, "both", reason, concept=feedback.REFUSED))


def refused(path: Path, options: Options, reason: str) -> Report:
    """The report of a submission refused before anything ran (too many files, too large, not a
    notebook...): a ``load-error`` saying why, and every check not run, so that a platform that
    shows the student a report (Gradescope, Classroom 50) shows them the reason."""
    exercise = options.exercise()
    outcomes = [TargetOutcome(t, tuple(not_run(t, c, "error", f"not run: {reason}") for c in shown_checks(t, options)),
                              blocked=reason) for t in exercise.targets]
    return build_report(str(path), exercise, options, outcomes, Findings((refusal(reason),), ()))


def build_report(submission: str, exercise: Exercise, options: Options, outcomes: list[TargetOutcome],
                 findings: Findings, observed: Observed | None = None, warnings: tuple[str, ...] = (),
                 execution: dict | None = None, ungraded: tuple[Ungraded, ...] = ()) -> Report:
    """The report of a grade, built once from what it found: ``warnings`` are reading's, before those
    of the findings; then the sandbox's, and those of running the notebook (``execution``); ``ungraded``,
    what of the submission no target covered."""
    sandbox_json = launcher.detect().to_json(observed.confinement) if observed is not None else {}
    warnings = [*warnings, *findings.warnings]
    if observed is not None and (warning := sandbox.not_tamper_proof(sandbox_json)) is not None:
        warnings.append(warning)
    warnings += (execution or {}).get("warnings", [])
    return Report(submission, checks=tuple(r for o in outcomes for r in o.results), diagnoses=findings.diagnoses,
                  warnings=tuple(warnings), output=observed.output if observed is not None else "",
                  sandbox=sandbox_json, execution=execution, config=exercise.config.to_json(),
                  audience=options.audience, targets=exercise.names,
                  coverage={o.target.name: o.coverage for o in outcomes if o.coverage},
                  given=tuple(t.name for t in exercise.targets if t.given), ungraded=ungraded)


def reading_warnings(submission: Submission, exercise: Exercise, options: Options) -> tuple[str, ...]:
    """What reading the submission left to say: a class taken under another name, what reading left
    out, a course the submission holds other than the one that grades it (``grader.course.said``)."""
    warnings = [*submission.notes, *(note for source in dict.fromkeys(submission.providers.values())
                                      for note in source.notes)]
    warnings += broken.warnings(submission)
    warnings += said(submission.path, exercise.config, options.around)
    return tuple(warnings)


def grade_submission(submission: Submission, options: Options | None = None, execution: dict | None = None) -> Report:
    """Grade ``submission``: load it in its children, run every target's checks, diagnose, and build the
    report (with ``execution``, how running it as a notebook went, when that was asked for). Targets the
    course grades at a cell of a notebook are graded on the notebook as that cell left it (``grader.staging``)."""
    options = options or Options()
    for source in dict.fromkeys(submission.providers.values()):
        if source.kind == "ipynb" and not source.units:
            raise InputError(f"{source.display}: the notebook has no code cells to grade")
    exercise = options.exercise()
    warnings = reading_warnings(submission, exercise, options)
    outcomes, parts, seen, whole, reads, graded = [], [], [], None, [], []
    for stage in staging.stages(exercise):
        part = exercise.only(stage.names)
        stage_submission = submission if stage.selector is None else cut(submission, stage.selector)
        if stage_submission is None:
            outcomes += [TargetOutcome(t, tuple(not_run(t, c, "error", "not run: no such cell") for c in t.checks),
                                       blocked="no such cell") for t in stage.targets]
            parts.append(Findings(tuple(staging.no_such_cell(t, stage.selector, exercise.method(t.name))
                                        for t in stage.targets), ()))
            continue
        if stage.selector is not None:
            warnings += tuple(others(submission, stage.selector, sorted(stage.names)))
        found, load, observed = grade_stage(stage_submission, part, options)
        reads.append(read_by(stage_submission, part))
        graded.append((stage_submission, part, load, len(outcomes), len(found), observed))
        outcomes += found
        parts.append(None)
        seen.append(observed)
        whole = observed if stage.selector is None else whole
    outcomes = inheritance.settle(outcomes, check_result)  # every stage's charges known: what is forgiven is paid
    at = [i for i, part in enumerate(parts) if part is None]
    for (stage_submission, part, load, first, count, observed), i in zip(graded, at):
        parts[i] = diagnose(stage_submission, part, load, outcomes[first:first + count], observed)
    outcomes, findings = staging.merged(exercise, outcomes, parts)
    observed = staging.observed_together(seen, whole, lambda held: launcher.detect().to_json(held)["tamper_proof"]) \
        if seen else None
    return build_report(str(submission.path), exercise, options, outcomes, findings, observed, warnings, execution,
                        ungraded(submission, exercise, reads))


def grade_stage(submission: Submission, exercise: Exercise, options: Options) -> tuple[
        list[TargetOutcome], LoadFindings, Observed]:
    """Grade the targets of ``exercise`` on ``submission``, in children of their own: outcomes, what loading
    found and what the children showed."""
    with ahead.workspace() as started:
        session = Session(submission, exercise, started)
        try:
            session.open()
            load = read_load(submission, session.loaded, exercise.config.load_time_limit,
                             exercise.config.allowed_modules)
            outcomes = [run_target(target, session, exercise, options, load.blocked) for target in exercise.targets]
            observed = session.observed()
        finally:
            session.close()
    return outcomes, load, observed


def run_target(target: Target, session: Session, exercise: Exercise, options: Options,
               blocked: dict[str, str]) -> TargetOutcome:
    """Grade one target, or say why it cannot be: the part of the submission it grades did not load."""
    checks = shown_checks(target, options)
    reason = blocked.get(target.role)
    if reason is not None:
        return TargetOutcome(target, tuple(not_run(target, c, "error", f"not run: {reason}") for c in checks),
                             blocked=reason)
    return TargetRun(target, session, exercise, checks).run()
