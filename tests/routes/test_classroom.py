"""GitHub Classroom and Classroom 50, driven as their runners drive them.

The GitHub Classroom workflow is executed locally the way Actions and the
classroom actions would run it: steps in order honouring ``if:``, each
command-grader step's ``result`` output built as that action builds it
(base64 of a JSON result), and the grading reporter's parsing of the
``<STEP ID upper-cased>_RESULTS`` variables, re-implemented from its source,
adding up the points Classroom receives. The Classroom 50 ``autograder.py``
is run in a student checkout with the runner's environment variables, and its
``result.json`` checked against the ``classroom50/result/v1`` contract.
"""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import jsonschema
import pytest
import yaml
from helpers import SOLUTION, micrograde
from recipes import BIN, run_recipe
from test_ci_formats import BUGGY

CRASHING = SOLUTION.replace("        x = self.data\n", "        x = self.data\n        raise RuntimeError('boom')\n", 1)


def checkout(tmp_path: Path, engine: str) -> Path:
    """A student's repository as the Classroom template gives it, with their ``exercises/engine.py``."""
    repo = tmp_path / "student"
    (repo / "exercises").mkdir(parents=True)
    (repo / "exercises" / "engine.py").write_text(engine)
    return repo


def micrograde_score(repo: Path) -> float:
    report = micrograde("grade", str(repo / "exercises"), "--format", "json")
    return json.loads(report.stdout)["score"]


# --- GitHub Classroom --------------------------------------------------------------------------------

def parse_int(text: str) -> int | None:
    """JavaScript's ``parseInt(text)``: the leading whole number after blanks (``"1.25"`` is 1), NaN (None)
    when there is none."""
    found = re.match(r"\s*([+-]?\d+)", text)
    return int(found.group(1)) if found else None


def command_grader(inputs: dict, workspace: Path, path: str) -> tuple[bool, str]:
    """classroom-resources/autograding-command-grader (src/main.js): run ``command`` with its small
    environment (``PATH``, ``HOME``...), ``parseInt(max-score || 0)`` points if it exits 0, else 0; the
    ``result`` output is base64 of ``{version, status, max_score, tests: [{name, status, score...}]}``."""
    env = {"PATH": path, "HOME": os.environ.get("HOME", "/tmp"), "FORCE_COLOR": "true"}
    done = subprocess.run(inputs["command"], shell=True, cwd=workspace, env=env, capture_output=True, text=True,
                          timeout=float(inputs["timeout"]) * 60)
    status = "pass" if done.returncode == 0 else "fail"
    max_score = parse_int(str(inputs.get("max-score") or 0))
    result = {"version": 1, "status": status, "max_score": max_score,
              "tests": [{"name": inputs["test-name"], "status": status, "score": max_score if status == "pass" else 0,
                         "message": done.stdout, "test_code": inputs["command"], "filename": "", "line_no": 0,
                         "duration": 0}]}
    return status == "pass", base64.b64encode(json.dumps(result).encode()).decode()


def reporter_points(runners: str, env: dict[str, str]) -> tuple[float, float]:
    """classroom-resources/autograding-grading-reporter (src/main.js, src/notify-classroom.js): for each
    runner id, ``process.env[runner.trim().toUpperCase() + "_RESULTS"]``, base64-decoded JSON; the
    total adds up the tests' scores of every result with a ``max_score``."""
    total = maximum = 0.0
    for runner in runners.split(","):
        results = json.loads(base64.b64decode(env[f"{runner.strip().upper()}_RESULTS"]).decode("utf-8"))
        if not results.get("max_score"):
            continue
        maximum += results["max_score"]
        total += sum(test["score"] for test in results["tests"])
    return total, maximum


def expand(value: str, outputs: dict[str, dict[str, str]]) -> str:
    """``${{steps.ID.outputs.NAME}}`` as Actions expands it."""
    return re.sub(r"\$\{\{\s*steps\.([\w-]+)\.outputs\.([\w-]+)\s*\}\}",
                  lambda m: outputs.get(m.group(1), {}).get(m.group(2), ""), value)


