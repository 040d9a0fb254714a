"""Grading a submission: every check of every target, then the diagnoses.

Targets are graded one after another against one child process. A target
whose code hangs or kills its process loses that target's remaining checks;
the next target gets a fresh process, so one bad method never costs another.
"""

from __future__ import annotations

import random
import tempfile
import time
from pathlib import Path

from grader.child import sandbox
from grader.child.process import WorkerLost
from grader.child.session import Options, Session
from grader.diagnosis import feedback, rules
from grader.judging.judge import Verdict, judge_backward, judge_op, judge_train, malformed
from grader.report.model import TARGETS, CheckResult, Diagnosis, Report
from grader.spec.cases import CHECKS, Check, TrainCase, points
from grader.submission.notebook import first_line
from grader.submission.source import Location, Submission, read_submission

OP_TARGETS = ("add", "mul", "pow", "tanh")
TRAIN_XS = [[2.0, 3.0, -1.0], [3.0, -1.0, 0.5], [0.5, 1.0, 1.0], [1.0, 1.0, -1.0]]
TRAIN_YS = [1.0, -1.0, -1.0, 1.0]
TRAIN_WEIGHTS = [round(w, 6) for w in (random.Random(2024 + i).uniform(-1, 1) for i in range(41))]


class TargetRun:
    """Grades one target: its checks in order, until its code is lost."""

    def __init__(self, target: str, session: Session, options: Options):
        self.target = target
        self.session = session
        self.options = options
        self.deadline = time.monotonic() + options.timeout
        self.lost: WorkerLost | None = None
        self.graphs: set = set()  # every distinct expression the target was checked on

    def request(self, case) -> dict:
        if isinstance(case, TrainCase):
            return {"kind": "train", "needs": "train_step", "nin": 3, "nouts": [4, 4, 1],
                    "weights": TRAIN_WEIGHTS, "xs": TRAIN_XS, "ys": TRAIN_YS,
                    "lr": case.lr, "steps": case.steps}
        if self.target == "backward":
            return {"kind": "backward", "exprs": [list(map(list, e)) for e in case.exprs],
                    "inputs": case.values}
        return {"kind": "op", "target": self.target, "expr": [list(n) for n in case.expr],
                "inputs": case.values}

    def evaluate(self, case) -> Verdict:
        self.graphs.update(getattr(case, "exprs", ()))
        reply = self.session.call(self.request(case), self.deadline)
        try:
            if isinstance(case, TrainCase):
                return judge_train(case, TRAIN_WEIGHTS, TRAIN_XS, TRAIN_YS, reply)
            if self.target == "backward":
                return judge_backward(case, reply)
            return judge_op(case, self.target, reply)
        except (TypeError, ValueError, KeyError, IndexError, AttributeError, ArithmeticError):
            # The child is not trusted: a reply that cannot be read is this case's failure.
            return malformed(case, "the reply could not be read")

    def run_check(self, check: Check) -> tuple[CheckResult, list[Verdict]]:
        result = CheckResult(check.id, self.target, check.title, "passed", points(check))
        if check.generated:
            from grader.search.engine import search

            target, roots = (self.target, 1) if self.target in OP_TARGETS else (None, 2)

            def strategy():  # Hypothesis is imported only if the search has to run it
                from grader.search.strategies import expressions

                return expressions(target, roots=roots)

            verdicts = search(strategy, self.evaluate, check.focus, self.options.max_examples,
                              key=f"{target}:{roots}")
        else:
            verdicts = [self.evaluate(case) for case in check.cases]
        failing = [v for v in verdicts if not v.passed(check.focus)]
        if failing:
            worst = rules.smallest(failing)
            result.status = "error" if worst.error is not None else "failed"
            if worst.error is not None:
                result.message = feedback.describe_error(worst.error)
            else:
                result.counterexample = feedback.counterexample(worst, check.focus)
                result.message = feedback.explain_case(result.counterexample)
        return result, verdicts

    def run(self) -> tuple[list[CheckResult], list[Verdict]]:
        results, verdicts = [], []
        missing = None
        for check in CHECKS[self.target]:
            if self.lost is not None or missing is not None:
                status = "error" if missing else self.lost.status
                detail = missing or self.lost.detail
                results.append(CheckResult(check.id, self.target, check.title, status, points(check),
                                           message=f"not run: {detail}"))
                continue
            try:
                result, found = self.run_check(check)
            except WorkerLost as lost:
                self.lost = lost
                self.session.close()
                results.append(CheckResult(check.id, self.target, check.title,
                                           lost.status,
                                           points(check), message=lost.detail))
                continue
            results.append(result)
            verdicts.extend(found)
            if any(v.error and v.error.get("type") == "NotImplementedError" for v in found):
                missing = "not implemented"
        return results, verdicts


