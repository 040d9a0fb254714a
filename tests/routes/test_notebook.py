"""Notebook submissions: graded exactly like their .py form, and handed back with feedback in them."""

from __future__ import annotations

import ast
import json
import tomllib

import nbformat
import pytest
from helpers import CORPUS, ROOT, SOLUTION, micrograde
from test_corpus import mutate

from grader.grade import grade
from grader.report.model import counterexample_json
from grader.submission.comparison import graded_names, without_library
from grader.submission.source import read_submission

MUTANTS = [m for m in tomllib.loads((CORPUS / "mutants.toml").read_text())["mutant"]
           if "submission" not in m["expect"] and "timeout" not in m]


# A shell escape students leave in their notebooks: the grader never runs it. A test that runs the
# notebook in a real kernel gives one that changes nothing on the machine instead.
INSTALL = "!pip install --upgrade micrograd"
HARMLESS = "!echo nothing to install"


def as_notebook(source: str, minor: int = 5, shell: str = INSTALL) -> dict:
    """``source`` (imports, class Value, def train_step) split over cells, with the usual noise."""
    head, rest = source.split("class Value", 1)
    engine, train = rest.split("def train_step", 1)
    cells = [
        ("markdown", "# My micrograd\nSome notes."),
        ("code", head + "%time x = 1\n%matplotlib inline\nimport matplotlib.pyplot as plt\n"
                        "from graphviz import Digraph"),
        ("code", "class Value" + engine),
        ("code", "a = Value(2.0)\nprint(a.frobnicate())"),  # a demo cell that crashes
        ("code", shell + "\nValue?"),
        ("markdown", "## Training"),
        ("code", "def train_step" + train),
        ("code", "%%timeit -n 1 -r 1\nx = 1"),  # a magic of its own cell (one run: the default takes seconds)
        ("code", "def draw_dot(root):\n    return Digraph(format='svg')\ndraw_dot(a)"),
    ]
    notebook = {"nbformat": 4, "nbformat_minor": minor, "metadata": {"language_info": {"name": "python"}},
                "cells": []}
    for i, (kind, text) in enumerate(cells):
        cell = {"cell_type": kind, "metadata": {}, "source": text}
        if minor >= 5:
            cell["id"] = f"cell-{i}"
        if kind == "code":
            cell.update(outputs=[], execution_count=None)
        notebook["cells"].append(cell)
    return notebook


def same_report(one: str, other: str) -> bool:
    """Equal but for the submission's own file name."""
    def strip(text: str) -> dict:
        report = json.loads(text)
        del report["submission"]
        for place in (*report["diagnoses"], *report["ungraded"]):
            place.pop("file")
        return report

    return strip(one) == strip(other)


def write_notebook(path, notebook: dict):
    path.write_text(json.dumps(notebook, indent=1))
    return path


def comparable(report) -> dict:
    return {"score": report.score, "targets": report.target_scores(),
            "codes": sorted((d.target, d.code) for d in report.diagnoses),
            "checks": [(c.id, c.status, counterexample_json(c.counterexample) if c.counterexample else None)
                       for c in report.checks]}


@pytest.mark.parametrize("mutant", MUTANTS[::3] + [{"name": "correct", "replace": []}],
                         ids=lambda m: m["name"])
def test_notebook_grades_like_its_py_form(tmp_path, mutant):
    source = mutate(SOLUTION, mutant["replace"])
    py = tmp_path / "work.py"
    py.write_text(source)
    notebook = write_notebook(tmp_path / "work.ipynb", as_notebook(source))
    from_py, from_notebook = grade(py), grade(notebook)
    assert comparable(from_notebook) == comparable(from_py)
    assert [w.split(" ")[1] for w in from_notebook.warnings] == ["4"]  # the crashing demo cell, by number
    for in_py, diagnosis in zip(from_py.diagnoses, from_notebook.diagnoses):
        cell = as_notebook(source)["cells"][diagnosis.cell - 1]
        line = cell["source"].splitlines()[diagnosis.line - 1].strip()
        assert line == source.splitlines()[in_py.line - 1].strip(), (diagnosis, line)


