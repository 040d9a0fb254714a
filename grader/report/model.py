"""The grade report: what every output format is rendered from.

Floats are rounded to nine significant digits when the report is serialised,
so that harmless last-bit differences (a student's ``set`` iterating in another
order and summing gradients in another order) never change the report.
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass, field

from grader.diagnosis.findings import CheckResult, Counterexample, Diagnosis, tidy
from grader.diagnosis.ungraded import Ungraded
from grader.report.graph import mermaid
from grader.submission.source import Location

SCHEMA_VERSION = 1
CASE = "Smallest failing case"  # how a check's and a diagnosis's message introduce their counterexample
WITHHELD = "hidden until the course releases it: why it failed is shown then"  # a hidden check, to a student
NOT_GRADED = "Not graded (no target of the course covers it, so no check looked at it)"
GIVEN = "given"  # how the score table shows a target that is the course's own code: no points
# Control characters but tab and newline (C0, DEL, C1: CR, ESC, CSI, NEL...); the line and paragraph
# separators; bidirectional controls and marks; the byte-order mark; lone surrogates; the two noncharacters
# U+FFFE and U+FFFF.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
                     "\ufeff\ud800-\udfff\ufffe\uffff]")


def printable(text: str) -> str:
    """``text`` with every character a reader would act on made visible: control characters (NUL, CR,
    ESC, CSI...), line separators (U+2028, U+2029, U+0085), bidirectional controls (U+202A-U+202E,
    U+2066-U+2069), lone surrogates and U+FFFE/U+FFFF become ``\\x00``-style escapes; newlines and
    tabs stay.

    A submission controls its own exception messages, printed output and file
    names: XML cannot hold NUL or U+FFFE at all, a terminal obeys ESC and CR,
    UTF-8 cannot encode a lone surrogate, an editor or a Markdown renderer
    starts a new line at U+2028, and a bidirectional override makes one text
    read as another: every format renders report text through this first.
    """
    return _UNSAFE.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100
                       else f"\\u{ord(m.group()):04x}", text)


def one_line(text: str) -> str:
    """``printable`` text on one line: newlines and tabs escaped too (a CSV cell, a progress line)."""
    return printable(text).replace("\n", "\\n").replace("\t", "\\t")


def name(text: str) -> str:
    """A name a student chose (their file's), on one line, with backslashes doubled, so that two names
    never look the same (``a\\rb`` the file name is not ``a<CR>b``); in a name that Unicode normalisation
    would change, every character past ASCII is shown as an escape (``jose\\u0301`` is not ``josé``,
    though both read as ``josé``: an LMS that imports by name would take them for one student)."""
    text = text.replace("\\", "\\\\")
    if unicodedata.normalize("NFC", text) != text:
        text = "".join(c if c.isascii() else f"\\u{ord(c):04x}" for c in text)
    return one_line(text)


def printable_tree(data: object) -> object:
    """``data`` (parsed JSON) with ``printable`` applied to every string in it, keys included."""
    if isinstance(data, str):
        return printable(data)
    if isinstance(data, dict):
        return {printable_tree(k): printable_tree(v) for k, v in data.items()}
    if isinstance(data, list):
        return [printable_tree(v) for v in data]
    return data


def counterexample_json(example: Counterexample) -> dict:
    data = tidy({
        "expression": example.expression,
        "inputs": example.inputs,
        "expected": example.expected,
        "actual": example.actual,
        "oracle": example.oracle,
    })
    if example.drawing:
        data["graph"] = mermaid(*example.drawing)
    return data


def check_json(check: CheckResult) -> dict:
    return {
        "id": check.id,
        "target": check.target,
        "title": check.title,
        "status": check.status,
        "score": round(check.score, 4),
        "max_score": round(check.max_score, 4),
        "message": check.message,
        "counterexample": counterexample_json(check.counterexample) if check.counterexample else None,
        **({"hidden": True} if check.hidden else {}),
    }


def ungraded_json(part: Ungraded) -> dict:
    return {"what": part.what, "name": part.name, "file": part.where.file, "line": part.where.line,
            **({"cell": part.where.cell} if part.where.cell is not None else {})}


def diagnosis_json(diagnosis: Diagnosis) -> dict:
    data = {"code": diagnosis.code, "target": diagnosis.target, "message": diagnosis.message,
            "line": diagnosis.line, "file": diagnosis.file}
    if diagnosis.cell is not None:
        data["cell"] = diagnosis.cell
    if diagnosis.counterexample is not None:
        data["counterexample"] = counterexample_json(diagnosis.counterexample)
    return data


@dataclass(frozen=True)
class Report:
    """Everything a grade found, in the order it is shown; built once (``grader.grade``), never changed."""

    submission: str
    checks: tuple[CheckResult, ...] = ()
    diagnoses: tuple[Diagnosis, ...] = ()
    warnings: tuple[str, ...] = ()
    output: str = ""
    sandbox: dict = field(default_factory=dict)
    execution: dict | None = None  # --execute: how running the notebook in a kernel went
    config: dict = field(default_factory=dict)  # where the course configuration came from, and its hash
    audience: str = "student"  # "student" reports withhold why a hidden check failed; "staff" ones show it
    targets: tuple[str, ...] = ()  # graded targets, in the course's order
    coverage: dict[str, dict[str, int]] = field(default_factory=dict)  # target: distinct graphs and their nodes
    given: tuple[str, ...] = ()  # targets that are the course's own code: graded for regressions, worth no points
    ungraded: tuple[Ungraded, ...] = ()  # what of the submission no target covered

    def __post_init__(self) -> None:
        for name in ("checks", "diagnoses", "warnings", "targets", "given", "ungraded"):  # kept as tuples
            object.__setattr__(self, name, tuple(getattr(self, name)))

    def not_graded(self) -> str:
        """The parts no target covered, as one paragraph of a report ("" when there are none)."""
        if not self.ungraded:
            return ""
        return f"{NOT_GRADED}: " + "; ".join(u.describe() for u in self.ungraded) + "."

    def all_passed(self) -> str:
        """What a report says when every check passed: never over parts no check looked at without saying so."""
        if not self.ungraded:
            return "All checks passed."
        many = len(self.ungraded) > 1
        return (f"All checks passed; {len(self.ungraded)} part{'s' * many} of the submission listed as not graded "
                f"{'were' if many else 'was'} not checked.")

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

    def shown_checks(self) -> list[CheckResult]:
        """Every check: a check the course hides until release counts in every report, the student's too, so
        that every route gives the same score; what a student's report withholds is why it failed (see
        ``withheld``)."""
        return list(self.checks)

    def withheld(self, check: CheckResult) -> bool:
        """Whether this report's reader sees only ``check``'s status and points: a hidden check, for students."""
        return check.hidden and self.audience == "student"

    def shown_diagnoses(self) -> list[Diagnosis]:
        """The diagnoses this report's reader may see: for students, none that only a hidden check shows."""
        if self.audience != "student":
            return list(self.diagnoses)
        failing = {c.target for c in self.checks if c.status != "passed" and not self.withheld(c)}
        return [d for d in self.diagnoses if d.target == "submission" or d.target in failing]

    def details(self, check: CheckResult) -> str:
        """What a failed check's reader needs: the diagnoses of its target, each with its file and line as the
        text report shows them, its message (unless a diagnosis already gives the smallest failing case), and
        its counterexample's data; for a check withheld from this reader, only that it is."""
        if self.withheld(check):
            return WITHHELD
        diagnoses = [d for d in self.shown_diagnoses() if d.target == check.target]
        told = any(CASE in d.message for d in diagnoses)
        lines = [check.message] if check.message and not (told and CASE in check.message) else []
        for d in diagnoses:
            lines += [d.heading(), d.message]
        if check.counterexample is not None:
            example = counterexample_json(check.counterexample)
            lines += [f"expression: {example['expression']}"]
            lines += [f"{key}: {json.dumps(example[key])}" for key in ("inputs", "expected", "actual")]
            lines += [f"oracle: {example['oracle']}"]
        return printable("\n".join(lines))

    def target_scores(self) -> dict[str, tuple[float, float]]:
        """Score and maximum of each graded target, in the course's order, over every check."""
        scores = {t: [0.0, 0.0] for t in self.targets}
        for check in self.checks:
            score = scores.setdefault(check.target, [0.0, 0.0])
            score[0] += check.score
            score[1] += check.max_score
        return {t: (round(s, 4), round(m, 4)) for t, (s, m) in scores.items()}

    def shown_totals(self) -> tuple[float, float]:
        """Score and maximum over the targets (no points with a forbidden import): the report's own."""
        scores = self.target_scores().values()
        total = 0.0 if self.forbidden else sum(s for s, _ in scores)
        return round(total, 4), round(sum(m for _, m in scores), 4)

    def shown_check_json(self, check: CheckResult) -> dict:
        """A check as JSON: its message and counterexample withheld where this reader may not see them."""
        data = check_json(check)
        if self.withheld(check):
            data["message"] = WITHHELD if check.status != "passed" else ""
            data["counterexample"] = None
        return data

    def codes(self, target: str) -> list[str]:
        return [d.code for d in self.diagnoses if d.target == target]

    def to_json(self) -> dict:
        return {
            "schema_version": SCHEMA_VERSION,
            "submission": self.submission,
            "score": self.score,
            "max_score": self.max_score,
            "targets": {t: {"score": s, "max_score": m, **({"given": True} if t in self.given else {})}
                        for t, (s, m) in self.target_scores().items()},
            "checks": [self.shown_check_json(c) for c in self.checks],
            "diagnoses": [diagnosis_json(d) for d in self.shown_diagnoses()],
            "warnings": list(self.warnings),
            "output": self.output,
            "sandbox": self.sandbox,
            "config": self.config,
            "audience": self.audience,
            "coverage": self.coverage,
            "ungraded": [ungraded_json(u) for u in self.ungraded],
            **({"execution": self.execution} if self.execution is not None else {}),
        }


