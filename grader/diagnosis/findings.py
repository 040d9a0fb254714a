"""What grading found, as values: how each check went, each diagnosis, the smallest failing case.

They are made once, where the finding is made, and never changed after: a later pass that
words a diagnosis better (``grader.diagnosis.diagnose``) makes a new one in its place. The
report (``grader.report.model``) is built from them and renders them; nothing here knows a
format.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from grader.exercise.cases import Case, TrainCase
from grader.exercise.targets import Target
from grader.judging.judge import Verdict
from grader.submission.source import Location

TYPE_CHECKING = False  # as in grader/__init__.py
if TYPE_CHECKING:
    from grader.child.worker import WorkerLost


def tidy(x: object) -> object:
    """A JSON-friendly, run-to-run stable form of a number (or a description of a non-number)."""
    if isinstance(x, float):
        if not math.isfinite(x):
            return repr(x)
        return float(f"{x:.9g}") if x != 0 else 0.0
    if isinstance(x, dict):
        return {k: tidy(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [tidy(v) for v in x]
    return x


def fmt(x: object) -> str:
    """A number as a message shows it (nine significant digits at most), anything else as text."""
    x = tidy(x)
    return f"{x:g}" if isinstance(x, float) else str(x)


@dataclass(frozen=True)
class Counterexample:
    """The smallest failing case of a check, with what was expected and what came back."""

    expression: str
    inputs: dict[str, float]
    expected: dict[str, object]
    actual: dict[str, object]
    oracle: str  # "reference", "finite-difference" or "both"
    drawing: tuple | None = None  # (expression, expected, actual (data, grad) of every node): its graph
    reference: str = "the reference engine"  # what ``expected`` came from, as a message names it


@dataclass(frozen=True)
class Diagnosis:
    """A misconception (``code``, from ``grader.diagnosis.codes``) of a target, or of the submission
    as a whole, worded for the learner, at the statement most likely at fault."""

    code: str
    target: str  # a target's name, or "submission"
    message: str
    where: Location | None = None
    counterexample: Counterexample | None = None  # the smallest case that shows it

    @property
    def line(self) -> int | None:
        return self.where.line if self.where else None

    @property
    def file(self) -> str | None:
        return self.where.file if self.where else None

    @property
    def cell(self) -> int | None:
        return self.where.cell if self.where else None

    def heading(self) -> str:
        """The diagnosis's first line in every format: ``[grad-overwrite] mul (engine.py, line 12)``."""
        where = f" ({self.where.describe()})" if self.where is not None else ""
        return f"[{self.code}] {self.target}{where}"


@dataclass(frozen=True)
class CheckResult:
    """How one check of a target went, and its share of the target's points."""

    id: str
    target: str
    title: str
    status: str  # "passed", "failed", "error" or "timeout"
    max_score: float
    message: str = ""
    counterexample: Counterexample | None = None
    hidden: bool = False  # hidden from students until the course releases it
    seconds: float = 0.0  # how long the check took; not in the JSON, which stays run-to-run stable

    @property
    def score(self) -> float:
        return self.max_score if self.status == "passed" else 0.0


@dataclass(frozen=True)
class TargetOutcome:
    """How grading one target went: its checks' results and the verdicts behind them, or why it could
    not run at all (``blocked``); if its child was lost, how (``lost``) and on which case (``running``)."""

    target: Target
    results: tuple[CheckResult, ...]
    verdicts: tuple[Verdict, ...] = ()
    lost: WorkerLost | None = None
    running: Case | TrainCase | None = None
    coverage: dict[str, int] | None = None  # distinct graphs checked, and their nodes
    equality: str | None = None  # how the class compared nodes, as seen by the end of the target
    blocked: str | None = None  # why no check ran: the part it grades did not load


@dataclass(frozen=True)
class Findings:
    """Every diagnosis of a grade, in the order they are shown, and the warnings beside them."""

    diagnoses: tuple[Diagnosis, ...]
    warnings: tuple[str, ...]
