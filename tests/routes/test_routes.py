"""One course, one score, every route: correct and buggy submissions graded through every way a course can
grade them, each through its real consumer, each route's total held to the staff report's.

The first course (``courses/route-matrix.toml``) grades relu, exp and division, no tanh, hides a check until
release and has checks worth fractional points; the second (``courses/route-knobs.toml``) adds what a course
says of its own exercise: a given part, reflected operators not asked for, checks weighted unevenly, a check
off, a backward() convention. Routes that carry points exactly (``grade`` in JSON and text, ``batch``,
Gradescope, the pytest plugin, PrairieLearn, nbgrader) give the staff report's total; those that count whole
points only (Classroom 50's contract, GitHub Classroom's ``parseInt``) give each target's score rounded half
up, as docs/ci.md says, and the course's full marks to a correct submission.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import math
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import nbformat
import pytest
import yaml
from helpers import micrograde
from opmutants import WRITTEN, engine
from recipes import BIN
from test_classroom import RESULT_V1, RUNNER_ENV, run_workflow

COURSES_DIR = Path(__file__).parents[1] / "courses"
COURSE = COURSES_DIR / "route-matrix.toml"
KNOBS = Path(__file__).parents[1] / "courses" / "route-knobs.toml"
PL_SCHEMA = json.loads((Path(__file__).parents[1] / "schemas" / "prairielearn-results.schema.json").read_text())
BACKWARD_IN_ORDER = "        for node in reversed(topo):\n            node._backward()"
SUBMISSIONS = {
    "correct": engine(),
    # exp forgets out.grad: 2.5 of its 10 points (its forward check), a fraction of a whole point lost
    "exp-forgets-out-grad": engine({**WRITTEN, "exp": dataclasses.replace(WRITTEN["exp"], out_grad=False)}),
    # division's other operand gets a wrong gradient, and backward runs in the wrong order: the check hidden
    # until release fails too
    "truediv-and-order": engine({**WRITTEN, "truediv": dataclasses.replace(
        WRITTEN["truediv"], grads=(WRITTEN["truediv"].grads[0], ("other", "(-self.data / other.data)")))}).replace(
        BACKWARD_IN_ORDER, "        for node in topo:\n            node._backward()"),
}
ZEROES_FIRST = "        build_topo(self)\n        for v in topo:\n            v.grad = 0.0\n"
KNOB_SUBMISSIONS = {
    "correct": engine(),
    # the course's convention: backward() zeroes the graph's gradients first (accepted, full marks)
    "zeroes-first": engine().replace("        build_topo(self)\n", ZEROES_FIRST),
    # mul overwrites gradients (its weighted reused-node and generated checks: 1 9/11 + 10/11 points), and the
    # given __add__ broken the same way (worth nothing, said)
    "mul-and-given-add": engine({**WRITTEN, "mul": dataclasses.replace(WRITTEN["mul"], assign=(True, True)),
                                 "add": dataclasses.replace(WRITTEN["add"], assign=(True, True))}),
}
# Each course, its submissions and its full marks.
COURSES = {COURSE: (SUBMISSIONS, 81.0), KNOBS: (KNOB_SUBMISSIONS, 49.0)}
PYTEST = str(Path(sys.executable).parent / "pytest")


def given(course: Path) -> tuple[list[str], Path | None]:
    """How a command is told ``course``: a file is ``--config FILE``; a folder is the course's own, holding its
    ``micrograde.toml``, where the command runs without being told (``grader.course``)."""
    return ([], course) if course.is_dir() else (["--config", str(course)], None)


def exercises(folder: Path, source: str) -> Path:
    """A student's checkout: ``exercises/engine.py``."""
    (folder / "exercises").mkdir(parents=True)
    (folder / "exercises" / "engine.py").write_text(source)
    return folder


