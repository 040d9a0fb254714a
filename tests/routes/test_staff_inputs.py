"""Staff inputs read like student input: course files whose ``[scaffold]`` names lead out of the folder, notebooks
to adopt that are malformed in the ways real files are, and every template carrying the course's very
configuration. Each bad input is one clear line and exit 2, with nothing written outside (or at all, for a
notebook refused half-way); never a traceback, never exit 3."""

from __future__ import annotations

import ast
import json
import subprocess
from pathlib import Path

import nbformat
import pytest
import yaml
from helpers import SOLUTION, micrograde

from grader import load_config
from grader.staff.adopt import CHECK_CELL

GRADING_CELL = CHECK_CELL.format(call="check()")  # the classic exercise's: it carries no course

COURSE = "[targets.add]\npoints = 10\n[targets.backward]\npoints = 10\n"
# A course file whose meaning hangs on its spelling: a computation's code with trailing spaces inside a multi-line
# string, a line that is the workflow's own delimiter, a tab.
SPELLED = '''[targets.add]
points = 5

[targets.softmax]
kind = "expression"
points = 5
inputs = ["a", "b"]
at = [[1.0, 2.0]]
result = "out"
code = """
s = (a.exp() + b.exp())   \t
MICROGRADE_COURSE_CONFIGURATION = 1
out = a.exp() / s\x20\x20
"""
'''