def diagnoses_for(target: str, run: TargetRun, verdicts: list[Verdict], location: Location | None) -> list[Diagnosis]:
    if target in OP_TARGETS:
        codes = rules.diagnose_op(target, verdicts)
    elif target == "backward":
        codes = rules.diagnose_backward(verdicts)
    else:
        codes = rules.diagnose_train(verdicts)
    found: list[tuple[str, Verdict | None, str]] = [(code, v, "") for code, v in codes.items()]
    if run.lost is not None:
        code = "timeout" if run.lost.reason == "timeout" else "crash"
        detail = run.lost.detail
        if run.lost.reason == "timeout":
            detail += f" ({run.options.timeout:g} s for each target; see --timeout)"
        found.append((code, None, detail))
    focus = "grad" if target == "backward" else "both"
    return [
        Diagnosis(code, target, feedback.message(code, target, v, focus, detail),
                  line=location.line if location else None,
                  file=location.file if location else None,
                  cell=location.cell if location else None,
                  counterexample=feedback.counterexample(v, focus) if v is not None else None)
        for code, v, detail in found
    ]


def cell_warning(submission: Submission, failure: dict) -> str:
    """A notebook cell that raised: its number, its first line, and the error (not a lost point)."""
    cell = failure["unit"]
    first = next((first_line(unit.source) for source in submission.files for unit in source.units
                  if unit.filename == failure.get("unit_file")), "")
    error = {**failure, "line": None}
    return f"cell {cell} (`{first[:60]}`) raised {feedback.describe_error(error)}"


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
        problem("timeout" if lost.reason == "timeout" else "load-error", f"while loading, {lost.detail}")
        return {name: "the submission did not load" for name in ("Value", "train_step")}
    for failure in session.failures:
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


def session_sandbox(session: Session) -> dict:
    detected = sandbox.detect()
    return detected.to_json({"filesystem": session.filesystem} if session.filesystem else None)


def grade(path: Path, options: Options | None = None) -> Report:
    """Grade the submission at ``path``; ``InputError`` if there is nothing to grade."""
    return grade_submission(read_submission(path), options)


def grade_submission(submission: Submission, options: Options | None = None) -> Report:
    options = options or Options()
    report = Report(str(submission.path))
    with tempfile.TemporaryDirectory(prefix="micrograde-", ignore_cleanup_errors=True) as tmp:
        session = Session(submission, Path(tmp), options)
        try:
            session.open()
            blocked = load_diagnoses(submission, session, report)
            for target in TARGETS:
                reason = blocked.get("train_step" if target == "train_step" else "Value")
                if reason is not None:
                    report.checks.extend(CheckResult(c.id, target, c.title, "error", points(c),
                                                     message=f"not run: {reason}") for c in CHECKS[target])
                    continue
                run = TargetRun(target, session, options)
                started = time.monotonic()
                results, verdicts = run.run()
                report.timings[target] = time.monotonic() - started
                if run.graphs:
                    report.coverage[target] = {"graphs": len(run.graphs), "nodes": sum(map(len, run.graphs))}
                report.checks.extend(results)
                report.diagnoses.extend(diagnoses_for(target, run, verdicts, submission.location(target)))
            report.output = session.output()
            if session.truncated:
                report.warnings.append("the submission printed more than the report keeps; the rest was dropped")
            cheating(submission, session, report)
            report.sandbox = session_sandbox(session)
        finally:
            session.close()
    return report
