"""A notebook graded in stages: each target where the course says its part stands (a target's ``cell``).

A step-by-step notebook redefines ``Value`` as it goes (a number, then ``+`` and ``*``,
then the graph, then gradients, then the course's complete engine), and a target of one
step grades the class as that step left it. So the targets are grouped by their ``cell``
(``None``: the notebook as a whole), and each group is graded on the submission cut after
that cell (``grader.submission.cells.cut``), in children of its own: a later cell never
changes what an earlier step's target grades, not even through a name the methods look up
when they run.

What the groups found is put together here into one grade: every target's outcome in the
course's order, the diagnoses of each (those of the submission as a whole said once), the
warnings once each, and what the children showed of themselves (the whole notebook's
output, every attempt the guard recorded).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from grader.child.session import Observed
from grader.diagnosis import feedback
from grader.diagnosis.findings import Diagnosis, Findings, TargetOutcome
from grader.exercise.targets import Exercise, Target


@dataclass(frozen=True)
class Stage:
    """The targets graded on the notebook cut after the cells ``selector`` selects (``None``: uncut)."""

    selector: str | None
    targets: tuple[Target, ...]

    @property
    def names(self) -> set[str]:
        return {t.name for t in self.targets}


def stages(exercise: Exercise) -> list[Stage]:
    """The exercise's targets grouped by their ``cell``, the whole notebook's first."""
    groups: dict[str | None, list[Target]] = {None: []}
    for target in exercise.targets:
        groups.setdefault(target.knobs.cell, []).append(target)
    return [Stage(selector, tuple(targets)) for selector, targets in groups.items() if targets]


def no_such_cell(target: Target, selector: str, method: str) -> Diagnosis:
    """The target of a cell the notebook does not have: the learner removed its first line, or the cell."""
    detail = (f"the course grades {method} in the cell whose first line starts with {selector!r} (or that is "
              f"tagged so), and the notebook has no such cell")
    message = feedback.message("not-implemented", target.name, None, "both", method=method)
    return Diagnosis("not-implemented", target.name, f"{message} (Not graded: {detail}: write it in that "
                                                     "cell, its first line as the course gave it.)")


def merged(exercise: Exercise, outcomes: Sequence[TargetOutcome], parts: Sequence[Findings]) -> tuple[
        list[TargetOutcome], Findings]:
    """Every stage's outcomes in the course's order, and its findings as one: the submission's own diagnoses
    and every warning said once, then each target's diagnoses in the course's order."""
    order = {name: i for i, name in enumerate(exercise.names)}
    diagnoses = [d for part in parts for d in part.diagnoses]
    own = list(dict.fromkeys(d for d in diagnoses if d.target not in order))
    targets = sorted((d for d in diagnoses if d.target in order), key=lambda d: order[d.target])
    warnings = tuple(dict.fromkeys(w for part in parts for w in part.warnings))
    return sorted(outcomes, key=lambda o: order[o.target.name]), Findings((*own, *targets), warnings)


def observed_together(seen: Sequence[Observed], whole: Observed | None,
                      tamper_proof: Callable[[dict], bool]) -> Observed:
    """What every stage's children showed, as one: the output of the whole notebook's run (else of the last
    stage: each stage runs a prefix of the notebook), every violation, the weakest confinement."""
    last = whole or seen[-1]
    violations = tuple(dict.fromkeys(v for o in seen for v in o.violations))
    confinement = next((o.confinement for o in seen if not tamper_proof(o.confinement)), last.confinement)
    return Observed(violations, any(o.truncated for o in seen), last.equality, last.inferred, confinement,
                    last.output)
