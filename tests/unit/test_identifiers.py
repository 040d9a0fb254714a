"""Every id micrograde makes from a course's names is one its consumer takes: GitHub Actions' step ids (and
the reporter's variables and expressions built on them), nbformat's cell ids in the notebooks it hands back
and the nbgrader notebook it writes, nbgrader's grade ids. A course names targets as it likes (``SGD.step``,
``Module.parameters``), so every course file of the tests is made into each."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import nbformat
import pytest
import yaml
from helpers import micrograde

from grader.exercise.config import load
from grader.exercise.targets import Exercise
from grader.report.identifiers import LIMIT, Identifiers, identifier
from grader.staff import templates
from grader.staff.nbgrader import instructor_notebook

TESTS = Path(__file__).parents[1]
COURSES = sorted((TESTS / "courses").glob("*.toml"))
STEP_ID = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")  # GitHub's rule for a step's id
CELL_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}")  # nbformat 4.5's


@pytest.mark.parametrize("name", ["SGD.step", "Module.parameters", "my add", "2nd_try", "__radd__", "ünïcode",
                                  "x" * 100, "...", "a.b", "a_b", "a-b"])
def test_an_identifier_is_one_every_consumer_takes(name):
    made = identifier(name, "micrograde-")
    assert CELL_ID.fullmatch(made) and STEP_ID.fullmatch(identifier(name)), (name, made)


def test_identifiers_never_repeat_and_keep_to_the_limit():
    ids = Identifiers(["micrograde-summary"])
    made = [ids(name, "micrograde-") for name in ("summary", "a.b", "a_b", "a-b", "y" * 80, "y" * 90)]
    assert made[:4] == ["micrograde-summary-2", "micrograde-a-b", "micrograde-a-b-2", "micrograde-a-b-3"]
    assert len(set(made)) == len(made) and all(len(m) <= LIMIT for m in made)
    assert identifier("train_step") == "train-step" and identifier("add.local-grad") == "add-local-grad"


@pytest.mark.parametrize("course", COURSES, ids=[c.stem for c in COURSES])
def test_the_github_classroom_workflow_of_every_course_is_one_actions_runs(course, tmp_path):
    """Step ids of Actions' alphabet, none repeated; the reporter reads each as
    ``<ID upper-cased>_RESULTS`` from the step's own output; each command a shell reads back as written."""
    exercise = Exercise(load(course))
    [path] = templates.github_classroom(tmp_path, "micrograde", "exercises/", exercise, templates.pinned(course))
    steps = yaml.safe_load(path.read_text())["jobs"]["run-autograding-tests"]["steps"]
    graders = [s for s in steps if s.get("uses", "").startswith("classroom-resources/autograding-command-grader")]
    ids = [s["id"] for s in graders]
    assert all(STEP_ID.fullmatch(i) for i in ids) and len(set(ids)) == len(ids), ids
    [reporter] = [s for s in steps if s.get("uses", "").startswith("classroom-resources/autograding-grading-rep")]
    assert reporter["with"]["runners"].split(",") == ids
    assert reporter["env"] == {f"{i.upper()}_RESULTS": f"${{{{steps.{i}.outputs.result}}}}" for i in ids}
    names = {t.name for t in exercise.targets} | {c.id for t in exercise.targets for c in t.checks}
    for step in graders:
        command = shlex.split(step["with"]["command"])
        assert command[:3] == ["micrograde", "result", "micrograde.json"] and command[3] in names, command


@pytest.mark.parametrize("course", COURSES, ids=[c.stem for c in COURSES])
def test_the_nbgrader_notebook_of_every_course_is_valid(course):
    exercise = Exercise(load(course))
    book = instructor_notebook(exercise)
    nbformat.validate(book)
    graded = [c for c in book.cells if c.metadata.get("nbgrader", {}).get("grade")]
    grade_ids = [c.metadata.nbgrader["grade_id"] for c in graded]
    assert len(graded) == len(exercise.targets) and len(set(grade_ids)) == len(grade_ids)
    assert all(CELL_ID.fullmatch(c.id) for c in book.cells)


@pytest.mark.parametrize(("course", "notebook"), [
    ("tutorial-deep", "tutorial_deep/kept_solutions.ipynb"),  # Module.parameters, Neuron, Layer, MLP in it
    ("karpathy-exercises", "karpathy_exercises/step_and_exp.ipynb"),
    ("dl-course-hw1", "dl_course_hw1/sgd_sign/test_nn.ipynb"),
])
def test_a_handed_back_notebook_is_one_jupyter_opens(course, notebook, tmp_path):
    """The feedback notebook of a course's own notebook: valid, as Jupyter reads it, every cell id its own."""
    done = micrograde("grade", str(TESTS / "assignments" / notebook), "--config",
                      str(TESTS / "courses" / f"{course}.toml"), "--feedback", str(tmp_path / "back.ipynb"))
    assert done.returncode in (0, 1), done.stderr
    saved = nbformat.read(tmp_path / "back.ipynb", as_version=4)
    nbformat.validate(saved)
    ids = [c.id for c in saved.cells]
    assert len(set(ids)) == len(ids) and all(CELL_ID.fullmatch(i) for i in ids)
    assert sum(i.startswith("micrograde-") for i in ids) >= 2, ids  # the summary and a target's feedback