def files_under(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


@pytest.mark.parametrize("name", ["../escaped.py", "../../escaped.py", "/tmp/escaped-by-scaffold.py",
                                  "sub/../../escaped.py", "..\\\\escaped.py", "./", "a//b.py"])
@pytest.mark.parametrize("command", [["scaffold"], ["template", "nbgrader"]])
def test_scaffold_names_never_write_outside_the_folder(tmp_path, name, command):
    key = "engine_file" if command == ["scaffold"] else "notebook"
    (tmp_path / "course.toml").write_text(f'{COURSE}\n[scaffold]\n{key} = {json.dumps(name)}\n')
    out = tmp_path / "work" / "out"
    out.parent.mkdir()
    before = files_under(tmp_path)
    done = micrograde(*command, str(out), "--config", str(tmp_path / "course.toml"))
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert done.stderr.count("\n") == 1 and f"[scaffold] {key}" in done.stderr, done.stderr
    assert files_under(tmp_path) - before <= {"work/out"}
    assert not Path("/tmp/escaped-by-scaffold.py").exists()


def test_scaffold_writes_a_package_layout(tmp_path):
    """``micrograd/engine.py``: the folders made, the engine graded where it was written."""
    (tmp_path / "course.toml").write_text(f'{COURSE}\n[scaffold]\nengine_file = "micrograd/engine.py"\n')
    done = micrograde("scaffold", str(tmp_path / "out"), "--config", str(tmp_path / "course.toml"))
    assert done.returncode == 0, done.stderr
    engine = tmp_path / "out" / "micrograd" / "engine.py"
    assert "raise NotImplementedError" in engine.read_text()
    graded = micrograde("grade", str(engine), "--config", str(tmp_path / "course.toml"), "--format", "json")
    assert graded.returncode == 1 and json.loads(graded.stdout)["score"] == 0.0, graded.stderr


def notebook(cells: list[dict], minor: object = 5) -> dict:
    return {"nbformat": 4, "nbformat_minor": minor, "metadata": {}, "cells": cells}


def code(source: str, **extra) -> dict:
    return {"cell_type": "code", "metadata": {}, "source": source, "outputs": [], "execution_count": None,
            "id": f"c{abs(hash(source)) % 10**8}", **extra}


DEEP = "[" * 5000 + "]" * 5000
BAD_NOTEBOOKS = {
    "a string nbformat_minor": json.dumps(notebook([code(SOLUTION)], minor="5")),
    "a lone surrogate in an output": json.dumps(notebook([code(SOLUTION, outputs=[
        {"output_type": "stream", "name": "stdout", "text": "\ud800 broken"}])])),
    "output JSON nested 5000 deep": json.dumps(notebook([code(SOLUTION)]))[:-2] + ', "deep": ' + DEEP + "}]}",
    "a cell that is not a dict": json.dumps(notebook([["not", "a", "cell"]])),
}


@pytest.mark.parametrize("case", sorted(BAD_NOTEBOOKS))
def test_adopting_a_malformed_notebook_is_a_clear_error_and_writes_nothing(tmp_path, case):
    given = tmp_path / "course.ipynb"
    given.write_text(BAD_NOTEBOOKS[case], encoding="utf-8", errors="surrogatepass")
    done = micrograde("scaffold", str(tmp_path / "out"), "--adopt", str(given))
    assert done.returncode == 2 and done.stderr.count("\n") == 1, (done.returncode, done.stderr)
    assert not (tmp_path / "out").exists() or list((tmp_path / "out").iterdir()) == []


@pytest.mark.parametrize("case", sorted(BAD_NOTEBOOKS))
def test_grading_a_malformed_notebook_is_a_clear_error(tmp_path, case):
    """The same notebooks as submissions: exit 2 with one line (or the refusal a platform's format shows), never
    a RecursionError's exit 3."""
    given = tmp_path / "work.ipynb"
    given.write_text(BAD_NOTEBOOKS[case], encoding="utf-8", errors="surrogatepass")
    done = micrograde("grade", str(given))
    if case == "a lone surrogate in an output":  # outputs are never graded: the code is
        assert done.returncode == 0, done.stderr
        return
    assert done.returncode == 2 and done.stderr.count("\n") == 1, (done.returncode, done.stderr)
    report = micrograde("grade", str(given), "--format", "json")
    assert report.returncode == 1 and json.loads(report.stdout)["diagnoses"][0]["code"] == "load-error"


def test_readopting_never_duplicates_a_cell_id(tmp_path):
    """An adopted notebook whose grading cell a course edited (it no longer grades), adopted again: micrograde's
    cells get ids of their own, and nbformat takes the notebook."""
    first = tmp_path / "first" / "course.ipynb"
    first.parent.mkdir()
    first.write_text(json.dumps(notebook([code("class Value:\n    pass\n")])))
    assert micrograde("scaffold", str(tmp_path / "once"), "--adopt", str(first)).returncode == 0
    once = json.loads((tmp_path / "once" / "course.ipynb").read_text())
    for cell in once["cells"]:
        if cell["source"] == GRADING_CELL:
            cell["source"] = "# grading comes later\n"
    (tmp_path / "again").mkdir()
    (tmp_path / "again" / "course.ipynb").write_text(json.dumps(once))
    assert micrograde("scaffold", str(tmp_path / "twice"), "--adopt", str(tmp_path / "again" / "course.ipynb")
                      ).returncode == 0
    twice = nbformat.read(tmp_path / "twice" / "course.ipynb", as_version=4)
    nbformat.validate(twice)
    ids = [cell["id"] for cell in twice.cells]
    assert len(ids) == len(set(ids)) and twice.cells[-1].source == GRADING_CELL


def test_a_courses_own_check_helper_is_not_the_grading_cell(tmp_path):
    """A course whose cells call its own ``check(got, want)``: the adopted notebook still ends with the cell that
    grades, and that cell grades the learner's work in a real kernel."""
    given = tmp_path / "course.ipynb"
    given.write_text(json.dumps(notebook([
        code("def check(got, want):\n    assert abs(got - want) < 1e-9, (got, want)\n    print('ok')\n"),
        code(SOLUTION.split("\ndef train_step")[0]),
        code("check((Value(2.0) * Value(3.0)).data, 6.0)\n")])))
    done = micrograde("scaffold", str(tmp_path / "out"), "--adopt", str(given))
    assert done.returncode == 0, done.stderr
    adopted = json.loads((tmp_path / "out" / "course.ipynb").read_text())
    assert adopted["cells"][-1]["source"] == GRADING_CELL


def config_read_back(route: str, folder: Path, course: Path) -> str:
    """The course file a template grades with, as that template writes it when it runs."""
    if route == "github-classroom":
        workflow = yaml.safe_load((folder / ".github" / "workflows" / "classroom.yml").read_text())
        script = next(step["run"] for job in workflow["jobs"].values() for step in job["steps"]
                      if "MICROGRADE_COURSE_CONFIGURATION" in step.get("run", ""))
        writing = script.split("\nmicrograde grade")[0]
        runner = folder / "runner"
        runner.mkdir()
        subprocess.run(["bash", "-c", writing], env={"RUNNER_TEMP": str(runner), "PATH": "/usr/bin:/bin"}, check=True)
        return (runner / "micrograde-course" / course.name).read_text()
    if route == "prairielearn":
        return (folder / "micrograde.toml").read_text()
    template = folder / ("autograder.py" if route == "classroom50" else "run_autograder")
    assigned = {node.targets[0].id: node.value for node in ast.parse(template.read_text()).body
                if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)}
    return ast.literal_eval(assigned["CONFIG"])


@pytest.mark.parametrize("route", ["github-classroom", "classroom50", "gradescope", "prairielearn"])
@pytest.mark.parametrize("text", [SPELLED, "# a course note \u2028 \u0085 kept as written\n" + SPELLED,
                                  "[targets.add]\npoints = 10"],
                         ids=["trailing-spaces", "line-separator", "no-final-newline"])
def test_every_template_grades_with_the_very_configuration(tmp_path, route, text):
    course = tmp_path / "my course.toml"
    course.write_text(text, encoding="utf-8")
    extra = ["--install", "micrograde"] if route in ("github-classroom", "classroom50") else []
    done = micrograde("template", route, str(tmp_path / "out"), "--config", str(course), *extra)
    assert done.returncode == 0, done.stderr
    written = tmp_path / "read-back.toml"
    written.write_text(config_read_back(route, tmp_path / "out", course), encoding="utf-8")
    assert load_config(written).sha256 == load_config(course).sha256
    assert written.read_text(encoding="utf-8").rstrip("\n") == text.rstrip("\n")
