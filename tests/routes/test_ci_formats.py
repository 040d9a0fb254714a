"""Reports for CI systems and staff tools: JUnit, Gradescope, Markdown, GitHub Actions, templates."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import stat
import subprocess
import sys
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import jsonschema
import pytest
import xmlschema
import yaml
from helpers import ROOT, SOLUTION, micrograde
from recipes import run_recipe

from grader.diagnosis.findings import CheckResult, Diagnosis
from grader.exercise.config import default
from grader.exercise.targets import Exercise
from grader.report.classroom50 import render_classroom50
from grader.report.gradescope import render_gradescope
from grader.report.junit import render_junit
from grader.report.markdown import render_markdown
from grader.report.model import Report, render_json
from grader.report.text import render_text

BUGGY = SOLUTION.replace("for node in reversed(topo):", "for node in topo:").replace(
    "self.grad += other.data * out.grad", "self.grad = other.data * out.grad").replace(
    "other.grad += self.data * out.grad", "other.grad = self.data * out.grad")

JUNIT_XSD = xmlschema.XMLSchema(Path(__file__).parents[1] / "schemas" / "junit-10.xsd")
# Gradescope's results.json, written from its documented fields (gradescope-autograders.readthedocs.io, specs).
VISIBILITY = {"enum": ["hidden", "after_due_date", "after_published", "visible"]}
OUTPUT_FORMAT = {"enum": ["text", "html", "simple_format", "md", "ansi"]}
GRADESCOPE = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "score": {"type": "number"}, "execution_time": {"type": "number"}, "output": {"type": "string"},
        "output_format": OUTPUT_FORMAT, "test_output_format": OUTPUT_FORMAT, "test_name_format": OUTPUT_FORMAT,
        "visibility": VISIBILITY, "stdout_visibility": VISIBILITY, "extra_data": {"type": "object"},
        "tests": {"type": "array", "items": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "score": {"type": "number"}, "max_score": {"type": "number"},
                "status": {"enum": ["passed", "failed"]}, "name": {"type": "string"},
                "name_format": OUTPUT_FORMAT, "number": {"type": "string"}, "output": {"type": "string"},
                "output_format": OUTPUT_FORMAT, "tags": {"type": "array", "items": {"type": "string"}},
                "visibility": VISIBILITY, "extra_data": {"type": "object"},
            },
        }},
        "leaderboard": {"type": "array"},
    },
}


def assert_junit_valid(text: str) -> ET.Element:
    """Valid against Jenkins' junit-10.xsd, and parsed as CI reporters parse it."""
    JUNIT_XSD.validate(text)
    return ET.fromstring(text)


@pytest.fixture
def buggy(tmp_path):
    path = tmp_path / "engine.py"
    path.write_text(BUGGY)
    return path


def test_junit(buggy):
    result = micrograde("grade", str(buggy), "--format", "junit")
    assert result.returncode == 1
    root = assert_junit_valid(result.stdout)
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    # and the solution's relu, which the classic exercise does not grade, as a skipped test
    assert list(suites) == ["add", "mul", "pow", "tanh", "backward", "train_step", "not-graded"]
    assert root.get("tests") == "30"
    assert suites["mul"].get("failures") == "2" and suites["add"].get("failures") == "0"
    properties = {p.get("name"): p.get("value") for p in suites["mul"].iter("property")}
    assert properties["score"] == "9" and properties["max_score"] == "15"
    assert properties["points.mul.reused-node"] == "0/3"
    failure = suites["mul"].find("testcase[@name='mul.reused-node']/failure")
    assert failure.get("type") == "grad-overwrite"
    assert "expression: (a * a)" in failure.text and "+=" in failure.text
    assert suites["add"].find("testcase[@name='add.forward']/failure") is None
    times = [float(case.get("time")) for case in root.iter("testcase")]
    assert sum(times) > 0 and float(root.get("time")) == pytest.approx(sum(times), abs=0.01)


def test_junit_for_a_load_error(tmp_path):
    path = tmp_path / "engine.py"
    path.write_text("def broken(:\n")
    root = assert_junit_valid(micrograde("grade", str(path), "--format", "junit").stdout)
    submission = next(s for s in root.iter("testsuite") if s.get("name") == "submission")
    assert submission.find("testcase/failure").get("type") == "load-error"


