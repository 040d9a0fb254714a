"""What is wrong with the submission as a whole: loading it, its warnings, forbidden imports, an
unusable class; said once, not as a failure of every method in turn."""

from __future__ import annotations

from dataclasses import dataclass, field

from grader.child.session import Loaded, load_stop
from grader.diagnosis import feedback
from grader.diagnosis.findings import Diagnosis
from grader.exercise.kinds import Role
from grader.submission import broken, shape
from grader.submission.notebook import SKIP_TAG, first_line
from grader.submission.source import Location, Submission

INFERRED = {"data": "keeps each node's number in .{name} where the exercise names it .data",
            "grad": "keeps each node's gradient in .{name} where the exercise names it .grad",
            "_backward": "stores each op's closure as .{name} where the exercise names it ._backward",
            "_prev": "keeps each node's operands in .{name} where the exercise keeps them in ._prev",
            "step": "passes a node's gradient on with .{name} where the exercise keeps a ._backward closure"}


def inferred_warning(cls: str, inferred: dict[str, str]) -> str | None:
    """Said once when the class names a part otherwise than the exercise: graded as written, and why
    the exercise's name is worth using (a course whose engine is shaped so says it in ``[engine]``)."""
    parts = [INFERRED[role].format(name=name) for role, name in inferred.items() if role in INFERRED]
    if not parts:
        return None
    listed = parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"
    return (f"{cls} {listed}: micrograde found this by watching your code and graded it as "
            f"written, but code written for the exercise (its tests, its training loop) uses the exercise's names")


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


@dataclass(frozen=True)
class LoadFindings:
    """What loading the submission showed: its diagnoses and warnings, and for each part (``Value``,
    ``train_step``) that could not be loaded, why; the targets of such a part are not run."""

    diagnoses: tuple[Diagnosis, ...] = ()
    warnings: tuple[str, ...] = ()
    blocked: dict[Role, str] = field(default_factory=dict)


def problem(code: str, detail: str, where: Location | None = None, notebook: bool = False) -> Diagnosis:
    """A diagnosis of the submission as a whole (``notebook``: of a notebook, whose learner runs it in Jupyter,
    not with ``python``)."""
    concept = None
    if code == "load-error":
        concept = feedback.load_concept(detail) or feedback.runs_on_its_own(where, notebook)
    return Diagnosis(code, "submission", feedback.message(code, "submission", None, "both", detail, concept=concept),
                     where)


def read_load(submission: Submission, loaded: Loaded, load_time_limit: float,
              allowed: tuple[str, ...] = ()) -> LoadFindings:
    """The load-level problems of ``submission``, from reading it and from what loading it said (``allowed``:
    the modules the course allows)."""
    diagnoses: list[Diagnosis] = []
    warnings: list[str] = []
    blocked: dict[Role, str] = {}
    notebook = bool(submission.providers) and all(s.kind == "ipynb" for s in submission.providers.values())
    problems = [*submission.load_problems(), *((detail, where, (role,))
                                               for role, (detail, where) in broken.parts(submission).items())]
    for detail, location, roles in problems:
        diagnoses.append(problem("load-error", detail, location, notebook))
        for role in roles:
            blocked[role] = f"{location.describe()} did not load"
    if loaded.lost is not None:
        if loaded.lost.reason == "timeout":
            diagnoses.append(load_timeout(shape.top_level_work(submission), load_time_limit))
        else:
            diagnoses.append(problem("load-error", f"while loading, {loaded.lost.detail}", notebook=notebook))
        return LoadFindings(tuple(diagnoses), tuple(warnings),
                            dict.fromkeys(submission.names, "the submission did not load"))
    for module in loaded.missing_modules:
        warnings.append(f"{module[:80]} is not installed where micrograde runs: the submission was graded "
                        f"without it, and only code that uses it fails (as missing-module)"
                        + (f"; the course allows it: install it into micrograde's environment (pip install {module})"
                           if module in allowed else ""))
    for failure in loaded.failures:
        if failure.get("type") == "LoadTimeout":
            where = shape.statement_at(submission, failure.get("unit_file"), failure.get("line"))
            diagnoses.append(load_timeout(where or shape.top_level_work(submission), load_stop(load_time_limit),
                                          load_time_limit))
            return LoadFindings(tuple(diagnoses), tuple(warnings),
                                dict.fromkeys(submission.names, "the submission did not load in time"))
        if failure.get("exit") is True:
            warnings.append(exit_warning(failure))
            for role in submission.names:
                if not loaded.defined.get(role.key):
                    blocked.setdefault(role, "the submission called sys.exit() before defining it")
            continue
        if failure.get("unit") is not None:
            warnings.append(cell_warning(submission, failure))
            continue
        line, file = failure.get("line"), failure.get("file")
        if not refused_import(failure, loaded.violations):  # forbidden-import says it, with advice that fits
            where = Location(file, line if isinstance(line, int) else None) if isinstance(file, str) else None
            diagnoses.append(problem("load-error", feedback.describe_error(failure), where, notebook))
        for role in submission.names:
            if not loaded.defined.get(role.key):
                blocked.setdefault(role, "the submission stopped with an error before defining it")
    return LoadFindings(tuple(diagnoses), tuple(warnings), blocked)


def refused_import(failure: dict, violations: tuple[str, ...]) -> bool:
    """Whether loading stopped because the guard refused a forbidden import (``import torch``): the file runs
    where the library is installed, so "the file must run on its own" would be wrong advice."""
    message = str(failure.get("message", ""))
    return failure.get("type") == "ImportError" and any(
        what.startswith("import ") and message.startswith(what.removeprefix("import ") + " ") for what in violations)


def load_timeout(where: Location | None, seconds: float, limit: float | None = None) -> Diagnosis:
    """Module-level code that outlived the load limit: where it runs, and what to do about it. ``seconds``
    is how long it ran before it was stopped; ``limit``, the load limit, when it was stopped before it."""
    place = f"the code at {where.describe()}" if where else "code at the top level"
    given = f"after {seconds:g} s" if limit is None or limit == seconds else (
        f"when loading was stopped, after {seconds:g} s (of the {limit:g} s load limit, the rest kept to find where "
        "it was)")
    if where is not None and where.cell is not None:
        advice = f"tag that cell {SKIP_TAG} (Jupyter: View > Cell Toolbar > Tags) so the grader leaves it out"
    else:
        advice = 'put demo and training code under if __name__ == "__main__": so it runs only when you run the file'
    return problem("load-timeout", f"{place} was still running {given}; {advice}", where)


def cheating(submission: Submission, violations: tuple[str, ...]) -> Diagnosis | None:
    """One ``forbidden-import`` for any use of an autograd library or of the grader, seen or attempted."""
    static = submission.forbidden_imports()
    evidence = [f"imports {name}" for name, _ in static]
    evidence += [f"tried to {what}" for what in violations
                 if not any(what == f"import {name}" for name, _ in static)]
    if not evidence:
        return None
    return problem("forbidden-import", "; ".join(dict.fromkeys(evidence[:5])), static[0][1] if static else None)


def merge_interface_problems(diagnoses: list[Diagnosis], constructor: Location | None,
                             of_the_class: set[str]) -> list[Diagnosis]:
    """A class the grader cannot make nodes of is one problem of the submission, said once and
    pointed at its constructor, not a failure of every method in turn (``of_the_class``: the targets
    that are the class's methods)."""
    found = [d for d in diagnoses if d.code == "interface" and d.target in of_the_class]
    if not found:
        return diagnoses
    where = constructor or found[0].where
    return [Diagnosis("interface", "submission", found[0].message, where),
            *(d for d in diagnoses if d not in found)]