def test_feedback_notebook_keeps_every_cell_and_regrades_the_same(tmp_path):
    source = SOLUTION.replace("for node in reversed(topo):", "for node in topo:")
    original = as_notebook(source)
    path = write_notebook(tmp_path / "work.ipynb", original)
    first = micrograde("grade", str(path), "--format", "json", "--feedback", str(tmp_path / "back.ipynb"),
                       "--html", str(tmp_path / "back.html"))
    assert first.returncode == 1, first.stderr
    back = json.loads((tmp_path / "back.ipynb").read_text())
    nbformat.validate(nbformat.from_dict(back))
    ours = [c for c in back["cells"] if "micrograde-feedback" in c["metadata"].get("tags", [])]
    theirs = [c for c in back["cells"] if c not in ours]
    assert theirs == original["cells"]
    assert back["cells"][0] in ours and "micrograde: 84 / 100" in back["cells"][0]["source"]
    value_cell = back["cells"].index(original["cells"][2])
    assert [c["source"].split("\n")[0] for c in back["cells"][value_cell + 1:value_cell + 6]] == [
        "### `__add__`: 15 / 15", "### `__mul__`: 15 / 15", "### `__pow__`: 15 / 15", "### `tanh`: 15 / 15",
        "### `backward`: 4 / 20"]
    backward = back["cells"][value_cell + 5]["source"]
    assert "wrong-order" in backward and "```mermaid" in backward and ":::wrong" in backward
    backward_line = original["cells"][2]["source"].splitlines().index("        for node in topo:") + 1
    assert f"(work.ipynb, cell 3, line {backward_line})" in backward
    html = (tmp_path / "back.html").read_text()
    assert "wrong-order" in html and "<svg" in html

    again = micrograde("grade", str(tmp_path / "back.ipynb"), "--format", "json",
                       "--feedback", str(tmp_path / "back2.ipynb"))
    assert same_report(again.stdout, first.stdout)
    # the same notebook again, but for the name of the file the diagnoses point at
    assert json.loads((tmp_path / "back2.ipynb").read_text().replace("back.ipynb", "work.ipynb")) == back


def test_feedback_for_an_older_notebook_without_cell_ids(tmp_path):
    path = write_notebook(tmp_path / "work.ipynb", as_notebook(SOLUTION, minor=4))
    result = micrograde("grade", str(path), "--feedback", str(tmp_path / "back.ipynb"))
    assert result.returncode == 0, result.stdout + result.stderr
    back = nbformat.read(tmp_path / "back.ipynb", as_version=4)
    nbformat.validate(back)


def test_nbformat_3_is_upgraded(tmp_path):
    v3 = nbformat.v3
    cells = [v3.new_code_cell(input=SOLUTION)]
    path = tmp_path / "old.ipynb"
    path.write_text(v3.writes_json(v3.new_notebook(worksheets=[v3.new_worksheet(cells=cells)])))
    report = json.loads(micrograde("grade", str(path), "--format", "json").stdout)
    assert report["score"] == 100.0


def test_skip_grading_tag(tmp_path):
    notebook = as_notebook(SOLUTION)
    notebook["cells"].append({"cell_type": "code", "metadata": {"tags": ["skip-grading"]}, "id": "late",
                              "outputs": [], "execution_count": None,
                              "source": "class Value:\n    pass"})
    report = grade(write_notebook(tmp_path / "work.ipynb", notebook))
    assert report.score == 100.0


def test_feedback_needs_a_notebook(tmp_path):
    (tmp_path / "work.py").write_text(SOLUTION)
    result = micrograde("grade", str(tmp_path / "work.py"), "--feedback", str(tmp_path / "x.ipynb"))
    assert result.returncode == 2 and "notebook" in result.stderr


