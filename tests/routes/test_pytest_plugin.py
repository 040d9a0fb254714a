"""``pytest --micrograde PATH``: one test per check, failing with the diagnosis, points for reporters."""

from __future__ import annotations

import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from helpers import ROOT, SOLUTION
from recipes import run_recipe
from test_ci_formats import BUGGY

from grader.exercise.config import default
from grader.exercise.targets import Exercise

PYTEST = str(Path(sys.executable).parent / "pytest")  # the command, as a course runs it
COURSE = [PYTEST, "--noconftest", "-c", "/dev/null", "-p", "no:cacheprovider"]  # nothing of the tree loads


def pytest_micrograde(tmp_path, submission, command: list[str] = COURSE) -> tuple[subprocess.CompletedProcess,
                                                                                  ET.Element]:
    """pytest as a course's CI runs it, in a folder of its own, with JUnit XML for the reporters."""
    junit = tmp_path / "junit.xml"
    result = subprocess.run([*command, "--micrograde", str(submission), "-rA", f"--junitxml={junit}"],
                            cwd=tmp_path, capture_output=True, text=True, timeout=300)
    return result, ET.parse(junit).getroot()


def outcomes(root: ET.Element) -> dict[str, str]:
    """``target::check`` of each check's test case (JUnit XML splits a node id into classname and name); the
    skipped items of what was not graded are no check's (``skipped``)."""
    return {f"{case.get('classname')}::{case.get('name')}": "failed" if case.find("failure") is not None
            else "passed" for case in root.iter("testcase") if case.find("skipped") is None}


def skipped(root: ET.Element) -> list[str]:
    """Why each skipped item was skipped: the parts of the submission no target covered."""
    return [case.find("skipped").get("message") for case in root.iter("testcase") if case.find("skipped") is not None]


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
    # the notebook's own copies of the stubs, untouched beside the .py files that are graded: nobody's work
    assert skipped(root) == []
    assert all("[not-implemented]" in case.find("failure").get("message", "") + (case.find("failure").text or "")
               for case in root.iter("testcase") if case.find("skipped") is None)


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
    result = subprocess.run([*COURSE, "--micrograde", str(tmp_path / "nope.py")], cwd=tmp_path,
                            capture_output=True, text=True)
    assert result.returncode == 4 and "no such file" in result.stderr


HOSTILE = "import pathlib; pathlib.Path({mark!r}).touch()\n"
# Each would pass every check if it ran: a hook that turns every report into a pass.
PASS_ALL = ("import pytest\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n"
            "    outcome = yield\n    outcome.get_result().outcome = 'passed'\n")


def hostile_tree(tmp_path: Path, ini: str) -> Path:
    """A student's checkout: a buggy engine, and a conftest.py, an ini file (``ini``) that loads a ``-p``
    plugin of the tree, that plugin, and a test file, each leaving a mark if it runs."""
    tree = tmp_path / "checkout"
    tree.mkdir()
    (tree / "engine.py").write_text(BUGGY)
    for name in ("conftest", "evil", "test_student"):
        (tree / f"{name}.py").write_text(HOSTILE.format(mark=str(tmp_path / f"{name}.ran")) + PASS_ALL)
    options = "addopts = -p evil\nrequired_plugins = evil\n"
    if ini == "pytest.ini":
        (tree / "pytest.ini").write_text(f"[pytest]\n{options}")
    else:
        (tree / "pyproject.toml").write_text(f"[tool.pytest.ini_options]\n{options}")
    return tree


@pytest.mark.parametrize("ini", ["pytest.ini", "pyproject.toml"])
def test_nothing_of_the_students_tree_loads_into_pytest(mode, tmp_path, ini):
    tree = hostile_tree(tmp_path, ini)
    result, root = pytest_micrograde(tree, tree / "engine.py")
    assert result.returncode == 1, result.stdout + result.stderr
    assert sorted(p.name for p in tmp_path.glob("*.ran")) == []
    failed = sorted(name for name, outcome in outcomes(root).items() if outcome == "failed")
    assert "mul::reused-node" in failed and len(outcomes(root)) == 29  # the real grade, only the checks