def report_from_json(data: dict) -> Report:
    """A report as ``render_json`` wrote it, read back (``micrograde result``); ``KeyError``, ``TypeError`` or
    ``ValueError`` for anything that is not one. Counterexamples come back without their graphs."""

    def example(found: dict | None) -> Counterexample | None:
        if found is None:
            return None
        return Counterexample(str(found["expression"]), dict(found["inputs"]), dict(found["expected"]),
                              dict(found["actual"]), str(found["oracle"]))

    checks = tuple(CheckResult(str(c["id"]), str(c["target"]), str(c["title"]), str(c["status"]),
                               float(c["max_score"]), str(c.get("message", "")), example(c.get("counterexample")),
                               bool(c.get("hidden", False))) for c in data["checks"])
    diagnoses = tuple(Diagnosis(str(d["code"]), str(d["target"]), str(d["message"]),
                                Location(d["file"], d.get("line"), d.get("cell")) if d.get("file") else None,
                                example(d.get("counterexample"))) for d in data.get("diagnoses", []))
    ungraded = tuple(Ungraded(str(u["what"]), str(u["name"]), Location(str(u["file"]), u.get("line"), u.get("cell")))
                     for u in data.get("ungraded", []))
    targets = data.get("targets", {})
    return Report(str(data["submission"]), checks, diagnoses, tuple(map(str, data.get("warnings", []))),
                  str(data.get("output", "")), dict(data.get("sandbox", {})), data.get("execution"),
                  dict(data.get("config", {})), str(data.get("audience", "student")),
                  tuple(targets), dict(data.get("coverage", {})),
                  tuple(t for t, entry in targets.items() if isinstance(entry, dict) and entry.get("given")), ungraded)


def render_json(report: Report) -> str:
    """The report as JSON (``--format json``), every string printable whatever the submission sent."""
    import json

    return json.dumps(printable_tree(report.to_json()), indent=2) + "\n"