def test_gradescope(buggy):
    result = micrograde("grade", str(buggy), "--format", "gradescope")
    results = json.loads(result.stdout)
    jsonschema.validate(results, GRADESCOPE)
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
    result = subprocess.run([sys.executable, "-m", "grader", "grade", str(buggy), "--format", "json"],
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
    # For whole-point steps: at least M of a target's checks passed (mul passed 3 of its 5).
    assert [micrograde("result", str(report), "mul", "--passed", m).returncode for m in "345"] == [0, 1, 1]
    assert micrograde("result", str(report), "nope", "--passed", "1").returncode == 2


def test_github_classroom_template(tmp_path):
    result = micrograde("template", "github-classroom", str(tmp_path), "--install", "git+https://example.org/m.git")
    assert result.returncode == 0
    workflow = (tmp_path / ".github" / "workflows" / "classroom.yml").read_text()
    assert '/micrograde-venv/bin/python" -m pip install --quiet git+https://example.org/m.git' in workflow
    grading = 'micrograde grade exercises/ --config "$course"/micrograde.toml --format json --output micrograde.json'
    assert grading in workflow
    exercise = Exercise(default())
    every = [(t, c) for t in exercise.targets for c in t.checks]
    assert workflow.count("uses: classroom-resources/autograding-command-grader@v1") == len(every)
    scores = [float(line.split(":")[1]) for line in workflow.splitlines() if "max-score:" in line]
    assert sum(scores) == 100.0 and scores[0] == every[0][0].points_of(every[0][1])
    steps = yaml.safe_load(workflow)["jobs"]["run-autograding-tests"]["steps"]
    commands = [s["with"]["command"] for s in steps if s.get("uses", "").endswith("autograding-command-grader@v1")]
    assert commands == [f"micrograde result micrograde.json {check.id}" for _, check in every]
    assert "autograding-grading-reporter@v1" in workflow and "MUL-REUSED-NODE_RESULTS" in workflow
    assert "\t" not in workflow


def run_autograder(template: dict, root, submission: str, name: str = "engine.py"):
    """Gradescope's run of ``run_autograder`` on ``submission``: its results, once it left nothing in the
    temporary directory (the course's configuration, the grade's working directory)."""
    (root / "submission").mkdir(parents=True)
    (root / "submission" / name).write_text(submission)
    (root / "tmp").mkdir()
    env = {**os.environ, "MICROGRADE_AUTOGRADER_ROOT": str(root), "TMPDIR": str(root / "tmp")}
    subprocess.run([str(template["run_autograder"])], check=True, env=env, timeout=300)
    assert list((root / "tmp").iterdir()) == []
    return json.loads((root / "results" / "results.json").read_text())


@pytest.fixture
def gradescope_template(tmp_path):
    """The autograder files, written by the docs' recipe."""
    result = run_recipe("docs/ci.md", "## Gradescope", tmp_path)
    assert result.returncode == 0, result.stderr
    out = tmp_path / "autograder-files"
    return {"dir": out, "run_autograder": out / "run_autograder", "setup": out / "setup.sh"}


def test_gradescope_template_files(gradescope_template):
    for name in ("run_autograder", "setup"):
        assert gradescope_template[name].stat().st_mode & stat.S_IXUSR
    assert subprocess.run(["bash", "-n", str(gradescope_template["setup"])]).returncode == 0
    with zipfile.ZipFile(gradescope_template["dir"] / "autograder.zip") as archive:
        names = archive.namelist()
        assert "setup.sh" in names and "run_autograder" in names
        assert "micrograde/grader/child/inside/protocol.py" in names and "micrograde/pyproject.toml" in names
        assert (archive.getinfo("run_autograder").external_attr >> 16) & stat.S_IXUSR


def test_run_autograder_writes_results(gradescope_template, tmp_path):
    results = run_autograder(gradescope_template, tmp_path / "root", BUGGY)
    jsonschema.validate(results, GRADESCOPE)
    assert results["score"] == 78.0 and len(results["tests"]) == 29
    # What the student reads names their files, never the machine's paths.
    assert results["output"].startswith("micrograde: submission\n") and str(tmp_path) not in json.dumps(results)


def test_trying_the_autograder_out_as_the_readme_says(gradescope_template, tmp_path):
    shutil.copytree(ROOT / "exercises", tmp_path / "exercises")
    result = run_recipe("docs/ci.md", "## Gradescope", tmp_path, block=1)
    assert result.returncode == 0, result.stderr
    results = json.loads(result.stdout)
    jsonschema.validate(results, GRADESCOPE)
    assert results["score"] == 0.0 and len(results["tests"]) == 29  # the untouched stubs


def test_run_autograder_with_nothing_gradable(gradescope_template, tmp_path):
    results = run_autograder(gradescope_template, tmp_path / "root", "hello", name="notes.txt")
    assert results["score"] == 0.0 and "submission: no .py or .ipynb" in results["output"]
    assert str(tmp_path) not in json.dumps(results) and "python yourfile.py" not in json.dumps(results)


ODD = "\x00 \x1b[2J \ud800 <script>alert(1)</script> __add__ *x*"
ODD_SUBMISSION = SOLUTION.replace(
    "        x = self.data\n", f"        x = self.data\n        print({ODD!r})\n        raise ValueError({ODD!r})\n", 1)


def parse(fmt: str, text: str) -> None:
    """Each format read by what reads it in real life, and nothing a terminal or parser would choke on."""
    text.encode("utf-8")  # no lone surrogate
    assert "\x00" not in text and "\x1b" not in text
    if fmt == "junit":
        assert_junit_valid(text)
    elif fmt == "gradescope":
        jsonschema.validate(json.loads(text), GRADESCOPE)
    elif fmt in ("json", "classroom50"):
        json.loads(text)
    elif fmt == "markdown":
        import mistune

        page = mistune.html(text)
        assert "<script>" not in page and "<strong>add</strong>" not in page and "__add__" in page


@pytest.mark.parametrize("fmt", ["text", "json", "junit", "gradescope", "classroom50", "markdown"])
def test_every_format_survives_odd_output(tmp_path, fmt):
    path = tmp_path / "engine.py"
    path.write_text(ODD_SUBMISSION)
    env = {**os.environ, "GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
           "GITHUB_WORKSPACE": str(tmp_path)}
    result = subprocess.run([sys.executable, "-m", "grader", "grade", str(path), "--format", fmt],
                            capture_output=True, env=env, cwd=ROOT)
    assert result.returncode == 1, result.stderr
    text = result.stdout.decode("utf-8")
    parse(fmt, text)
    assert "\\x00" in text  # shown as an escape, not dropped
    annotations = [line for line in result.stderr.decode("utf-8").splitlines() if line.startswith("::error ")]
    assert annotations and all("\x1b" not in line and "\x00" not in line for line in annotations)
    parse("markdown", (tmp_path / "summary.md").read_text(encoding="utf-8"))


def test_dunder_names_are_not_bold(buggy):
    import mistune

    page = mistune.html(micrograde("grade", str(buggy), "--format", "markdown").stdout)
    assert "<strong>mul</strong>" not in page and "__mul__ gets gradients right" in page


def hidden_report() -> Report:
    """A report whose ``backward.generated`` check is hidden until release, and fails."""
    checks = [CheckResult("add.forward", "add", "forward", "passed", 10.0),
              CheckResult("backward.seed", "backward", "seed", "passed", 10.0),
              CheckResult("backward.generated", "backward", "generated", "failed", 5.0, message="wrong",
                          hidden=True)]
    diagnoses = [Diagnosis("wrong-order", "backward", "backward() runs nodes in the wrong order.")]
    return Report("engine.py", checks, diagnoses, audience="staff")


def test_hidden_checks_in_every_format():
    """A hidden check counts in every report, the student's too (one score on every route); a student's
    report says only that it failed, never why (no message, diagnosis or counterexample)."""
    staff = hidden_report()
    student = dataclasses.replace(staff, audience="student")
    gradescope = json.loads(render_gradescope(staff))
    jsonschema.validate(gradescope, GRADESCOPE)
    assert [t["visibility"] for t in gradescope["tests"]] == ["visible", "visible", "after_published"]
    assert gradescope["score"] == 20.0 and sum(t["max_score"] for t in gradescope["tests"]) == 25.0
    # What students see at once on Gradescope is the released checks alone: nothing of the hidden one.
    assert "wrong-order" not in gradescope["output"] and "generated" not in gradescope["output"]
    for text in (render_text(student), render_markdown(student), render_junit(student),
                 render_classroom50(student, {}), render_json(student)):
        assert "wrong-order" not in text and "wrong" not in text.replace("wrong-order", ""), text
    assert "backward.generated: hidden until the course releases it" in render_text(student)
    assert "backward.generated" in render_junit(staff) and "wrong-order" in render_text(staff)
    result = json.loads(render_classroom50(student, {}))
    assert (result["score"], result["max-score"]) == (20, 25)
    assert [t["passed"] for t in result["tests"]] == [True, True, False]
    assert student.target_scores() == staff.target_scores() == {"add": (10.0, 10.0), "backward": (10.0, 15.0)}
    assert student.score == staff.score == 20.0 and student.max_score == staff.max_score == 25.0


def test_targets_come_from_the_checks():
    """A course grading relu instead of tanh: the outputs list relu, and never a target it does not grade."""
    report = Report("engine.py", [CheckResult("relu.forward", "relu", "forward", "failed", 15.0, message="no"),
                                  CheckResult("exp.forward", "exp", "forward", "passed", 5.0)])
    assert list(report.target_scores()) == ["relu", "exp"]
    suites = [s.get("name") for s in assert_junit_valid(render_junit(report)).iter("testsuite")]
    assert suites == ["relu", "exp"]
    assert "tanh" not in render_markdown(report) and "| `relu` | 0 / 15 | 0 of 1 |" in render_markdown(report)


def test_text_wraps_to_the_terminal(buggy):
    env_width = {**os.environ, "COLUMNS": "60"}
    text = subprocess.run([sys.executable, "-m", "grader", "grade", str(buggy)], capture_output=True, text=True,
                          env=env_width, cwd=ROOT).stdout
    assert max(len(line) for line in text.splitlines()) <= 60
    assert "grad-overwrite" in text


def test_every_format_names_the_line_and_the_smallest_case_once(buggy):
    """The same diagnosis, file and line in every format, read through the format's own consumer; the smallest
    failing case is told once per failed check."""
    from test_classroom import RESULT_V1, RUNNER_ENV

    from grader.grade import grade
    from grader.report.github import annotations
    from grader.submission.source import read_submission

    report = grade(buggy)
    line = BUGGY.splitlines().index("            self.grad = other.data * out.grad") + 1
    heading = f"[grad-overwrite] mul (engine.py, line {line})"
    assert heading in render_text(report, width=200)
    assert f"**grad-overwrite** (engine.py, line {line}): " in render_markdown(report)
    diagnosis = next(d for d in json.loads(json.dumps(report.to_json()))["diagnoses"] if d["target"] == "mul")
    assert (diagnosis["file"], diagnosis["line"]) == ("engine.py", line)
    junit = assert_junit_valid(render_junit(report))
    gradescope = json.loads(render_gradescope(report))
    jsonschema.validate(gradescope, GRADESCOPE)
    classroom = json.loads(render_classroom50(report, environ=RUNNER_ENV))
    jsonschema.validate(classroom, RESULT_V1)
    failures = {case.get("name"): case.find("failure") for case in junit.iter("testcase")}
    outputs = {
        "junit": [(f.get("message"), f.text) for name, f in failures.items()
                  if name.startswith("mul.") and f is not None],
        "gradescope": [(t["output"].split("\n")[0], t["output"]) for t in gradescope["tests"]
                       if t["tags"][0] == "mul" and t["status"] == "failed"],
        "classroom50": [(t["message"].split("\n")[0], t["message"]) for t in classroom["tests"]
                        if "__mul__" in t["test-name"] and not t["passed"]],
    }
    for name, failed in outputs.items():
        assert len(failed) == 2, name
        for first, whole in failed:
            assert first == heading and whole.count("Smallest failing case") == 1, (name, whole)
    [command] = [c for c in annotations(report, read_submission(buggy), buggy.parent) if "grad-overwrite%2C" not in c
                 and "mul)" in c]
    assert f"file=engine.py,line={line}," in command


def test_text_table_header_sits_over_its_columns():
    report = Report("engine.py", targets=["add", "backward"], checks=[
        CheckResult("add.forward", "add", "forward", "passed", 15.0),
        CheckResult("backward.chain", "backward", "chain", "failed", 20.0, "wrong")])
    header, *rows = render_text(report, width=100).splitlines()[2:5]
    for row in rows:
        assert row.index("/") in range(header.index("score"), header.index("score") + len("score"))
        assert header.index("checks") == row.index("ok" if "add" in row else "FAIL")
