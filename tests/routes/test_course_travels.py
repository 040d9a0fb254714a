"""One configured course through every route, each choosing the course the same way (``grader.course``), none of
them told it: ``grade``, ``batch``, the pytest plugin and every template run in the course's folder, with its
``micrograde.toml`` and no ``--config``; ``check()`` from a script beside the scaffold's files; and ``check()`` in
the scaffold's notebook, run in a real kernel in an empty folder elsewhere, with the notebook alone (it carries
its course: ``grader.submission.carried``). The same score everywhere, full marks reachable, counterexamples
only in the course's ops. Where a route cannot know the course, it refuses in one line naming its flag.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from helpers import micrograde
from opmutants import WRITTEN, engine
from test_routes import BACKWARD_IN_ORDER, nbgrader_course, staff_report, student_routes, whole

COURSE = Path(__file__).parents[1] / "courses" / "travelling.toml"
FULL = 71.0
SUBMISSIONS = {
    "correct": engine(),
    # exp forgets out.grad (2.5 of its 10 points), and backward runs in the wrong order (its hidden check too)
    "exp-and-order": engine({**WRITTEN, "exp": dataclasses.replace(WRITTEN["exp"], out_grad=False)}).replace(
        BACKWARD_IN_ORDER, "        for node in topo:\n            node._backward()"),
}
OPS = {"+", "*", "/", "-", "relu", "exp"}  # what the course's expressions may be made of
TOKENS = re.compile(r"\.(\w+)\(\)|\*\*|[-+*/]")


def course_ops(expression: str) -> set[str]:
    """The ops an expression is written with: its operators and the methods it calls."""
    return {m.group(1) or m.group(0) for m in TOKENS.finditer(expression)}


def shown_expressions(text: str) -> list[str]:
    """The smallest failing cases a report's text shows."""
    return re.findall(r"Smallest failing case: (.*?) with ", text)


@pytest.fixture(scope="module")
def scaffolded(tmp_path_factory) -> Path:
    """The course's folder, its micrograde.toml and its student files, scaffolded there without --config."""
    course = tmp_path_factory.mktemp("course")
    shutil.copy(COURSE, course / "micrograde.toml")
    done = micrograde("scaffold", "student-files", cwd=course)
    assert done.returncode == 0, done.stderr
    return course


def repository(tmp_path: Path, source: str) -> Path:
    """A course repository as its students and its CI have it: the course's micrograde.toml, the work in exercises/."""
    folder = tmp_path / "repository"
    (folder / "exercises").mkdir(parents=True)
    shutil.copy(COURSE, folder / "micrograde.toml")
    (folder / "exercises" / "engine.py").write_text(source)
    return folder


def batch_route(folder: Path) -> tuple[float, float]:
    """``micrograde batch`` in the course's folder: a student's copy of the files, its micrograde.toml too."""
    (folder / "class" / "alice").mkdir(parents=True)
    shutil.copy(folder / "exercises" / "engine.py", folder / "class" / "alice")
    shutil.copy(COURSE, folder / "class" / "alice" / "micrograde.toml")
    done = micrograde("batch", "class", "--out", "out", "--jobs", "1", cwd=folder, timeout=600)
    assert done.returncode == 0, done.stderr
    [row] = csv.DictReader((folder / "out" / "grades.csv").open())
    report = json.loads((folder / "out" / "reports" / "alice.json").read_text())
    assert any("in the submission's folder" in w and "was ignored" in w for w in report["warnings"])
    return float(row["score"]), float(row["max_score"])


def filled_notebook(scaffolded: Path, source: str) -> nbformat.NotebookNode:
    book = nbformat.read(scaffolded / "student-files" / "micrograd.ipynb", as_version=4)
    value, train = source.split("\n\ndef train_step")
    for cell in book.cells:
        if cell.cell_type == "code" and cell.source.startswith("class Value"):
            cell.source = value.split("\n\n\n", 1)[1]
        elif cell.cell_type == "code" and cell.source.startswith("def train_step"):
            cell.source = "def train_step" + train
    return book


def kernel_route(scaffolded: Path, source: str, elsewhere: Path) -> tuple[tuple[float, float], str]:
    """check() in the scaffold's notebook, the notebook alone in an empty folder, run in a real kernel there."""
    import nbclient

    elsewhere.mkdir()
    book = filled_notebook(scaffolded, source)
    nbformat.write(book, elsewhere / "micrograd.ipynb")
    assert [p.name for p in elsewhere.iterdir()] == ["micrograd.ipynb"]
    nbclient.NotebookClient(book, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(elsewhere)}}).execute()
    shown = book.cells[-1].outputs[-1]["data"]["text/plain"]
    total = re.search(r"^  total\s+(\S+) / (\S+)", shown, re.M)
    return (float(total.group(1)), float(total.group(2))), shown


