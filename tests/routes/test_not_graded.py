"""Every report says what of the submission no target covered, through each format's real consumer: "All checks
passed" and exit 0 are never given over it without saying so (``grader.diagnosis.ungraded``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import jsonschema
import pytest
from helpers import ROOT, SCAFFOLD_SOLUTION, SOLUTION, micrograde
from test_ci_formats import GRADESCOPE, assert_junit_valid
from test_classroom import RESULT_V1
from test_pytest_plugin import pytest_micrograde

from grader.grade import grade
from grader.report.classroom50 import render_classroom50
from grader.report.html import summary
from grader.report.model import report_from_json

PL_SCHEMA = json.loads((Path(__file__).parents[1] / "schemas" / "prairielearn-results.schema.json").read_text())
SECTION_1 = "def softmax(logits):\n    exps = [l.exp() for l in logits]\n    return [e / sum(exps) for e in exps]\n"
ESTIMATE = "h = 1e-6\nnumerical_grad = [(f(2 + h) - f(2)) / h]\n"


def notebook(tmp_path: Path) -> Path:
    """Every graded part right, and three parts the classic exercise grades nothing of: a function, a cell of
    variables computed by hand, and a method of the graded class that no target reads (the solution's relu)."""
    cells = ["def f(x):\n    return x ** 3", SECTION_1, ESTIMATE, SOLUTION]
    book = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": "code", "id": f"c{i}", "metadata": {}, "source": c, "outputs": [], "execution_count": None}
        for i, c in enumerate(cells)]}
    path = tmp_path / "work.ipynb"
    path.write_text(json.dumps(book))
    return path


NAMED = ["f (a function, work.ipynb, cell 1, line 1)", "softmax (a function, work.ipynb, cell 2, line 1)",
         "h, numerical_grad (variables, work.ipynb, cell 3, line 1)",
         "Value.relu (a method, work.ipynb, cell 4, line 61)"]


@pytest.fixture
def work(tmp_path):
    return notebook(tmp_path)


def test_text_names_them_and_never_says_all_passed_alone(work):
    done = micrograde("grade", str(work))
    assert done.returncode == 0, done.stderr  # full marks: nothing graded was lost
    text = " ".join(done.stdout.split())
    assert "Not graded (no target of the course covers it, so no check looked at it): " + "; ".join(NAMED) in text
    assert text.endswith("All checks passed; 4 parts of the submission listed as not graded were not checked.")


def test_json_lists_them_and_reads_back(work, tmp_path):
    done = micrograde("grade", str(work), "--format", "json", "--output", str(tmp_path / "r.json"))
    assert done.returncode == 0
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["ungraded"] == [
        {"what": "function", "name": "f", "file": "work.ipynb", "line": 1, "cell": 1},
        {"what": "function", "name": "softmax", "file": "work.ipynb", "line": 1, "cell": 2},
        {"what": "variables", "name": "h, numerical_grad", "file": "work.ipynb", "line": 1, "cell": 3},
        {"what": "method", "name": "Value.relu", "file": "work.ipynb", "line": 61, "cell": 4}]
    assert [u.describe() for u in report_from_json(report).ungraded] == NAMED


def test_junit_has_a_skipped_test_for_each(work):
    root = assert_junit_valid(micrograde("grade", str(work), "--format", "junit").stdout)
    [suite] = [s for s in root.iter("testsuite") if s.get("name") == "not-graded"]
    assert (suite.get("tests"), suite.get("skipped"), suite.get("failures")) == ("4", "4", "0")
    assert [c.find("skipped").get("message") for c in suite.iter("testcase")] == [f"not graded: {n}" for n in NAMED]
    assert root.get("tests") == str(sum(int(s.get("tests")) for s in root.iter("testsuite")))


def test_gradescope_says_them_in_what_the_student_reads(work):
    results = json.loads(micrograde("grade", str(work), "--format", "gradescope").stdout)
    jsonschema.validate(results, GRADESCOPE)
    assert results["score"] == 100.0 and "Not graded" in results["output"] and "softmax" in results["output"]


