"""nbgrader on JupyterHub: the course's notebook with one autograded test cell per target.

``micrograde template nbgrader source/ASSIGNMENT`` writes the instructor's notebook: the
scaffold's notebook, its stubs in ordinary cells (an nbgrader solution cell would be
emptied on release, stubs and all), and, where the scaffold has its ``check()`` cell, one
locked, autograded test cell per target worth that target's points. Each test cell
calls ``target(NAME, COURSE)`` (the course's configuration is written into the cell, which
``nbgrader autograde`` restores from the source, so a student's file never configures it):
the notebook's cells are graded once, as ``check()`` grades them, and the cell then shows
what the target lost and

- raises with micrograde's message when the target earns nothing (nbgrader: no points), or when it is
  code the course gives (worth no points) and the student broke it;
- evaluates to the target's score when it earns some of its points (nbgrader takes a number
  a test cell evaluates to as partial credit);
- shows nothing when it earns all of them (full points);

so nbgrader's points for each cell are micrograde's for its target. nbgrader runs the
student's cells in the same kernel as the test cells, so a notebook can tamper with them (as
with any nbgrader test): micrograde's sandbox confines the graded code, not the kernel.
"""

from __future__ import annotations

import sys
from pathlib import Path

from grader.exercise.config import Config, parse, tables
from grader.exercise.targets import Exercise
from grader.report.identifiers import Identifiers
from grader.staff.placing import placed, write_files

_GRADED: dict[tuple, object] = {}  # (the cells' source, the configuration's hash) -> the report


class TargetFailed(AssertionError):
    """A target that earned none of its points: the test cell fails with micrograde's message."""


class Points(float):
    """A target's partial score, shown as the bare number nbgrader reads as partial credit."""

    def __repr__(self) -> str:
        return f"{float(self):g}"


def report_for(config: Config):
    """The report on the ``Value`` class and training function defined in this kernel's cells (graded
    once for the same cells and course)."""
    from grader.grade import Options, grade
    from grader.student import relabelled, source_of

    main = sys.modules.get("__main__")
    objects = [getattr(main, name) for name in (config.class_name, config.train_function) if hasattr(main, name)]
    if not objects:
        raise TargetFailed(f"micrograde: the notebook defines no {config.class_name} (nor {config.train_function})")
    source, origins = source_of(objects)
    key = (source, config.sha256)
    if key not in _GRADED:
        import tempfile

        with tempfile.TemporaryDirectory(prefix="micrograde-nbgrader-") as folder:
            path = Path(folder) / "your_work.py"
            path.write_text(source, encoding="utf-8")
            report = grade(path, Options(config=config))
        _GRADED.clear()
        _GRADED[key] = relabelled(report, origins)
    return _GRADED[key]


def target(name: str, course: dict) -> Points | None:
    """The test cell of target ``name`` under the configuration ``course`` (its tables): see the module."""
    report = report_for(parse(course, "the notebook's test cells"))
    score, most = report.target_scores().get(name, (0.0, 0.0))
    if report.forbidden:
        score = 0.0
    lines = [f"{d.heading()}\n{d.message}" for d in report.shown_diagnoses() if d.target in (name, "submission")]
    lines += [f"{c.id}: {report.details(c)}" for c in report.shown_checks()
              if c.target == name and c.status != "passed" and report.withheld(c)]
    message = f"micrograde: {name} {score:g} / {most:g}" + "".join(f"\n\n{line}" for line in lines)
    if score <= 0 < most or (name in report.given and any(d.target == name for d in report.diagnoses)):
        raise TargetFailed(message)  # nothing earned; or the course's own code, broken (worth nothing either way)
    if score < most:
        print(message)
        return Points(score)
    return None


def test_cell(exercise: Exercise, name: str) -> str:
    course = repr(tables(exercise.config))  # numbers, strings, booleans, lists and tables: a Python literal
    return (f"# micrograde: {name}, {exercise.target(name).points:g} points (do not change this cell)\n"
            f"from grader.staff.nbgrader import target\n\ntarget({name!r}, {course})")


def instructor_notebook(exercise: Exercise) -> dict:
    """The scaffold's notebook for nbgrader: a locked autograded test cell per target in place of the
    ``check()`` cell."""
    import nbformat

    from grader.staff.scaffold import notebook

    book = nbformat.reads(notebook(exercise), as_version=4)
    cells = []
    ids = Identifiers(str(cell.get("id")) for cell in book.cells)
    for cell in book.cells:
        if cell.cell_type == "code" and "check(" in cell.source:
            for t in exercise.targets:
                test = nbformat.v4.new_code_cell(test_cell(exercise, t.name))
                test["id"] = ids(t.name, "micrograde-")
                test.metadata["nbgrader"] = {"grade": True, "solution": False, "locked": True, "task": False,
                                             "points": t.points, "grade_id": test["id"], "schema_version": 3}
                cells.append(test)
            continue
        cells.append(cell)
    book.cells = cells
    return book


def write_notebook(exercise: Exercise, directory: Path) -> list[Path]:
    import nbformat

    path = placed(directory, exercise.config.scaffold["notebook"], "notebook", exercise.config.source)
    return write_files({path: nbformat.writes(instructor_notebook(exercise)) + "\n"})