def run_workflow(workflow: dict, workspace: Path, install: str, runner: Path | None = None,
                 really_install: bool = False) -> tuple[float, float]:
    """The job's steps in order: a step runs if every step before it succeeded, or if it says ``always()``.
    ``runner`` holds the runner's temporary folder (``RUNNER_TEMP``), ``GITHUB_PATH`` and the job's own
    ``TMPDIR``. The install step is run as written with ``really_install`` (offline, from
    ``PIP_FIND_LINKS``); else micrograde is taken from this venv."""
    assert workflow["name"] == "Autograding Tests"
    assert list(workflow["jobs"]) == ["run-autograding-tests"]
    runner = runner or Path(tempfile.mkdtemp(prefix="runner-"))
    for folder in ("temp", "tmp"):
        (runner / folder).mkdir(exist_ok=True)
    github_path = runner / "github_path"
    github_path.touch()
    failed, outputs, path = False, {}, os.environ["PATH"] if really_install else f"{BIN}:{os.environ['PATH']}"
    for step in workflow["jobs"]["run-autograding-tests"]["steps"]:
        condition = step.get("if", "success()")
        assert condition in ("success()", "always()"), condition
        if failed and condition != "always()":
            continue
        uses = step.get("uses", "")
        if "run" in step:
            if step.get("name") == "Install micrograde":
                assert f"pip install --quiet {install}\n" in step["run"], step["run"]
                if not really_install:
                    continue
            env = {**os.environ, "PATH": path, "RUNNER_TEMP": str(runner / "temp"), "GITHUB_PATH": str(github_path),
                   "TMPDIR": str(runner / "tmp")}
            done = subprocess.run(["bash", "-e", "-c", step["run"]], cwd=workspace, env=env, capture_output=True,
                                  text=True)
            assert done.returncode == 0 or step.get("name") != "Install micrograde", done.stderr
            ok = done.returncode == 0
            # Actions puts what a step added to GITHUB_PATH first on the PATH of the steps after it.
            path = ":".join([*reversed(github_path.read_text().split()), path])
        elif uses.startswith("classroom-resources/autograding-command-grader@"):
            ok, result = command_grader(step["with"], workspace, path)
            outputs[step["id"]] = {"result": result}
        elif uses.startswith("classroom-resources/autograding-grading-reporter@"):
            env = {name: expand(value, outputs) for name, value in step["env"].items()}
            return reporter_points(step["with"]["runners"], env)
        else:
            assert uses.startswith(("actions/checkout@", "actions/setup-python@")), uses
            ok = True
        failed = failed or not ok
    raise AssertionError("the workflow has no grading reporter step")


INSTALL = "git+https://github.com/ORG/micrograde"  # as the docs' recipes have it


@pytest.fixture(scope="module")
def workflow(tmp_path_factory) -> dict:
    """The workflow, written by the docs' recipe in a template repository."""
    template = tmp_path_factory.mktemp("template")
    result = run_recipe("docs/ci.md", "## GitHub Classroom (legacy)", template)
    assert result.returncode == 0, result.stderr
    return yaml.safe_load((template / ".github" / "workflows" / "classroom.yml").read_text())


@pytest.mark.parametrize("engine, expected", [(SOLUTION, 100.0), (BUGGY, 78.0), (CRASHING, None)],
                         ids=["reference", "buggy", "crashing"])
def test_github_classroom_gives_micrograde_score(workflow, tmp_path, engine, expected):
    repo = checkout(tmp_path, engine)
    total, maximum = run_workflow(workflow, repo, INSTALL)
    assert maximum == 100.0
    assert total == micrograde_score(repo)
    if expected is not None:
        assert total == expected
    else:  # tanh crashes: its points are lost, the others' are not
        assert total == 85.0


def test_github_classroom_step_ids_and_variables(workflow):
    steps = workflow["jobs"]["run-autograding-tests"]["steps"]
    reporter = steps[-1]
    ids = [s["id"] for s in steps if "id" in s]
    assert reporter["with"]["runners"] == ",".join(ids)
    assert "ADD-FORWARD_RESULTS" in reporter["env"] and "MUL-REUSED-NODE_RESULTS" in reporter["env"]
    assert all(s.get("if") == "always()" for s in steps if "id" in s) and reporter["if"] == "always()"


def test_github_classroom_needs_an_install_source(tmp_path):
    result = micrograde("template", "github-classroom", str(tmp_path))
    assert result.returncode == 2 and "--install" in result.stderr and result.stderr.count("\n") == 1
    assert not (tmp_path / ".github").exists()


# --- Classroom 50 ----------------------------------------------------------------------------------------

UTC_SECOND = r"^\d{4}-\d{2}-\d{2}T([01]\d|2[0-3]):[0-5]\d:[0-5]\dZ$"
# The result.json contract, written from Classroom 50's "Advanced Autograding" wiki page.
RESULT_V1 = {
    "type": "object",
    "additionalProperties": False,
    "required": ["schema", "classroom", "assignment", "assignment_type", "owner", "submission", "commit", "release",
                 "review", "datetime", "score", "max-score", "tests"],
    "properties": {
        "schema": {"const": "classroom50/result/v1"},
        **{name: {"type": "string", "minLength": 1}
           for name in ("classroom", "assignment", "owner", "commit", "release", "review")},
        "assignment_type": {"enum": ["individual", "group"]},
        "submission": {"type": "string", "pattern": "^submit/"},
        "datetime": {"type": "string", "pattern": UTC_SECOND},
        "score": {"type": "integer", "minimum": 0},
        "max-score": {"type": "integer", "minimum": 0},
        "tests": {"type": "array", "items": {
            "type": "object", "additionalProperties": True,
            "required": ["test-name", "passed", "score", "max-score"],
            "properties": {"test-name": {"type": "string", "minLength": 1}, "passed": {"type": "boolean"},
                           "score": {"type": "integer", "minimum": 0},
                           "max-score": {"type": "integer", "minimum": 0}}}},
    },
}
RUNNER_ENV = {"CLASSROOM": "ml-2026", "ASSIGNMENT": "micrograd", "ASSIGNMENT_TYPE": "individual",
              "USERNAME": "alice", "OWNER": "alice", "SUBMISSION_TAG": "submit/2026-06-01T14-32-05Z-a1b2c3d",
              "COMMIT_URL": "https://github.com/ml-2026/micrograd-alice/commit/a1b2c3d",
              "RELEASE_URL": "https://github.com/ml-2026/micrograd-alice/releases/tag/submit/x",
              "REVIEW_URL": "https://github.com/ml-2026/micrograd-alice/compare/a...b"}