def test_classroom50_has_a_test_for_each_worth_nothing_and_not_passed(work):
    result = json.loads(render_classroom50(grade(work), environ={
        "CLASSROOM": "c", "ASSIGNMENT": "a", "OWNER": "o", "SUBMISSION_TAG": "submit/x", "COMMIT_URL": "u",
        "RELEASE_URL": "r"}))
    jsonschema.validate(result, RESULT_V1)
    skipped = [t for t in result["tests"] if t.get("status") == "not-graded"]
    assert [(t["passed"], t["score"], t["max-score"]) for t in skipped] == [(False, 0, 0)] * 4
    assert (result["score"], result["max-score"]) == (100, 100) == (sum(t["score"] for t in result["tests"]),
                                                                     sum(t["max-score"] for t in result["tests"]))


def test_prairielearn_says_them_above_the_tests(work):
    results = json.loads(micrograde("grade", str(work), "--format", "prairielearn").stdout)
    jsonschema.validate(results, PL_SCHEMA)
    assert results["score"] == 1.0 and results["message"].startswith("micrograde: 100 / 100\nNot graded")


def test_markdown_html_and_the_handed_back_notebook(work, tmp_path):
    markdown = micrograde("grade", str(work), "--format", "markdown").stdout
    assert "**Not graded** (no target of the course covers it" in markdown and "softmax (a function" in markdown

    class Items(HTMLParser):
        items: list[str] = []

        def handle_data(self, data):
            if self.lasttag == "li":
                self.items.append(data)

    parser = Items()
    parser.feed(summary(grade(work)))
    assert parser.items == NAMED
    assert micrograde("grade", str(work), "--feedback", str(tmp_path / "back.ipynb")).returncode == 0
    cells = json.loads((tmp_path / "back.ipynb").read_text())["cells"]
    assert "**Not graded**" in "".join(cells[0]["source"])


def test_github_actions_annotates_each_as_a_notice(work, tmp_path):
    env = {**os.environ, "GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": str(tmp_path)}
    done = subprocess.run([sys.executable, "-m", "grader", "grade", str(work)], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=120)
    notices = [line for line in done.stderr.splitlines() if line.startswith("::notice ")]
    assert notices[1] == ("::notice file=work.ipynb,title=micrograde%3A softmax was not graded::not graded: softmax "
                          "(a function, work.ipynb, cell 2, line 1)")
    assert len(notices) == 4


def test_the_pytest_plugin_skips_an_item_for_each(work, tmp_path):
    done, root = pytest_micrograde(tmp_path, work)
    assert done.returncode == 0, done.stdout
    skipped = [c for c in root.iter("testcase") if c.find("skipped") is not None]
    assert len(skipped) == 4 and "softmax" in skipped[1].find("skipped").get("message")
    assert "4 skipped" in done.stdout


def test_check_from_a_script_says_them(tmp_path):
    (tmp_path / "work.py").write_text(SOLUTION + "\n\n" + SECTION_1 + "\n\nfrom grader import check\n\ncheck()\n")
    done = subprocess.run([sys.executable, "work.py"], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    text = " ".join(done.stdout.split())
    assert "total 100 / 100" in text and "Not graded" in text and "softmax (a function, work.py, line" in text
    assert "All checks passed;" in text


def test_nothing_is_said_when_everything_is_graded(tmp_path):
    (tmp_path / "engine.py").write_text(SCAFFOLD_SOLUTION)  # every method of it is read
    done = micrograde("grade", str(tmp_path / "engine.py"))
    assert done.stdout.rstrip().endswith("All checks passed.") and "Not graded" not in done.stdout
    assert json.loads(micrograde("grade", str(tmp_path / "engine.py"), "--format", "json").stdout)["ungraded"] == []
    assert ET.fromstring(micrograde("grade", str(tmp_path / "engine.py"), "--format", "junit").stdout).find(
        "testsuite[@name='not-graded']") is None
