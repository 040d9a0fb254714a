"""A course configuration in a submission never configures its grading, on any route a course uses.

A student who commits a ``micrograde.toml`` (or a ``pyproject.toml`` with
``[tool.micrograde]``) that gives all the points to the one method they got
right would score 100 where the course gives 78: each template grades with the
course's own configuration, written into it, and the report says the
student's was ignored.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib

import pytest
from helpers import micrograde
from recipes import BIN
from test_ci_formats import BUGGY
from test_classroom import INSTALL, autograder, checkout, run_autograder, run_workflow, workflow  # noqa: F401
from test_pytest_plugin import COURSE, outcomes, pytest_micrograde

from grader.exercise import config

ALL_TO_ADD = "[targets.add]\npoints = 100\n"  # BUGGY's add is right: 100 / 100 if this were read
IGNORED = "was ignored: the course's own configuration grades it"


def ignored_files(report: dict) -> list[tuple[str, str]]:
    """Each course file the report says was ignored, and the folder it names: the submission's or the current."""
    found = [re.match(r"(\S+?)(?:'s \[tool.micrograde\] table)? in (the submission's folder|the current folder) ", w)
             for w in report["warnings"] if IGNORED in w]
    return sorted((m.group(1), m.group(2)) for m in found)


def hostile_checkout(tmp_path):
    repo = checkout(tmp_path, BUGGY)
    for where in (repo, repo / "exercises"):
        (where / "micrograde.toml").write_text(ALL_TO_ADD)
    (repo / "pyproject.toml").write_text("[project]\nname = 'mine'\n[tool.micrograde.targets.add]\npoints = 100\n")
    return repo


def test_the_templates_grade_with_the_course_configuration(mode, autograder, workflow, tmp_path):  # noqa: F811
    repo = hostile_checkout(tmp_path)
    done, result = run_autograder(autograder, repo)
    assert done.returncode == 0, done.stderr
    assert (result["score"], result["max-score"]) == (78, 100)
    assert run_workflow(workflow, repo, INSTALL) == (78.0, 100.0)
    report = json.loads((repo / "micrograde.json").read_text())
    assert ignored_files(report) == [("micrograde.toml", "the current folder"),
                                     ("micrograde.toml", "the submission's folder"),
                                     ("pyproject.toml", "the current folder")]


def test_gradescope_grades_with_the_course_configuration(tmp_path):
    template = tmp_path / "autograder-files"
    assert micrograde("template", "gradescope", str(template)).returncode == 0
    root = tmp_path / "autograder"
    (root / "submission").mkdir(parents=True)
    (root / "submission" / "engine.py").write_text(BUGGY)
    (root / "submission" / "micrograde.toml").write_text(ALL_TO_ADD)
    done = subprocess.run([sys.executable, str(template / "run_autograder")], capture_output=True, text=True,
                          env={**os.environ, "MICROGRADE_AUTOGRADER_ROOT": str(root),
                               "PATH": f"{BIN}:{os.environ['PATH']}"}, timeout=300)
    assert done.returncode == 0, done.stderr
    results = json.loads((root / "results" / "results.json").read_text())
    assert results["score"] == 78.0 and "micrograde.toml in the submission" in results["output"]


def test_a_course_configuration_given_to_a_template_is_the_one_it_carries(tmp_path):
    course = tmp_path / "course.toml"
    course.write_text("[targets.mul]\npoints = 10\n[targets.add]\npoints = 10\n")
    assert micrograde("template", "classroom50", str(tmp_path / "c50"), "--install", INSTALL,
                      "--config", str(course)).returncode == 0
    repo = hostile_checkout(tmp_path)
    done, result = run_autograder(tmp_path / "c50" / "autograder.py", repo)
    assert done.returncode == 0, done.stderr
    assert (result["score"], result["max-score"]) == (16, 20)  # the course's 20 points: add right, mul not all


def test_the_pytest_plugin_chooses_the_course_as_grade_does_and_ignores_the_submissions(tmp_path):
    """Run in the course repository, the plugin grades by its ``micrograde.toml`` as ``micrograde grade`` there
    does (the same score); the submission's own is ignored, said naming its folder; given the course's copy, the
    repository's is ignored too."""
    repo = hostile_checkout(tmp_path)
    grade = json.loads(micrograde("grade", "exercises", "--format", "json", cwd=repo).stdout)
    result, root = pytest_micrograde(repo, repo / "exercises", COURSE)
    total = sum(float(p.get("value")) for p in root.iter("property") if p.get("name") == "points")
    assert (total, len(outcomes(root))) == (grade["score"], 5) == (100.0, 5)  # ./micrograde.toml: add only
    assert "micrograde.toml in the submission's folder" in result.stdout and IGNORED in result.stdout
    course = tmp_path / "course.toml"
    course.write_text(config.DEFAULT)
    result, root = pytest_micrograde(repo, repo / "exercises", [*COURSE, "--micrograde-config", str(course)])
    total = sum(float(p.get("value")) for p in root.iter("property") if p.get("name") == "points")
    assert total == 78.0 and len(outcomes(root)) == 29
    assert "micrograde.toml in the current folder" in result.stdout


@pytest.mark.parametrize("route", ["grade --config", "batch"])
def test_grade_and_batch_ignore_the_submissions_configuration(route, tmp_path):
    repo = hostile_checkout(tmp_path)
    course = tmp_path / "course.toml"
    course.write_text((tmp_path / "student" / "micrograde.toml").read_text().replace("add", "tanh"))
    if route == "batch":
        assert micrograde("batch", str(tmp_path), "--out", str(tmp_path / "out"), "--config", str(course),
                          timeout=600).returncode == 0
        report = json.loads((tmp_path / "out" / "reports" / "student.json").read_text())
    else:
        done = micrograde("grade", "exercises", "--config", str(course), "--format", "json", cwd=repo)
        report = json.loads(done.stdout)
    assert (report["score"], report["max_score"]) == (100.0, 100.0)  # the course's: tanh only
    assert any(IGNORED in w for w in report["warnings"])


def test_staff_grading_in_a_course_repository_still_reads_its_micrograde_toml(tmp_path):
    repo = hostile_checkout(tmp_path)
    done = micrograde("grade", "exercises", "--format", "json", cwd=repo)
    report = json.loads(done.stdout)
    assert report["max_score"] == 100.0 and report["score"] == 100.0  # ./micrograde.toml: add only
    assert ignored_files(report) == [("micrograde.toml", "the submission's folder"),
                                     ("pyproject.toml", "the current folder")]


def test_the_default_written_as_a_micrograde_toml_is_the_default():
    """What ``micrograde template`` pins for the default course reads back as the configuration it grades with."""
    assert tomllib.loads(config.DEFAULT) == config.DEFAULT_TABLES
    pinned = config.parse(tomllib.loads(config.DEFAULT), "default")
    assert pinned == config.default() and "reference = 1e-6" in config.DEFAULT
