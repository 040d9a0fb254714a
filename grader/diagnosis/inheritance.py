"""Faults a target inherits from another part of the learner's: forgiven only where the same grade charges them.

A whole computation that comes out wrong only through one op of the learner's class
(``grader.judging.expression``), and a module that is right on the grader's engine or
of the stand-in parts but wrong on the learner's own (``grader.judging.modules``), keep
their points on a case: the judge hands back a passing verdict that names what it
relies on (``details["inherits"]``) and holds the failing one it stands for
(``details["revoked"]``). That is fair only if the fault is paid for: the op, the
learner's ops or the part is a target of this grade, and lost points there. So once
every target of the grade is graded, each such verdict is kept only where a target it
names is charged; else the failing verdict stands, the target loses the case's points,
and its diagnosis names the op as graded nowhere it was wrong. Charges are read until
nothing changes (a layer charged because its neuron was not is then a charge for the
MLP built of it), so the outcome does not depend on the order of the targets, nor on
the size of any graph.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from grader.diagnosis.findings import CheckResult, TargetOutcome
from grader.exercise.cases import Check
from grader.exercise.targets import Target
from grader.judging.judge import Verdict

ResultOf = Callable[[Target, Check, list[Verdict], float], CheckResult]
OPS_KINDS = ("op", "backward")


def charged(outcomes: Sequence[TargetOutcome]) -> set[str]:
    """The targets that lost points in this grade."""
    return {o.target.name for o in outcomes if any(r.status != "passed" and r.max_score > 0 for r in o.results)}


def payers(target: Target, verdict: Verdict, targets: Sequence[Target]) -> set[str]:
    """The targets of the grade that a verdict's inherited fault is charged to."""
    inherits = verdict.details.get("inherits")
    if isinstance(inherits, str):  # one op of the learner's class (a computation's)
        return {inherits}
    found = set()
    for run in inherits or ():
        if run == "engine":  # right on the grader's engine: the learner's ops are at fault
            found |= {t.name for t in targets if t.kind.name in OPS_KINDS}
        elif run == "parts":  # right of the stand-in parts: the learner's neuron or layer is
            parts = {target.settings.get(key) for key in ("neuron", "layer")} - {None}
            found |= {t.name for t in targets if t.kind.name == "module" and t.settings.get("class") in parts}
    return found


def settle(outcomes: Sequence[TargetOutcome], result_of: ResultOf) -> list[TargetOutcome]:
    """Every outcome, with each inherited fault no target of the grade is charged for put back as the failing
    verdict it stood for, and the check it belongs to judged again (``result_of``)."""
    settled = list(outcomes)
    targets = [o.target for o in settled]
    while True:
        paying = charged(settled)
        changed = False
        for i, outcome in enumerate(settled):
            verdicts = [uncharged(v) if "revoked" in v.details and not payers(outcome.target, v, targets) & paying
                        else v for v in outcome.verdicts]
            if any(new is not old for new, old in zip(verdicts, outcome.verdicts)):
                settled[i] = rejudged(outcome, verdicts, result_of)
                changed = True
        if not changed:
            return settled


def uncharged(verdict: Verdict) -> Verdict:
    """The failing verdict an inherited one stood for, saying what it relied on that nothing charged (a module's:
    the grader's engine or parts; a computation's says it already: ``details["uncharged"]``)."""
    failing = verdict.details["revoked"]
    inherits = verdict.details.get("inherits")
    if isinstance(inherits, list) and inherits:
        failing = replace(failing, details={**failing.details, "ungraded": inherits[0]})
    return failing


def rejudged(outcome: TargetOutcome, verdicts: list[Verdict], result_of: ResultOf) -> TargetOutcome:
    """``outcome`` with ``verdicts`` in place of its own, each check's result judged again from its verdicts."""
    results = []
    for result in outcome.results:
        mine = [v for v in verdicts if v.check is not None and v.check.id == result.id]
        check = mine[0].check if mine else None
        results.append(result if check is None or result.status not in ("passed", "failed")
                       else result_of(outcome.target, check, mine, result.seconds))
    return replace(outcome, results=tuple(results), verdicts=tuple(verdicts))
