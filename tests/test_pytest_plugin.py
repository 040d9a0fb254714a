"""``pytest --micrograde PATH``: one test per check, failing with the diagnosis, points for reporters."""

from __future__ import annotations

import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

from helpers import ROOT, SOLUTION
from recipes import run_recipe
from test_ci_formats import BUGGY

from grader.exercise.config import default
from grader.exercise.targets import Exercise


def pytest_micrograde(tmp_path, submission) -> tuple[subprocess.CompletedProcess, ET.Element]:
    """pytest as a course's CI runs it, in a folder of its own, with JUnit XML for the reporters."""
    junit = tmp_path / "junit.xml"
    result = subprocess.run([sys.executable, "-m", "pytest", "--micrograde", str(submission), "-rA",
                             f"--junitxml={junit}", "-p", "no:cacheprovider"],
                            cwd=tmp_path, capture_output=True, text=True, timeout=300)
    return result, ET.parse(junit).getroot()


def outcomes(root: ET.Element) -> dict[str, str]:
    """``target::check`` of each test case (JUnit XML splits a node id into classname and name)."""
    return {f"{case.get('classname')}::{case.get('name')}": "failed" if case.find("failure") is not None
            else "passed" for case in root.iter("testcase")}


def test_reference_passes_everything(tmp_path):
    (tmp_path / "engine.py").write_text(SOLUTION)
    result, root = pytest_micrograde(tmp_path, tmp_path / "engine.py")
    assert result.returncode == 0, result.stdout
    every = [f"{t.name}::{c.id.split('.', 1)[1]}" for t in Exercise(default()).targets for c in t.checks]
    assert list(outcomes(root)) == every and set(outcomes(root).values()) == {"passed"}
    first = {p.get("name"): float(p.get("value")) for p in next(root.iter("testcase")).iter("property")}
    assert first == {"points": 3.0, "max_points": 3.0}
    total = sum(float(p.get("value")) for p in root.iter("property") if p.get("name") == "points")
    assert total == 100.0


def test_the_bundled_exercise_fails_everything_as_not_implemented(tmp_path):
    shutil.copytree(ROOT / "exercises", tmp_path / "exercises")
    result = run_recipe("docs/ci.md", "## pytest, in any CI that runs it", tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    root = ET.parse(tmp_path / "micrograde.xml").getroot()
    assert set(outcomes(root).values()) == {"failed"} and len(outcomes(root)) == 29
    assert all("[not-implemented]" in case.find("failure").get("message", "") + (case.find("failure").text or "")
               for case in root.iter("testcase"))


def test_a_buggy_file_fails_exactly_its_checks(tmp_path):
    (tmp_path / "engine.py").write_text(BUGGY)
    result, root = pytest_micrograde(tmp_path, tmp_path / "engine.py")
    assert result.returncode == 1
    failed = sorted(name for name, outcome in outcomes(root).items() if outcome == "failed")
    assert failed == ["backward::accumulates", "backward::chain", "backward::generated", "backward::shared-node",
                      "mul::generated", "mul::reused-node"]
    line = BUGGY.splitlines().index("            self.grad = other.data * out.grad") + 1
    assert f"FAILED mul::reused-node - [grad-overwrite] mul (engine.py, line {line})" in result.stdout
    failures = result.stdout.split(" FAILURES ")[1].split(" short test summary info ")[0]
    for failure in failures.split("\n____")[1:]:
        assert failure.count("Smallest failing case") == 1, failure
    assert "[grad-overwrite]" in result.stdout
    total = sum(float(p.get("value")) for p in root.iter("property") if p.get("name") == "points")
    assert total == 78.0


def test_a_missing_submission_is_a_usage_error(tmp_path):
    result = subprocess.run([sys.executable, "-m", "pytest", "--micrograde", str(tmp_path / "nope.py"),
                             "-p", "no:cacheprovider"], cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode == 4 and "no such file" in result.stderr
