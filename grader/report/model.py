"""The grade report: what every output format is rendered from.

Floats are rounded to nine significant digits when the report is serialised,
so that harmless last-bit differences (a student's ``set`` iterating in another
order and summing gradients in another order) never change the report.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

SCHEMA_VERSION = 1
TARGETS = ("add", "mul", "pow", "tanh", "backward", "train_step")


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


@dataclass
class Counterexample:
    """The smallest failing case of a check, with what was expected and what came back."""

    expression: str
    inputs: dict[str, float]
    expected: dict[str, object]
    actual: dict[str, object]
    oracle: str  # "reference", "finite-difference" or "both"
    graph: str | None = None  # Mermaid source of the expression's graph

    def to_json(self) -> dict:
        data = tidy({
            "expression": self.expression,
            "inputs": self.inputs,
            "expected": self.expected,
            "actual": self.actual,
            "oracle": self.oracle,
        })
        if self.graph:
            data["graph"] = self.graph
        return data


@dataclass
class CheckResult:
    id: str
    target: str
    title: str
    status: str  # "passed", "failed", "error" or "timeout"
    max_score: float
    message: str = ""
    counterexample: Counterexample | None = None

    @property
    def score(self) -> float:
        return self.max_score if self.status == "passed" else 0.0

    def to_json(self) -> dict:
        return {
            "id": self.id,
            "target": self.target,
            "title": self.title,
            "status": self.status,
            "score": round(self.score, 4),
            "max_score": round(self.max_score, 4),
            "message": self.message,
            "counterexample": self.counterexample.to_json() if self.counterexample else None,
        }


@dataclass
class Diagnosis:
    code: str
    target: str
    message: str
    line: int | None = None
    file: str | None = None
    cell: int | None = None
    counterexample: Counterexample | None = None  # the smallest case that shows it

    def to_json(self) -> dict:
        data = {"code": self.code, "target": self.target, "message": self.message,
                "line": self.line, "file": self.file}
        if self.cell is not None:
            data["cell"] = self.cell
        if self.counterexample is not None:
            data["counterexample"] = self.counterexample.to_json()
        return data


@dataclass
class Report:
    submission: str
    checks: list[CheckResult] = field(default_factory=list)
    diagnoses: list[Diagnosis] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    output: str = ""
    sandbox: dict = field(default_factory=dict)
    execution: dict | None = None  # --execute: how running the notebook in a kernel went
    timings: dict[str, float] = field(default_factory=dict)  # seconds per target; not in the JSON
    coverage: dict[str, dict[str, int]] = field(default_factory=dict)  # target: distinct graphs and their nodes

    @property
    def forbidden(self) -> bool:
        return any(d.code == "forbidden-import" for d in self.diagnoses)

    @property
    def score(self) -> float:
        if self.forbidden:
            return 0.0
        return round(sum(c.score for c in self.checks), 4)

    @property
    def max_score(self) -> float:
        return round(sum(c.max_score for c in self.checks), 4)

    @property
    def perfect(self) -> bool:
        return not self.diagnoses and self.score >= self.max_score

    def target_scores(self) -> dict[str, tuple[float, float]]:
        scores = {t: [0.0, 0.0] for t in TARGETS}
        for check in self.checks:
            scores[check.target][0] += check.score
            scores[check.target][1] += check.max_score
        return {t: (round(s, 4), round(m, 4)) for t, (s, m) in scores.items()}

    def codes(self, target: str) -> list[str]:
        return [d.code for d in self.diagnoses if d.target == target]

    def to_json(self) -> dict:
        return {
            "schema_version": SCHEMA_VERSION,
            "submission": self.submission,
            "score": self.score,
            "max_score": self.max_score,
            "targets": {t: {"score": s, "max_score": m} for t, (s, m) in self.target_scores().items()},
            "checks": [c.to_json() for c in self.checks],
            "diagnoses": [d.to_json() for d in self.diagnoses],
            "warnings": list(self.warnings),
            "output": self.output,
            "sandbox": self.sandbox,
            "coverage": self.coverage,
            **({"execution": self.execution} if self.execution is not None else {}),
        }