@pytest.fixture(scope="module")
def autograder(tmp_path_factory) -> Path:
    """The assignment's autograder.py, written by the docs' recipe in the classroom's folder."""
    classroom = tmp_path_factory.mktemp("ml-2026")
    result = run_recipe("docs/ci.md", "## Classroom 50", classroom)
    assert result.returncode == 0, result.stderr
    autograder = classroom / "autograders" / "micrograd" / "autograder.py"
    assert f"INSTALL = {json.dumps(INSTALL)}" in autograder.read_text()
    return autograder


def run_autograder(autograder: Path, repo: Path) -> tuple[subprocess.CompletedProcess, dict | None]:
    env = {**os.environ, **RUNNER_ENV}
    done = subprocess.run([sys.executable, str(autograder)], cwd=repo, env=env, capture_output=True, text=True,
                          timeout=300)
    result = repo / "result.json"
    return done, json.loads(result.read_text()) if result.exists() else None


def test_classroom50_result_field_by_field(autograder, tmp_path):
    repo = checkout(tmp_path, BUGGY)
    (repo / "result.json").write_text('{"score": 100}')  # a student's own result.json never counts
    done, result = run_autograder(autograder, repo)
    assert done.returncode == 0, done.stderr
    jsonschema.validate(result, RESULT_V1)
    assert result["schema"] == "classroom50/result/v1"
    assert (result["classroom"], result["assignment"], result["assignment_type"], result["owner"]) == (
        "ml-2026", "micrograd", "individual", "alice")
    assert result["submission"] == RUNNER_ENV["SUBMISSION_TAG"]
    assert (result["commit"], result["release"], result["review"]) == (
        RUNNER_ENV["COMMIT_URL"], RUNNER_ENV["RELEASE_URL"], RUNNER_ENV["REVIEW_URL"])
    assert result["score"] == 78 == micrograde_score(repo) and result["max-score"] == 100
    assert result["score"] == sum(t["score"] for t in result["tests"])
    graded = [t for t in result["tests"] if t["status"] != "not-graded"]
    assert len(graded) == 29
    # The solution's relu, which no target of the classic exercise reads: a test worth nothing, never passed.
    assert [(t["test-name"].split(" (")[0], t["passed"], t["score"], t["max-score"])
            for t in result["tests"] if t not in graded] == [("not-graded: Value.relu", False, 0, 0)]
    reused = next(t for t in result["tests"] if t["test-name"].startswith("mul.reused-node "))
    assert reused["passed"] is False and reused["score"] == 0 and reused["max-score"] == 3
    assert reused["diagnoses"] == ["grad-overwrite"] and reused["counterexample"]["expression"] == "(a * a)"
    passed = next(t for t in result["tests"] if t["test-name"].startswith("add.forward "))
    assert passed == {"test-name": passed["test-name"], "passed": True, "score": 3, "max-score": 3,
                      "status": "passed"}


def test_classroom50_reference_gets_full_marks(autograder, tmp_path):
    done, result = run_autograder(autograder, checkout(tmp_path, SOLUTION))
    assert done.returncode == 0 and result["score"] == result["max-score"] == 100
    assert all(t["passed"] for t in result["tests"] if t["status"] != "not-graded")
    assert [t["test-name"].split(" (")[0] for t in result["tests"] if t["status"] == "not-graded"] == [
        "not-graded: Value.relu"]


def test_classroom50_ungradable_submission_gets_a_result_that_says_why(autograder, tmp_path):
    repo = tmp_path / "student"
    (repo / "exercises").mkdir(parents=True)
    (repo / "exercises" / "notes.txt").write_text("nothing here")
    done, result = run_autograder(autograder, repo)
    assert done.returncode == 0, done.stderr
    jsonschema.validate(result, RESULT_V1)
    assert result["score"] == 0 and not any(t["passed"] for t in result["tests"])
    assert all("no .py or .ipynb" in t["message"] and t["diagnoses"] == [] for t in result["tests"])
    assert "no .py or .ipynb" in done.stderr
