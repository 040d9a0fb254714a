"""What a learner or a TA reads is true of the submission in front of them: each sentence micrograde writes about
what to run, what was checked, the total, where to look and in which order, checked on the text it prints.

(The ``--html`` page's graphs and cell names are ``test_pages.py``'s, in a browser; the README's sample report
``test_docs.py``'s; the docs' pytest command ``test_pytest_plugin.py``'s.)
"""

from __future__ import annotations

import ast
import json
import re
import shutil
from pathlib import Path

import pytest
from helpers import ROOT, SCAFFOLD_SOLUTION, micrograde
from opmutants import engine

from grader.staff.summary import summarise, summary_html, summary_markdown

COURSES = Path(__file__).parents[1] / "courses"
ENGINE, TRAIN = SCAFFOLD_SOLUTION.split("def train_step")
TRAIN = "def train_step" + TRAIN
# Each course's files, and the right solution the learner fills them in with.
SCAFFOLDS = {"classic": (None, SCAFFOLD_SOLUTION), "route-matrix": (COURSES / "route-matrix.toml", engine()),
             "route-knobs": (COURSES / "route-knobs.toml", engine())}


def filled_in(folder: Path, solution: str) -> None:
    """The scaffold's engine.py and train.py with the learner's right code in place of each stub, the notebook
    left as it was handed out (the learner works in the .py files). What the scaffold gives stays as given."""
    value, train = solution.split("\n\ndef train_step")
    engine_py = (folder / "engine.py").read_text()
    written = {node.name: node for node in ast.walk(ast.parse(value)) if isinstance(node, ast.FunctionDef)}
    stubs = [node for node in ast.walk(ast.parse(engine_py)) if isinstance(node, ast.FunctionDef)
             and any(isinstance(n, ast.Raise) and "NotImplementedError" in ast.unparse(n) for n in ast.walk(node))]
    lines, solution_lines = engine_py.splitlines(), value.splitlines()
    for stub in sorted(stubs, key=lambda node: node.lineno, reverse=True):
        answer = written[stub.name]
        lines[stub.lineno - 1:stub.end_lineno] = solution_lines[answer.lineno - 1:answer.end_lineno]
    (folder / "engine.py").write_text("\n".join(lines) + "\n")
    if (folder / "train.py").is_file():
        text = (folder / "train.py").read_text()
        (folder / "train.py").write_text(text[:text.index("def train_step")] + "def train_step" + train)


@pytest.mark.parametrize("course", list(SCAFFOLDS))
def test_every_command_the_scaffolds_files_suggest_gives_a_right_folder_full_marks(tmp_path, course):
    """engine.py's, train.py's and the notebook's own words say which command checks the work: each, run where
    the files are, grades the course and gives full marks to the right solution, every part checked."""
    config, solution = SCAFFOLDS[course]
    folder = tmp_path / "student-files"
    assert micrograde("scaffold", str(folder), *(["--config", str(config)] if config else [])).returncode == 0
    filled_in(folder, solution)
    texts = [(folder / name).read_text() for name in ("engine.py", "train.py") if (folder / name).is_file()]
    texts.append((folder / "micrograd.ipynb").read_text())
    commands = sorted({c for text in texts for c in re.findall(r"micrograde grade [\w.]+", text)})
    assert "micrograde grade engine.py" in commands and len(commands) >= 2, commands
    expected = json.loads(micrograde("grade", ".", "--format", "json", cwd=folder).stdout)["max_score"]
    for command in commands:
        if command.endswith(".ipynb"):
            continue  # the notebook's command grades the notebook, which is filled in below
        printed = micrograde(*command.split()[1:], cwd=folder)
        assert printed.returncode == 0, (command, printed.stdout)
        assert re.search(rf"^  total +{expected:g} / {expected:g}", printed.stdout, re.M), (command, printed.stdout)
        assert printed.stdout.rstrip().endswith("All checks passed."), (command, printed.stdout)


def test_a_right_py_beside_the_untouched_notebook_is_told_it_passed_every_check(tmp_path):
    """The bundled layout: engine.py and train.py filled in, micrograd.ipynb still the course's stubs. Grading
    the folder (what train.py suggests) says every check passed, and no part "not checked": the notebook's stubs
    are nobody's work. A notebook copy the learner did write in is still said."""
    folder = tmp_path / "exercises"
    shutil.copytree(ROOT / "exercises", folder)
    filled_in(folder, SCAFFOLD_SOLUTION)
    printed = micrograde("grade", ".", cwd=folder).stdout
    assert "not checked" not in printed and "Not graded" not in printed
    assert printed.rstrip().endswith("All checks passed.")
    book = json.loads((folder / "micrograd.ipynb").read_text())
    [cell] = [c for c in book["cells"] if "".join(c["source"]).startswith("def train_step")]
    cell["source"] = TRAIN  # the learner's own train_step, in the notebook too
    (folder / "micrograd.ipynb").write_text(json.dumps(book))
    printed = micrograde("grade", ".", cwd=folder, env={"COLUMNS": "200"}).stdout
    assert "train_step (a function, micrograd.ipynb" in printed
    assert printed.rstrip().endswith("All checks passed; 1 part of the submission listed as not graded was not "
                                     "checked.")