def whole(staff: dict) -> tuple[int, int]:
    """The staff report's total as routes of whole points carry it: each target's score rounded half up."""
    return (sum(math.floor(t["score"] + 0.5) for t in staff["targets"].values()),
            sum(math.floor(t["max_score"] + 0.5) for t in staff["targets"].values()))


def staff_report(folder: Path, course: Path) -> dict:
    flag, where = given(course)
    result = micrograde("grade", str(folder / "exercises"), *flag, "--format", "json", "--audience", "staff",
                        cwd=where)
    assert result.returncode in (0, 1), result.stderr
    return json.loads(result.stdout)


def grade_routes(folder: Path, course: Path) -> dict[str, tuple[float, float]]:
    """``micrograde grade`` as a student runs it: JSON and text."""
    flag, where = given(course)
    done = micrograde("grade", str(folder / "exercises"), *flag, "--format", "json", cwd=where)
    report = json.loads(done.stdout)
    text = micrograde("grade", str(folder / "exercises"), *flag, cwd=where).stdout
    total = re.search(r"^  total\s+(\S+) / (\S+)", text, re.M)
    return {"grade json": (report["score"], report["max_score"]),
            "grade text": (float(total.group(1)), float(total.group(2)))}


def gradescope_route(folder: Path, tmp_path: Path, course: Path) -> tuple[float, float]:
    """The Gradescope template's run_autograder, as Gradescope runs it, on /autograder/submission."""
    flag, where = given(course)
    assert micrograde("template", "gradescope", str(tmp_path / "gs"), *flag, cwd=where).returncode == 0
    root = tmp_path / "autograder"
    shutil.copytree(folder / "exercises", root / "submission")
    env = {**os.environ, "MICROGRADE_AUTOGRADER_ROOT": str(root), "PATH": f"{BIN}:{os.environ['PATH']}"}
    subprocess.run([str(tmp_path / "gs" / "run_autograder")], env=env, check=True, timeout=300)
    results = json.loads((root / "results" / "results.json").read_text())
    return results["score"], sum(t["max_score"] for t in results["tests"])


