"""The docs stay true: the site builds, the diagnosis table is the registry, every code block is run or checked."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml
from helpers import ROOT, SCAFFOLD_SOLUTION, SOLUTION, micrograde
from recipes import section, sh_blocks

from grader.diagnosis.codes import CODES
from grader.exercise.config import load

PAGES = ["README.md", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md")), "tests/README.md"]
BLOCK = re.compile(r"^(#{1,4} [^\n]*)$|^```(\w*)\n(.*?)^```", re.S | re.M)

# Every sh block of the docs, and what runs it: a test (through ``recipes.run_recipe``), CI
# (``.ci/run`` runs it through ``tests/support/docs_block.py``), or nothing because it is a command's
# usage line (checked against ``--help`` below) or needs what no test may use (the network, minutes).
SH_BLOCKS = {
    ("README.md", "## Set up", 0): "ci",
    ("README.md", "## Set up", 1): "ci",
    ("README.md", "## Grading a submission", 0): "usage",
    ("docs/index.md", "# micrograde", 0): "the README's first set-up command",
    ("docs/students.md", "## Reading the report", 0): "usage",
    ("docs/ci.md", "## Classroom 50", 0): "test",
    ("docs/ci.md", "## Gradescope", 0): "test",
    ("docs/ci.md", "## Gradescope", 1): "test",
    ("docs/ci.md", "## pytest, in any CI that runs it", 0): "test",
    ("docs/ci.md", "## GitHub Classroom (legacy)", 0): "test",
    ("docs/ci.md", "## PrairieLearn", 0): "test",
    ("docs/ci.md", "## PrairieLearn", 1): "test",
    ("docs/ci.md", "## nbgrader on JupyterHub", 0): "test",
    ("docs/staff.md", "## The course configuration", 0): "test",
    ("docs/staff.md", "## The course's own notebook as the scaffold", 0): "test",
    ("docs/staff.md", "## Handing notebooks back", 0): "test",
    ("docs/staff.md", "## Batch grading", 0): "test",
    ("docs/staff.md", "### In shards, on an engine a course already has", 0): "test",
    ("docs/staff.md", "### In shards, on an engine a course already has", 1): "test",
    ("docs/speed.md", "# Speed", 0): "by hand: installs nbgrader and otter from PyPI, then runs for over ten minutes",
    ("tests/README.md", "### The wheelhouse", 0): "by hand: downloads from a package index (.ci/run runs the same "
                                                  "tests/support/platforms.py)",
}


def blocks() -> list[tuple[str, str, str, int, str]]:
    """(page, heading, language, index among the heading's blocks of that language, text) of every block."""
    found = []
    for page in PAGES:
        heading, seen = "", {}
        for match in BLOCK.finditer((ROOT / page).read_text(encoding="utf-8")):
            if match.group(1):
                heading, seen = match.group(1), {}
                continue
            language = match.group(2)
            index = seen.get(language, 0)
            seen[language] = index + 1
            found.append((page, heading, language, index, match.group(3)))
    return found


def test_the_site_builds_strictly(tmp_path):
    """A broken link, a missing anchor or a page left out of the nav fails the build."""
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
                            cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "diagnoses" / "index.html").is_file()


def test_the_diagnosis_table_is_the_registry():
    rows = re.findall(r"^\| `([a-z-]+)` \| (.*?) \| (.*) \|$", section("docs/diagnoses.md", "# Diagnoses"), re.M)
    assert [(code, targets, meaning) for code, targets, meaning in rows] == [
        (c.name, c.targets, c.meaning) for c in CODES.values()]


def test_every_code_the_grader_names_is_registered():
    """A code the rules or the blame can give but the registry lacks would be an exit-3 crash for a
    student: every literal that looks like one, where codes are produced, is a registered code."""
    produced = set()
    for path in [*(ROOT / "grader" / "diagnosis").glob("*.py"), ROOT / "grader" / "judging" / "judge.py"]:
        source = path.read_text(encoding="utf-8")
        produced.update(re.findall(r'(?:codes\[|setdefault\(|faults\.add\(|Diagnosis\(|fault = |\.code == )'
                                   r'"([a-z]+(?:-[a-z]+)+)"', source))
    assert produced and produced <= set(CODES), produced - set(CODES)


def test_every_sh_block_is_run_or_accounted_for():
    found = {(page, heading, index) for page, heading, language, index, _ in blocks() if language == "sh"}
    assert found == set(SH_BLOCKS)
    tests = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "tests").glob("*/test_*.py"))
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    for (page, heading, index), how in SH_BLOCKS.items():
        if how == "test":
            calls = re.findall(re.escape(f'run_recipe("{page}", "{heading}", ') + r"[^)\n]*\)", tests)
            run = {int(m.group(1)) if (m := re.search(r"block=(\d+)", call)) else 0 for call in calls}
            assert index in run, f"no test runs block {index} of {page} {heading}"
        elif how == "ci":
            assert page == "README.md" and f'readme_block {index}' in ci, f".ci/run does not run {page} {heading}"
        elif how == "the README's first set-up command":
            assert sh_blocks(section(page, heading))[index] == sh_blocks(section("README.md", "## Set up"))[0]