@pytest.mark.parametrize(("command", "named"), [
    ([PYTEST, "-c", "/dev/null"], "pytest would import {tree}/conftest.py from the graded tree; pass --noconftest"),
    ([PYTEST, "--noconftest"], "{tree}/pytest.ini in the graded tree sets addopts"),
    ([sys.executable, "-m", "pytest", "--noconftest", "-c", "/dev/null"],
     "{tree}/hypothesis.py would be imported instead of the installed one"),
    ([PYTEST, "--noconftest", "-c", "/dev/null", "-p", "evil"], "module 'evil' was loaded from the graded tree"),
], ids=["conftest", "ini-addopts", "python-m-shadowing", "plugin-of-the-tree"])
def test_an_invocation_that_would_load_the_tree_is_refused_and_names_it(tmp_path, command, named, monkeypatch):
    tree = hostile_tree(tmp_path, "pytest.ini")
    (tree / "pytest.ini").write_text("[pytest]\naddopts = --micrograde-timeout 1000\n")  # changes the grading
    (tree / "hypothesis.py").write_text(HOSTILE.format(mark=str(tmp_path / "hypothesis.ran")))
    if "evil" in command:
        monkeypatch.setenv("PYTHONPATH", str(tree))
    result = subprocess.run([*command, "-p", "no:cacheprovider", "--micrograde", "engine.py"], cwd=tree,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 4, result.stdout + result.stderr
    refusals = [line for line in result.stderr.splitlines() if line.startswith("ERROR: micrograde: refusing")]
    assert len(refusals) == 1 and named.format(tree=tree) in refusals[0], result.stderr
    assert "passed" not in result.stdout.lower()
    assert not (tmp_path / "conftest.ran").exists()  # refused before any conftest.py loads


def test_pytest_as_people_type_it_grades_where_nothing_would_load(tmp_path):
    """``pytest --micrograde exercises/`` in a course checkout with no conftest.py, no ini file that loads
    anything, nothing importable, and the README's own ``.venv`` inside the working folder, run from it."""
    checkout = tmp_path / "course"
    (checkout / "exercises").mkdir(parents=True)
    (checkout / "exercises" / "engine.py").write_text(BUGGY)
    (checkout / "pytest.ini").write_text("[pytest]\nmarkers = slow\n")  # an ini file that loads nothing
    (checkout / "README.md").write_text("# micrograd\n")
    venv = checkout / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    # micrograde and pytest installed in it: this venv's packages, through a .pth file of its own.
    inner = next(venv.glob("lib/python3*/site-packages"))
    (inner / "course.pth").write_text("".join(f"import site; site.addsitedir({p!r})\n" for p in sys.path
                                              if p.endswith("site-packages")))
    # The venv's own pytest command, as `pip install` writes it (its folder first on sys.path).
    script = Path(PYTEST).read_text().split("\n", 1)[1]
    (venv / "bin" / "pytest").write_text(f"#!{venv / 'bin' / 'python'}\n{script}")
    (venv / "bin" / "pytest").chmod(0o755)
    for command in ([str(venv / "bin" / "pytest")], [str(venv / "bin" / "python"), "-m", "pytest"]):
        result = subprocess.run([*command, "-p", "no:cacheprovider", "--micrograde", "exercises/"], cwd=checkout,
                                capture_output=True, text=True, timeout=300)
        assert result.returncode == 1, result.stdout + result.stderr
        assert "6 failed, 23 passed" in result.stdout and "FAILED mul::reused-node" in result.stdout


def test_the_docs_pytest_command_installs_pytest_first():
    """micrograde does not install pytest (grading never needs it): the docs' block installs it before running it,
    as a CI that has no pytest needs."""
    from importlib.metadata import requires

    from recipes import section, sh_blocks

    assert not any(r.startswith("pytest") and "extra ==" not in r for r in requires("micrograde"))
    [block] = sh_blocks(section("docs/ci.md", "## pytest, in any CI that runs it"))[:1]
    install, run = block.strip().splitlines()
    assert install == "python -m pip install pytest" and run.startswith("pytest --micrograde ")