def classroom50_route(folder: Path, tmp_path: Path, course: Path) -> tuple[int, int]:
    """The Classroom 50 autograder, run in the student's checkout with the runner's variables; its
    result.json held to the contract and to the collector's own checks (whole numbers, score <= max)."""
    flag, where = given(course)
    assert micrograde("template", "classroom50", str(tmp_path / "c50"), "--install", "micrograde", *flag,
                      cwd=where).returncode == 0
    done = subprocess.run([sys.executable, str(tmp_path / "c50" / "autograder.py")], cwd=folder,
                          env={**os.environ, **RUNNER_ENV}, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    result = json.loads((folder / "result.json").read_text())
    jsonschema.validate(result, RESULT_V1)
    assert all(t["score"] <= t["max-score"] for t in result["tests"]) and result["score"] <= result["max-score"]
    assert result["score"] == sum(t["score"] for t in result["tests"])
    return result["score"], result["max-score"]


def github_classroom_route(folder: Path, tmp_path: Path, course: Path) -> tuple[float, float]:
    """The GitHub Classroom workflow, its steps run as Actions runs them, the command grader's parseInt and
    the reporter's sums reproduced (test_classroom); no temporary folder left behind."""
    flag, where = given(course)
    assert micrograde("template", "github-classroom", str(tmp_path / "gh"), "--install", "micrograde", *flag,
                      cwd=where).returncode == 0
    workflow = yaml.safe_load((tmp_path / "gh" / ".github" / "workflows" / "classroom.yml").read_text())
    runner = tmp_path / "runner"
    runner.mkdir()
    points = run_workflow(workflow, folder, "micrograde", runner)
    assert list((runner / "tmp").iterdir()) == []
    return points


def pytest_route(folder: Path, course: Path) -> tuple[float, float]:
    """``pytest --micrograde exercises/`` as people type it, points from its JUnit XML."""
    junit = folder / "junit.xml"
    flag, _ = given(course)  # run where the student's checkout is: the course folder, when it is one
    subprocess.run([PYTEST, "-p", "no:cacheprovider", "--micrograde", "exercises/",
                    *(["--micrograde-config", flag[1]] if flag else []), f"--junitxml={junit}"], cwd=folder,
                   capture_output=True, timeout=300)
    root = ET.parse(junit).getroot()
    properties = [(p.get("name"), float(p.get("value"))) for p in root.iter("property")]
    return (sum(v for n, v in properties if n == "points"), sum(v for n, v in properties if n == "max_points"))


def prairielearn_route(folder: Path, tmp_path: Path, course: Path) -> tuple[float, float]:
    """The PrairieLearn grader's entrypoint on /grade/student; results.json held to PrairieLearn's documented
    format. PrairieLearn awards score x the question's points: the question worth the course's total."""
    flag, where = given(course)
    assert micrograde("template", "prairielearn", str(tmp_path / "pl"), *flag, cwd=where).returncode == 0
    root = tmp_path / "grade"
    shutil.copytree(folder / "exercises", root / "student")
    env = {**os.environ, "MICROGRADE_GRADE_ROOT": str(root), "PATH": f"{BIN}:{os.environ['PATH']}"}
    subprocess.run([sys.executable, str(tmp_path / "pl" / "run_grader")], env=env, check=True, timeout=300)
    results = json.loads((root / "results" / "results.json").read_text())
    jsonschema.validate(results, PL_SCHEMA)
    assert results["gradable"] is True
    most = sum(t["max_points"] for t in results["tests"])
    assert sum(t["points"] for t in results["tests"]) == pytest.approx(results["score"] * most)
    return results["score"] * most, most


@pytest.fixture(scope="module")
def nbgrader_totals(tmp_path_factory) -> dict[tuple[Path, str], tuple[float, float]]:
    """A real ``nbgrader autograde`` of each course's submissions, each a copy of the released notebook with the
    class written in: the gradebook's total of each."""
    return {(course, student): totals for course, (submissions, _) in COURSES.items()
            for student, totals in nbgrader_course(tmp_path_factory.mktemp("nbgrader-course"), course,
                                                   submissions).items()}


def nbgrader_course(course: Path, config: Path, submissions: dict[str, str]) -> dict[str, tuple[float, float]]:
    from nbgrader.api import Gradebook

    flag, where = given(config)
    assert micrograde("template", "nbgrader", str(course / "source" / "micrograd"), *flag, cwd=where).returncode == 0
    (course / "nbgrader_config.py").write_text(f"c = get_config()\nc.CourseDirectory.root = {str(course)!r}\n")
    nbgrader = [str(Path(sys.executable).parent / "nbgrader")]
    subprocess.run([*nbgrader, "generate_assignment", "micrograd", "--force"], cwd=course, check=True,
                   capture_output=True, timeout=300)
    released = nbformat.read(course / "release" / "micrograd" / "micrograd.ipynb", as_version=4)
    for student, source in submissions.items():
        book = nbformat.from_dict(json.loads(json.dumps(released)))
        value, train = source.split("\n\ndef train_step")
        for cell in book.cells:
            if cell.cell_type == "code" and cell.source.startswith("class Value"):
                cell.source = value.split("\n\n\n", 1)[1]
            elif cell.cell_type == "code" and cell.source.startswith("def train_step"):
                cell.source = "def train_step" + train
        (course / "submitted" / student / "micrograd").mkdir(parents=True)
        nbformat.write(book, course / "submitted" / student / "micrograd" / "micrograd.ipynb")
    subprocess.run([*nbgrader, "autograde", "micrograd", "--force"], cwd=course, check=True, capture_output=True,
                   timeout=900)
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        found = {s: gradebook.find_submission("micrograd", s) for s in submissions}
        return {s: (submission.score, submission.max_score) for s, submission in found.items()}


@pytest.fixture(scope="module")
def batch_totals(tmp_path_factory) -> dict[tuple[Path, str], tuple[float, float]]:
    """``micrograde batch`` of each course's submissions, one folder a student: grades.csv's score and
    max_score."""
    totals = {}
    for course, (submissions, _) in COURSES.items():
        folder = tmp_path_factory.mktemp("batch")
        for student, source in submissions.items():
            (folder / "submissions" / student).mkdir(parents=True)
            (folder / "submissions" / student / "engine.py").write_text(source)
        done = micrograde("batch", str(folder / "submissions"), "--out", str(folder / "out"), "--config",
                          str(course), "--jobs", "2", timeout=600)
        assert done.returncode in (0, 1), done.stderr
        with open(folder / "out" / "grades.csv", newline="") as fh:
            totals |= {(course, row["id"]): (float(row["score"]), float(row["max_score"]))
                       for row in csv.DictReader(fh)}
    return totals


CASES = [(course, name) for course, (submissions, _) in COURSES.items() for name in submissions]


@pytest.mark.parametrize(("course", "name"), CASES, ids=[f"{c.stem}-{n}" for c, n in CASES])
def test_every_route_gives_the_staff_reports_total(tmp_path, course, name, batch_totals, nbgrader_totals):
    submissions, full = COURSES[course]
    folder = exercises(tmp_path / "student", submissions[name])
    staff = staff_report(folder, course)
    total = (staff["score"], staff["max_score"])
    assert total[1] == full
    if name in ("correct", "zeroes-first"):
        assert total == (full, full) and staff["diagnoses"] == []
    else:
        assert total[0] < full and total[0] != math.floor(total[0])  # a fraction of a point lost
    exact, whole_points = student_routes(folder, tmp_path, course)
    exact |= {"batch": batch_totals[course, name], "nbgrader": nbgrader_totals[course, name]}
    for route, points in exact.items():
        assert points == pytest.approx(total), route
    for route, points in whole_points.items():
        assert points == whole(staff), route
        if total[0] == full:
            assert points == total, route


def student_routes(folder: Path, tmp_path: Path, course: Path) -> tuple[dict, dict]:
    """The totals of the routes a student's repository goes through: those that carry points exactly, and
    those that carry whole points only (Classroom 50, GitHub Classroom)."""
    exact = {**grade_routes(folder, course), "gradescope": gradescope_route(folder, tmp_path, course),
             "pytest": pytest_route(folder, course), "prairielearn": prairielearn_route(folder, tmp_path, course)}
    return exact, {"classroom50": classroom50_route(folder, tmp_path, course),
                   "github classroom": github_classroom_route(folder, tmp_path, course)}


# Real assignments' courses (tests/assignments/, docs/courses.md): targets of every kind, graded in the course's
# own notebook or folder; a learner's submission of each that loses part of the points.
ASSIGNMENT_CASES = [("karpathy-exercises", "karpathy_exercises/step_and_exp.ipynb"),
                    ("tutorial-deep", "tutorial_deep/neuron_no_bias.ipynb"),
                    ("dl-course-hw1", "dl_course_hw1/sgd_sign")]


@pytest.mark.parametrize(("course", "submission"), ASSIGNMENT_CASES, ids=[c for c, _ in ASSIGNMENT_CASES])
def test_an_assignments_course_gives_the_staff_reports_total_on_every_route(tmp_path, course, submission):
    """A course file with functions, modules, optimizers, training functions and tensor ops, named as the
    course names them (``SGD.step``, ``Module.parameters``), through every route a student's repository
    goes: the same total as the staff report's."""
    config = COURSES_DIR / f"{course}.toml"
    source = COURSES_DIR.parent / "assignments" / submission
    folder = tmp_path / "student"
    if source.is_dir():
        shutil.copytree(source, folder / "exercises")
    else:
        (folder / "exercises").mkdir(parents=True)
        shutil.copy(source, folder / "exercises" / source.name)
    staff = staff_report(folder, config)
    total = (staff["score"], staff["max_score"])
    assert 0 < total[0] < total[1], total
    exact, whole_points = student_routes(folder, tmp_path, config)
    for route, points in exact.items():
        assert points == pytest.approx(total), route
    for route, points in whole_points.items():
        assert points == whole(staff), route


def test_a_broken_given_part_costs_nothing_on_any_route_and_is_said(tmp_path):
    """The knobs' course: the given __add__ broken is worth nothing everywhere (the totals above), and the
    student is told on the routes that show diagnoses."""
    folder = exercises(tmp_path / "student", KNOB_SUBMISSIONS["mul-and-given-add"])
    staff = staff_report(folder, KNOBS)
    assert staff["targets"]["add"] == {"score": 0.0, "max_score": 0.0, "given": True}
    [given] = [d for d in staff["diagnoses"] if d["target"] == "add"]
    assert given["code"] == "grad-overwrite" and given["message"].startswith("This is the course's own code")
    assert "mul" in {d["target"] for d in staff["diagnoses"]}
    assert whole(staff) == (46, 49)  # mul: 7 3/11, rounded to 7


def test_the_prairielearn_recipe_and_its_try_out(tmp_path):
    """The docs' two PrairieLearn blocks: the grader's files, then its entrypoint on the untouched stubs."""
    import shutil

    from helpers import ROOT
    from recipes import run_recipe

    assert run_recipe("docs/ci.md", "## PrairieLearn", tmp_path).returncode == 0
    options = json.loads((tmp_path / "pl-grader" / "info.json").read_text())["externalGradingOptions"]
    assert options["entrypoint"] == "/opt/micrograde/run_grader" and 0 < options["timeout"] <= 600
    assert "/opt/micrograde/venv" in (tmp_path / "pl-grader" / "Dockerfile").read_text()
    shutil.copytree(ROOT / "exercises", tmp_path / "exercises")
    result = run_recipe("docs/ci.md", "## PrairieLearn", tmp_path, block=1)
    assert result.returncode == 0, result.stderr
    results = json.loads(result.stdout)
    jsonschema.validate(results, PL_SCHEMA)
    assert results["gradable"] is True and results["score"] == 0.0 and len(results["tests"]) == 29
    assert str(tmp_path) not in result.stdout  # the student's files are named, not the machine's paths
    nothing = tmp_path / "nothing"
    (nothing / "student").mkdir(parents=True)
    (nothing / "student" / "notes.txt").write_text("no code")
    subprocess.run([sys.executable, str(tmp_path / "pl-grader" / "run_grader")], check=True, timeout=300,
                   env={**os.environ, "MICROGRADE_GRADE_ROOT": str(nothing), "PATH": f"{BIN}:{os.environ['PATH']}"})
    results = json.loads((nothing / "results" / "results.json").read_text())
    jsonschema.validate(results, PL_SCHEMA)
    assert results["gradable"] is False and "no .py or .ipynb" in results["format_errors"][0]


def test_the_nbgrader_recipe(tmp_path):
    """The docs' nbgrader block: a locked, autograded test cell per target, worth its points."""
    from recipes import run_recipe

    (tmp_path / "micrograde.toml").write_text(COURSE.read_text())
    assert run_recipe("docs/ci.md", "## nbgrader on JupyterHub", tmp_path).returncode == 0
    book = nbformat.read(tmp_path / "source" / "micrograd" / "micrograd.ipynb", as_version=4)
    tests = [c for c in book.cells if c.metadata.get("nbgrader", {}).get("grade")]
    assert [(c.metadata.nbgrader["grade_id"], c.metadata.nbgrader["points"]) for c in tests] == [
        ("micrograde-add", 10), ("micrograde-mul", 10), ("micrograde-relu", 15), ("micrograde-exp", 10),
        ("micrograde-truediv", 6), ("micrograde-backward", 20), ("micrograde-train-step", 10)]
    assert all(c.metadata.nbgrader["locked"] for c in tests) and not any("check(" in c.source for c in book.cells)
