"""Every diagnosis of a grade, from what grading found: one pure function, and the order of its passes.

The children's answers have been judged into verdicts target by target
(``TargetOutcome``); loading has been read (``LoadFindings``); the children have
shown what they are (``Observed``). ``diagnose`` reads them all and returns the
diagnoses and warnings a report shows, in the order it shows them. Its passes
each take the diagnoses so far and return new ones, in this order, because each
rewords what the one before produced:

1. load problems, then each target's own diagnoses, in the course's order (and the warnings of
   loading, then one for each whole computation that keeps its points while it comes out wrong
   through an op graded on its own: ``expression.inherited``, and one for each numerical estimate whose code
   binds the course's function's name to another function: ``numeric.edited``, and one for each tensor op called
   in the style its method shows where the course said none: ``tensors.assumed``);
2. a class no node can be made of is one ``interface`` problem of the submission
   (``submission.merge_interface_problems``);
3. methods the class lacks say what it has instead, and methods nested by one
   slip are one ``nested-definition`` (``missing.explain_missing``);
4. ``value-equality`` names its cause and the set where nodes collapse
   (``equality.describe``);
5. a part still holding the course's placeholder is ``not-implemented`` there
   (``placeholder.still_placeholders``);
6. a given part's diagnoses say that it is the course's code, broken (``given``);
7. a forbidden import, seen in the source or attempted, last (``submission.cheating``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from grader.child.session import Observed
from grader.diagnosis import equality, expression, missing, numeric, placeholder, tensors
from grader.diagnosis.findings import Diagnosis, Findings, TargetOutcome
from grader.diagnosis.submission import LoadFindings, cheating, inferred_warning, merge_interface_problems
from grader.diagnosis.target import diagnose_target
from grader.exercise.kinds import VALUE
from grader.exercise.targets import Exercise
from grader.submission.source import Submission

TRUNCATED = "the submission printed more than the report keeps; the rest was dropped"


def diagnose(submission: Submission, exercise: Exercise, load: LoadFindings, outcomes: Sequence[TargetOutcome],
             observed: Observed) -> Findings:
    """The diagnoses and warnings of a grade, in the order a report shows them (see the module's docstring)."""
    diagnoses = list(load.diagnoses)
    for outcome in outcomes:
        if outcome.blocked is None:
            diagnoses += diagnose_target(outcome.target, exercise.method(outcome.target.name), list(outcome.verdicts),
                                         submission, outcome.equality, outcome.lost, outcome.running,
                                         exercise.config.allowed_modules)
    warnings = [*load.warnings, *expression.inherited(outcomes), *numeric.edited(outcomes),
                *tensors.assumed(outcomes)]
    if (named := inferred_warning(submission.names[VALUE], observed.inferred)) is not None:
        warnings.append(named)
    diagnoses = merge_interface_problems(diagnoses, submission.location("__init__"),
                                         {t.name for t in exercise.targets if t.kind.role is VALUE})
    diagnoses = missing.explain_missing(diagnoses, submission, exercise)
    diagnoses = equality.describe(diagnoses, submission, observed.equality)
    diagnoses = placeholder.still_placeholders(diagnoses, submission, exercise)
    diagnoses = given(diagnoses, exercise)
    if observed.truncated:
        warnings.append(TRUNCATED)
    if (forbidden := cheating(submission, observed.violations)) is not None:
        diagnoses.append(forbidden)
    return Findings(tuple(diagnoses), tuple(warnings))


GIVEN = ("This is the course's own code, given to you: it is worth no points, but it no longer passes its "
         "checks, and the code that uses it may lose points for it. Put it back as the course gave it, or fix "
         "it.")


def given(diagnoses: list[Diagnosis], exercise: Exercise) -> list[Diagnosis]:
    """Each diagnosis of a given part (``given = true``) saying that it is the course's code, now broken."""
    own = {t.name for t in exercise.targets if t.given}
    return [replace(d, message=f"{GIVEN} {d.message}") if d.target in own else d for d in diagnoses]