def test_gradescopes_visible_output_says_the_total_its_score_counts(tmp_path):
    """With a check hidden until the grades are published, Gradescope's ``output`` (what the student sees at
    once) shows the checks shown and their total, and the total the score counts, never a total beside it that
    the score contradicts."""
    (tmp_path / "engine.py").write_text(engine())
    done = micrograde("grade", "engine.py", "--config", str(COURSES / "route-matrix.toml"), "--format",
                      "gradescope", cwd=tmp_path)
    results = json.loads(done.stdout)
    output = results["output"]
    assert results["score"] == 81.0
    assert re.search(r"^  shown +77 / 77 *$", output, re.M), output
    assert re.search(r"^  total +81 / 81 +with 1 check hidden until the grades are published$", output, re.M)
    assert [line for line in output.splitlines() if line.lstrip().startswith("total")] == [
        "  total           81 / 81       with 1 check hidden until the grades are published"]


def test_the_failed_checks_say_what_every_case_has_alike_once(tmp_path):
    buggy = SCAFFOLD_SOLUTION.replace("for node in reversed(topo):", "for node in topo:")
    (tmp_path / "engine.py").write_text(buggy)
    printed = micrograde("grade", "engine.py", cwd=tmp_path, env={"COLUMNS": "200"}).stdout
    block = printed.split("\nfailed checks")[1]
    heading, *checks = block.strip().splitlines()
    assert heading == (", each with its smallest failing case (checked against the reference engine and finite "
                       "differences):")
    assert len(checks) == 4 and all(re.match(r"  backward\.[\w-]+: .* expected a\.grad = .*, got .*\.$", c)
                                    for c in checks), checks
    assert "checked against" not in "".join(checks) and "Smallest failing case" not in "".join(checks)


def test_a_notebook_that_does_not_load_is_told_to_run_its_cells_not_python(tmp_path):
    broken = "class Value:\n    def __init__(self, data\n"
    notebook = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": "code", "id": "a", "metadata": {}, "outputs": [], "execution_count": None, "source": broken}]}
    (tmp_path / "work.ipynb").write_text(json.dumps(notebook))
    (tmp_path / "my engine.py").write_text(broken)
    for name, advice in (("work.ipynb", "restart its kernel and run every cell"),
                         ("my engine.py", "try `python 'my engine.py'`")):
        report = json.loads(micrograde("grade", name, "--format", "json", cwd=tmp_path).stdout)
        loading = next(d for d in report["diagnoses"] if d["code"] == "load-error" and d["line"] == 2)
        assert advice in loading["message"], loading["message"]
        assert "yourfile" not in loading["message"]
        assert ("python" in loading["message"]) == name.endswith(".py")


def test_the_class_summary_lists_targets_in_the_courses_order(tmp_path):
    """Whoever the batch met first, the summary's misconceptions, students per diagnosis and counterexamples of
    as many students follow the course's order of targets, the submission's own problems first."""
    def report(*codes: tuple[str, str]) -> dict:
        return {"status": "graded", "score": 50.0, "max_score": 100.0,
                "targets": {t: {"score": 10.0, "max_score": 20.0} for t in ("relu", "mul", "backward")},
                "diagnoses": [{"target": t, "code": c, "message": "m",
                               "counterexample": {"expression": f"{t}(a)"}} for t, c in codes]}

    rows = [("ann", report(("backward", "wrong-order"))), ("bob", report(("mul", "grad-overwrite"))),
            ("cat", report(("relu", "wrong-local-grad"), ("submission", "load-error")))]
    summary = summarise(rows)
    assert list(summary.misconceptions) == ["submission", "relu", "mul", "backward"]
    assert [key for key, _ in summary.diagnoses] == ["submission:load-error", "relu:wrong-local-grad",
                                                      "mul:grad-overwrite", "backward:wrong-order"]
    assert [t for t, *_ in summary.counterexamples] == ["submission", "relu", "mul", "backward"]
    markdown = summary_markdown(summary)
    assert markdown.index("`relu`") < markdown.index("`mul`") < markdown.index("`backward`")
    page = summary_html(summary)
    assert page.index("<code>relu</code>") < page.index("<code>mul</code>") < page.index("<code>backward</code>")