def script_route(scaffolded: Path, source: str, folder: Path) -> tuple[tuple[float, float], str]:
    """check() from a script beside the scaffold's files (their micrograde.toml beside it)."""
    shutil.copytree(scaffolded / "student-files", folder)
    (folder / "engine.py").write_text(source)
    (folder / "run.py").write_text("from engine import Value, train_step\nfrom grader import check\n\n"
                                   "check(Value, train_step)\n")
    done = subprocess.run([sys.executable, "run.py"], cwd=folder, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    total = re.search(r"^  total\s+(\S+) / (\S+)", done.stdout, re.M)
    return (float(total.group(1)), float(total.group(2))), done.stdout


@pytest.fixture(scope="module")
def nbgrader_totals(tmp_path_factory, scaffolded) -> dict[str, tuple[float, float]]:
    """nbgrader's gradebook, its notebook written by the template in the course's folder without --config."""
    return nbgrader_course(tmp_path_factory.mktemp("nbgrader"), scaffolded, SUBMISSIONS)


@pytest.mark.parametrize("name", list(SUBMISSIONS))
def test_one_course_one_score_on_every_route_none_of_them_told_the_course(tmp_path, scaffolded, nbgrader_totals,
                                                                          name):
    source = SUBMISSIONS[name]
    folder = repository(tmp_path, source)
    staff = staff_report(folder, folder)  # the course folder's micrograde.toml, found as every route finds it
    total = (staff["score"], staff["max_score"])
    assert total[1] == FULL and list(staff["targets"]) == ["add", "mul", "relu", "exp", "truediv", "backward",
                                                           "train_step"]
    assert staff["config"]["source"] == "micrograde.toml"
    if name == "correct":
        assert total == (FULL, FULL) and staff["diagnoses"] == []
    else:
        assert total[0] < FULL and total[0] != int(total[0])  # a fraction of a point lost
        expressions = [c["counterexample"]["expression"] for c in staff["checks"] if c["counterexample"]]
        expressions += [d["counterexample"]["expression"] for d in staff["diagnoses"] if d.get("counterexample")]
        assert expressions and all(course_ops(e) <= OPS for e in expressions), expressions
    exact, whole_points = student_routes(folder, tmp_path, folder)
    exact |= {"batch": batch_route(folder), "nbgrader": nbgrader_totals[name]}
    exact["check() from a script"], printed = script_route(scaffolded, source, tmp_path / "script")
    exact["check() in a kernel, the notebook alone"], shown = kernel_route(scaffolded, source, tmp_path / "elsewhere")
    for route, points in exact.items():
        assert points == pytest.approx(total), route
    for route, points in whole_points.items():
        assert points == whole(staff), route
    for text in (printed, shown):
        # The learner's tanh, which the course does not grade, is said to be not graded, and nowhere else.
        graded, _, ungraded = text.partition("Not graded (")
        assert "tanh" not in graded and "Value.tanh (a method" in " ".join(ungraded.split()), text
        assert all(course_ops(e) <= OPS for e in shown_expressions(text)), text


def test_a_route_that_cannot_know_the_course_refuses_in_one_line_naming_its_flag(tmp_path, scaffolded):
    """The scaffold's files graded where the course's micrograde.toml is not: each route that would otherwise
    grade the classic exercise refuses, naming the flag that tells it the course; told, it grades the course and
    says what the submission carried that differs."""
    work = tmp_path / "work"
    shutil.copytree(scaffolded / "student-files", work)
    book = filled_notebook(scaffolded, engine())
    nbformat.write(book, work / "micrograd.ipynb")
    (work / "micrograde.toml").unlink()  # a download of the files, without the course's file
    shutil.copytree(work, tmp_path / "class" / "alice")
    done = micrograde("grade", "work/micrograd.ipynb", cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "pass --config FILE" in done.stderr
    assert "micrograd.ipynb was made for a course" in done.stderr
    done = micrograde("batch", "class", "--out", "out", cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "pass --config FILE" in done.stderr
    pytest_run = subprocess.run([str(Path(sys.executable).parent / "pytest"), "-p", "no:cacheprovider",
                                 "--micrograde", "work"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert pytest_run.returncode == 4 and "pass --micrograde-config FILE" in pytest_run.stderr
    assert "passed" not in pytest_run.stdout
    (tmp_path / "work" / "micrograde.toml").write_text(COURSE.read_text())  # beside the work, not where it runs
    done = micrograde("grade", "work", cwd=tmp_path)
    assert done.returncode == 2 and "work/micrograde.toml configures a course" in done.stderr
    other = tmp_path / "other.toml"
    other.write_text(COURSE.read_text().replace("points = 15", "points = 16"))
    report = json.loads(micrograde("grade", "work/micrograd.ipynb", "--config", str(other), "--format", "json",
                                   cwd=tmp_path).stdout)
    assert report["max_score"] == FULL + 1
    assert any(w.startswith("micrograd.ipynb was made for another course configuration") for w in report["warnings"])


def test_a_notebook_whose_course_was_stripped_refuses_rather_than_grade_the_classic_exercise(tmp_path, scaffolded):
    """The scaffold's notebook with its metadata stripped (as some tools strip it), alone in a folder: its grading
    cell still names the course it was made for, so check() in a real kernel refuses in one line, naming
    config=, instead of grading the classic exercise; with the course's file beside it, it grades the course."""
    import nbclient

    book = filled_notebook(scaffolded, engine())
    del book.metadata["micrograde"]
    nbformat.write(book, tmp_path / "micrograd.ipynb")
    ran = nbclient.NotebookClient(book, timeout=600, kernel_name="python3", allow_errors=True,
                                  resources={"metadata": {"path": str(tmp_path)}})
    ran.execute()
    [error] = book.cells[-1].outputs
    assert error["output_type"] == "error" and len(error["traceback"]) == 1
    assert "made for a course" in error["traceback"][0] and 'config="PATH"' in error["traceback"][0]
    shutil.copy(COURSE, tmp_path / "micrograde.toml")
    book = nbformat.read(tmp_path / "micrograd.ipynb", as_version=4)
    nbclient.NotebookClient(book, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
    assert re.search(r"^  total\s+71 / 71", book.cells[-1].outputs[-1]["data"]["text/plain"], re.M)