def test_usage_lines_name_only_options_that_exist():
    help_text = micrograde("grade", "--help").stdout
    for (page, heading, index), how in SH_BLOCKS.items():
        if how == "usage":
            line = sh_blocks(section(page, heading))[index]
            assert line.startswith("micrograde grade PATH")
            for option in re.findall(r"--[a-z-]+", line):
                assert option in help_text, option


def test_toml_blocks_are_course_configurations(tmp_path):
    for page, heading, language, index, text in blocks():
        if language == "toml":
            path = tmp_path / f"{Path(page).stem}-{index}.toml"
            path.write_text(text, encoding="utf-8")
            assert load(path).targets, (page, heading)


def test_json_and_yaml_blocks_parse_and_json_reports_have_real_keys(tmp_path):
    submission = tmp_path / "engine.py"
    submission.write_text(SOLUTION, encoding="utf-8")
    real = json.loads(micrograde("grade", str(submission), "--format", "json").stdout)
    for page, heading, language, _, text in blocks():
        if language == "json":
            shown = json.loads(text)
            assert set(shown) <= set(real), (page, heading, set(shown) - set(real))
        elif language == "yaml":
            assert yaml.safe_load(text), (page, heading)


def test_python_blocks_run(tmp_path):
    """``check(Value, train_step)`` as the docs show it, in a script whose Value and train_step are a
    student's correct ones."""
    for page, heading, language, index, text in blocks():
        if language == "python":
            script = tmp_path / f"student{index}.py"
            script.write_text(SOLUTION + "\n\n" + text, encoding="utf-8")
            result = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True,
                                    timeout=300)
            assert result.returncode == 0 and "100 / 100" in result.stdout, (page, heading, result.stderr)


@pytest.mark.parametrize("page", ["README.md", "docs/students.md"])
def test_the_sample_report_is_what_micrograde_prints(tmp_path, page):
    """The sample report is, line for line, what micrograde prints today (in a terminal 100 columns wide) for
    the bugs it describes: a ``__mul__`` that assigns with ``=`` and a ``backward()`` that forgot to reverse its
    topological order."""
    heading = "## Grading a submission" if page == "README.md" else "## Reading the report"
    sample = re.findall(r"```text\n(.*?)```", section(page, heading), re.S)[0]
    words = " ".join(section(page, heading).split())
    assert "a `__mul__` that assigns gradients with `=`, and a `backward()` that forgot to reverse its " \
           "topological order" in words  # the bugs the sample's text says it shows
    buggy = SCAFFOLD_SOLUTION.replace("for node in reversed(topo):", "for node in topo:")
    mul = buggy.index("def __mul__")
    buggy = buggy[:mul] + buggy[mul:].replace("self.grad += other.data * out.grad",
                                              "self.grad = other.data * out.grad", 1)
    assert buggy.count("self.grad = other.data * out.grad") == 1
    (tmp_path / "engine.py").write_text(buggy, encoding="utf-8")
    printed = micrograde("grade", "engine.py", cwd=tmp_path, env={"COLUMNS": "100"}).stdout
    assert [line.rstrip() for line in printed.splitlines()] == sample.splitlines()


def test_the_readme_stays_short():
    """What it is, the set-up, a sample report, and links: the rest lives in the docs, by reader."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200
    for page in (ROOT / "docs").glob("*.md"):
        if page.name != "index.md":
            assert f"(docs/{page.name})" in readme, f"the README links no docs/{page.name}"


def test_the_corpora_expect_only_registered_codes():
    """The mutation corpus and the real-style set name codes as the registry does."""
    expected = set()

    def walk(node: object) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "codes" and isinstance(value, list):
                    expected.update(value)
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    for mutant in tomllib.loads((ROOT / "tests" / "corpus" / "mutants.toml").read_text())["mutant"]:
        for codes in mutant.get("expect", {}).values():
            expected.update(codes)
    walk(tomllib.loads((ROOT / "tests" / "realstyle" / "expected.toml").read_text()))
    assert expected and expected <= set(CODES), expected - set(CODES)


def test_the_worked_configurations_page_shows_the_course_files():
    """Each TOML block of docs/courses.md is the course file named right above it, as the tests grade with."""
    page = (ROOT / "docs" / "courses.md").read_text()
    shown = re.findall(r"`tests/courses/([a-z0-9-]+\.toml)`:\n\n```toml\n(.*?)```", page, re.S)
    assert len(shown) == 3
    for name, block in shown:
        assert block == (ROOT / "tests" / "courses" / name).read_text(), name

