"""What a missing method really is: not written, misnamed, or indented into another function.

A method the class does not have is ``not-implemented``, never a crash. The
source then says what was found instead: ``def pow`` where ``__pow__`` is
graded, ``tanh`` indented into ``__pow__`` by a slip, or a class that simply
has other ops (``relu`` but no ``tanh``). Methods that a slip nested inside the
same function are one problem, said once: ``nested-definition``.
"""

from __future__ import annotations

from dataclasses import replace

from grader.diagnosis import feedback
from grader.diagnosis.codes import CODES
from grader.diagnosis.findings import Diagnosis
from grader.exercise.kinds import VALUE
from grader.exercise.ops import OPS, method_name
from grader.exercise.targets import Exercise
from grader.submission import shape
from grader.submission.source import SourceFile, Submission

WHAT_INSTEAD = {
    "nested": "{method} is defined inside {inside} (line {line}), so it is not a method of {cls}: "
              "its def is indented one level too deep.",
    "near": "{cls} has no {method}, but it has {found} (line {line}): Python only calls {method}.",
    "other": "{cls} has no {method}; it has {found}.",
    "none": "{cls} has no {method}.",
}


def absent(submission: Submission, method: str) -> bool:
    """True when the class does not define ``method`` at all (a stub still counts as defined)."""
    source = submission.providers.get(VALUE)
    return source is not None and method not in shape.method_names(source, submission.names[VALUE])


def explain_missing(diagnoses: list[Diagnosis], submission: Submission, exercise: Exercise) -> list[Diagnosis]:
    """``diagnoses`` with the ``not-implemented`` of each method the class lacks saying what is there
    instead, and methods a slip nested in one function said once, as ``nested-definition``."""
    source = submission.providers.get(VALUE)
    if source is None:
        return diagnoses
    cls = submission.names[VALUE]
    methods = {exercise.method(t.name): t.name for t in exercise.targets if t.kind.role is VALUE}
    missing = {m: t for m, t in methods.items() if absent(submission, m)}
    if not missing:
        return diagnoses
    slips = shape.nested(source, cls, set(missing))
    by_host: dict[str, list[shape.Definition]] = {}
    for slip in slips:
        by_host.setdefault(slip.inside, []).append(slip)
    grouped = {s.name for group in by_host.values() if len(group) > 1 for s in group}
    if grouped:
        first = min((s for s in slips if s.name in grouped), key=lambda s: s.location.line)
        first = shape.first_nested(source, cls, first.inside) or first
        names = ", ".join(sorted(grouped))
        lost = {missing[n] for n in grouped}
        nested = Diagnosis("nested-definition", "submission",
                           feedback.message("nested-definition", "submission", None, "both",
                                            f"{names} are defined inside {first.inside} (from line "
                                            f"{first.location.line}), so {cls} has none of them"),
                           first.location)
        diagnoses = [nested, *(d for d in diagnoses if d.target not in lost)]
    single = {s.name: s for s in slips if s.name not in grouped}
    others = [m for m in shape.method_names(source, cls)
              if m in {op.method for op in OPS.values()} and m not in methods]
    return [instead(d, source, cls, missing, single, others) for d in diagnoses]


def instead(diagnosis: Diagnosis, source: SourceFile, cls: str, missing: dict[str, str],
            single: dict[str, shape.Definition], others: list[str]) -> Diagnosis:
    """A ``not-implemented`` of a method the class lacks, saying what the class has instead (and pointing
    at it); any other diagnosis as it is."""
    method = method_name(diagnosis.target)
    if diagnosis.code != "not-implemented" or method not in missing:
        return diagnosis
    near = shape.near_miss(source, cls, method)
    if method in single:
        where, kind = single[method], "nested"
    elif near is not None:
        where, kind = near, "near"
    else:
        where, kind = None, "other" if others else "none"
    found = near.name if kind == "near" else ", ".join(others)
    what = WHAT_INSTEAD[kind].format(method=method, cls=cls, found=found, inside=where.inside if where else "",
                                     line=where.location.line if where else "")
    return replace(diagnosis, message=f"{what} {CODES['not-implemented'].concept}",
                   where=where.location if where is not None else diagnosis.where)
