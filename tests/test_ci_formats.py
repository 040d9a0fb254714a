"""Reports for CI systems and staff tools: JUnit, Gradescope, Markdown, GitHub Actions, templates."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import xml.etree.ElementTree as ET
import zipfile

import pytest
from helpers import SOLUTION, micrograde

from grader.spec.config import default
from grader.spec.exercise import Exercise

BUGGY = SOLUTION.replace("for node in reversed(topo):", "for node in topo:").replace(
    "self.grad += other.data * out.grad", "self.grad = other.data * out.grad").replace(
    "other.grad += self.data * out.grad", "other.grad = self.data * out.grad")

# The element model of Jenkins' junit-10.xsd: allowed children, allowed and required attributes.
JUNIT = {
    "testsuites": ({"testsuite"}, {"name", "time", "tests", "failures", "errors"}, set()),
    "testsuite": ({"testsuite", "properties", "testcase", "system-out", "system-err"},
                  {"name", "tests", "failures", "errors", "group", "time", "skipped", "timestamp", "hostname",
                   "id", "package", "file", "log", "url"}, {"name", "tests", "failures", "errors"}),
    "properties": ({"property"}, set(), set()),
    "property": (set(), {"name", "value"}, {"name", "value"}),
    "testcase": ({"skipped", "error", "failure", "system-out", "system-err"},
                 {"name", "time", "classname", "group"}, {"name"}),
    "failure": (set(), {"type", "message"}, set()),
    "error": (set(), {"type", "message"}, set()),
}


def assert_junit_valid(element: ET.Element) -> None:
    children, allowed, required = JUNIT[element.tag]
    assert set(element.attrib) <= allowed, (element.tag, element.attrib)
    assert required <= set(element.attrib), (element.tag, element.attrib)
    for child in element:
        assert child.tag in children, (element.tag, child.tag)
        assert_junit_valid(child)
    for attribute in ("time",):
        if attribute in element.attrib:
            float(element.attrib[attribute])


@pytest.fixture
def buggy(tmp_path):
    path = tmp_path / "engine.py"
    path.write_text(BUGGY)
    return path


def test_junit(buggy):
    result = micrograde("grade", str(buggy), "--format", "junit")
    assert result.returncode == 1
    root = ET.fromstring(result.stdout)
    assert_junit_valid(root)
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    assert list(suites) == ["add", "mul", "pow", "tanh", "backward", "train_step"]
    assert root.get("tests") == "29"
    assert suites["mul"].get("failures") == "2" and suites["add"].get("failures") == "0"
    properties = {p.get("name"): p.get("value") for p in suites["mul"].iter("property")}
    assert properties["score"] == "9" and properties["max_score"] == "15"
    assert properties["points.mul.reused-node"] == "0/3"
    failure = suites["mul"].find("testcase[@name='mul.reused-node']/failure")
    assert failure.get("type") == "grad-overwrite"
    assert "expression: (a * a)" in failure.text and "+=" in failure.text
    assert suites["add"].find("testcase[@name='add.forward']/failure") is None


def test_junit_for_a_load_error(tmp_path):
    path = tmp_path / "engine.py"
    path.write_text("def broken(:\n")
    root = ET.fromstring(micrograde("grade", str(path), "--format", "junit").stdout)
    assert_junit_valid(root)
    submission = next(s for s in root.iter("testsuite") if s.get("name") == "submission")
    assert submission.find("testcase/failure").get("type") == "load-error"


def test_gradescope(buggy):
    result = micrograde("grade", str(buggy), "--format", "gradescope")
    results = json.loads(result.stdout)
    assert set(results) >= {"score", "execution_time", "output", "tests"}
    assert results["score"] == 78.0 == sum(t["score"] for t in results["tests"])
    assert len(results["tests"]) == 29
    for test in results["tests"]:
        assert set(test) >= {"name", "score", "max_score", "status", "output", "visibility"}
        assert test["status"] in ("passed", "failed") and test["visibility"] == "visible"
    failed = next(t for t in results["tests"] if t["number"] == "mul.reused-node")
    assert failed["status"] == "failed" and failed["score"] == 0.0 and "grad-overwrite" in failed["output"]
    assert "[wrong-order] backward" in results["output"]


def test_markdown(buggy):
    text = micrograde("grade", str(buggy), "--format", "markdown").stdout
    assert text.startswith("## micrograde: 78 / 100")
    assert "| `__mul__` | 9 / 15 | 3 of 5 |" in text
    assert "**grad-overwrite**" in text and "```mermaid" in text


def test_fail_under(buggy):
    assert micrograde("grade", str(buggy), "--fail-under", "78").returncode == 0
    assert micrograde("grade", str(buggy), "--fail-under", "78.5").returncode == 1


def test_github_actions_annotations_and_summary(buggy, tmp_path, monkeypatch):
    summary = tmp_path / "summary.md"
    env = {**os.environ, "GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary),
           "GITHUB_WORKSPACE": str(tmp_path)}
    result = subprocess.run(["python", "-m", "grader", "grade", str(buggy), "--format", "json"],
                            capture_output=True, text=True, env=env, cwd=tmp_path)
    json.loads(result.stdout)  # the report on stdout stays clean
    errors = [line for line in result.stderr.splitlines() if line.startswith("::error ")]
    assert len(errors) == 2
    mul_line = BUGGY.splitlines().index("            self.grad = other.data * out.grad") + 1
    assert errors[0].startswith(f"::error file=engine.py,line={mul_line},title=micrograde grad-overwrite (mul)::")
    assert "%0A" not in errors[0].split("::", 2)[1]
    assert summary.read_text().startswith("## micrograde: 78 / 100")


def test_result_command(buggy, tmp_path):
    report = tmp_path / "report.json"
    micrograde("grade", str(buggy), "--format", "json", "--output", str(report))
    passed = micrograde("result", str(report), "add.forward")
    failed = micrograde("result", str(report), "mul.reused-node")
    assert passed.returncode == 0 and failed.returncode == 1
    assert "grad-overwrite" in failed.stdout
    missing = micrograde("result", str(report), "nope.nothing")
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1


def test_github_classroom_template(tmp_path):
    result = micrograde("template", "github-classroom", str(tmp_path), "--install", "git+https://example.org/m.git")
    assert result.returncode == 0
    workflow = (tmp_path / ".github" / "workflows" / "classroom.yml").read_text()
    assert "python -m pip install git+https://example.org/m.git" in workflow
    assert "micrograde grade exercises/ --format json --output micrograde.json" in workflow
    exercise = Exercise(default())
    every = [(t, c) for t in exercise.targets for c in t.checks]
    assert workflow.count("uses: classroom-resources/autograding-command-grader@v1") == len(every)
    scores = [float(line.split(":")[1]) for line in workflow.splitlines() if "max-score:" in line]
    assert sum(scores) == 100.0 and scores[0] == every[0][0].points_of(every[0][1])
    for _, check in every:
        assert f"command: micrograde result micrograde.json {check.id}" in workflow
    assert "autograding-grading-reporter@v1" in workflow and "MUL_REUSED_NODE_RESULTS" in workflow
    assert "\t" not in workflow


def run_autograder(template: dict, root, submission: str, name: str = "engine.py"):
    (root / "submission").mkdir(parents=True)
    (root / "submission" / name).write_text(submission)
    env = {**os.environ, "MICROGRADE_AUTOGRADER_ROOT": str(root)}
    subprocess.run([str(template["run_autograder"])], check=True, env=env, timeout=300)
    return json.loads((root / "results" / "results.json").read_text())


@pytest.fixture
def gradescope_template(tmp_path):
    out = tmp_path / "autograder-files"
    result = micrograde("template", "gradescope", str(out))
    assert result.returncode == 0, result.stderr
    return {"dir": out, "run_autograder": out / "run_autograder", "setup": out / "setup.sh"}


def test_gradescope_template_files(gradescope_template):
    for name in ("run_autograder", "setup"):
        assert gradescope_template[name].stat().st_mode & stat.S_IXUSR
    assert subprocess.run(["bash", "-n", str(gradescope_template["setup"])]).returncode == 0
    with zipfile.ZipFile(gradescope_template["dir"] / "autograder.zip") as archive:
        names = archive.namelist()
        assert "setup.sh" in names and "run_autograder" in names
        assert "micrograde/grader/child/harness.py" in names and "micrograde/pyproject.toml" in names
        assert (archive.getinfo("run_autograder").external_attr >> 16) & stat.S_IXUSR


def test_run_autograder_writes_results(gradescope_template, tmp_path):
    results = run_autograder(gradescope_template, tmp_path / "root", BUGGY)
    assert results["score"] == 78.0 and len(results["tests"]) == 29


def test_run_autograder_with_nothing_gradable(gradescope_template, tmp_path):
    results = run_autograder(gradescope_template, tmp_path / "root", "hello", name="notes.txt")
    assert results["score"] == 0.0 and "no .py or .ipynb" in results["output"]