def test_execute_runs_the_notebook_in_a_kernel(tmp_path):
    pytest.importorskip("ipykernel")
    path = write_notebook(tmp_path / "work.ipynb", as_notebook(SOLUTION, shell=HARMLESS))
    result = micrograde("grade", str(path), "--format", "json", "--execute", timeout=300)
    report = json.loads(result.stdout)
    failed = {c["cell"]: c["error"] for c in report["execution"]["failed_cells"]}
    assert "AttributeError" in failed[4]  # the demo cell, as a real kernel sees it
    assert report["score"] == 100.0


def test_check_from_inside_a_notebook(tmp_path):
    pytest.importorskip("ipykernel")
    from nbclient import NotebookClient

    source = SOLUTION.replace("self.grad += (1 - t**2) * out.grad", "self.grad += (1 - t) * out.grad")
    (tmp_path / "work.py").write_text(source)
    expected = grade(tmp_path / "work.py")
    notebook = as_notebook(source, shell=HARMLESS)
    notebook["cells"].append({"cell_type": "code", "metadata": {}, "id": "check", "outputs": [],
                              "execution_count": None,
                              "source": "from grader import check\ncheck(Value, train_step)"})
    node = nbformat.from_dict(notebook)
    NotebookClient(node, timeout=120, allow_errors=True, kernel_name="python3",
                   resources={"metadata": {"path": str(ROOT)}}).execute()
    [output] = node.cells[-1].outputs
    shown = output["data"]["text/markdown"]
    assert f"micrograde: {expected.score:g} / 100" in shown
    assert "**wrong-local-grad**" in shown and f"`tanh`: {expected.target_scores()['tanh'][0]:g} / 15" in shown
    assert "In [" in output["data"]["text/plain"]  # the diagnosis names the cell as Jupyter numbers it


# A comparison with an autograd library: the library is left out, the rest of the cell runs.
CELL = ("import torch, random\n"
        "import math\n"
        "x = torch.tensor([0.5], requires_grad=True); y = torch.tanh(x)\n"
        "y.backward()\n"
        "print(math.tanh(0.5), y.item())\n"
        "print(x.grad.item(),\n"
        "      1 - math.tanh(0.5) ** 2)\n"
        "seed = random.random()\n")


def test_the_library_and_what_uses_it_are_left_out_line_by_line():
    rewritten, library, line = without_library(CELL, ast.parse(CELL), set())
    assert (library, line) == ("torch", 1)
    assert rewritten.splitlines() == ["import random", "import math", "pass; pass", "pass", "pass", "pass", "",
                                      "seed = random.random()"]


def test_a_library_that_graded_code_uses_is_not_left_out():
    tree = ast.parse("class Value:\n    def tanh(self):\n        out = torch.tanh(self.data)\n        return out\n"
                     "def train_step(model, xs, ys, lr):\n    return [model(x) for x in xs]\n")
    protected = graded_names([tree], {"Value", "train_step"})
    assert "torch" in protected and not {"x", "out", "self", "model"} & protected
    assert without_library(CELL, ast.parse(CELL), protected) is None


def test_a_notebook_whose_value_uses_the_comparisons_library_keeps_its_import(tmp_path):
    """Graded code that uses torch from a comparison cell: the import stays, and is forbidden."""
    notebook = as_notebook(SOLUTION.replace("t = (math.exp(2 * x) - 1) / (math.exp(2 * x) + 1)",
                                            "t = float(torch.tanh(torch.tensor(x)))"))
    notebook["cells"].insert(1, {"cell_type": "code", "metadata": {}, "id": "compare", "outputs": [],
                                 "execution_count": None, "source": CELL})
    submission = read_submission(write_notebook(tmp_path / "work.ipynb", notebook))
    assert [name for name, _ in submission.forbidden_imports()] == ["torch"]
    assert not any("comparison" in note for source in submission.files for note in source.notes)
