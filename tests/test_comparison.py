"""A notebook's comparison with an autograd library: the library is left out, the rest of the cell runs."""

from __future__ import annotations

import ast

from helpers import SOLUTION
from test_notebook import as_notebook, write_notebook

from grader.submission.comparison import graded_names, without_library
from grader.submission.source import read_submission

CELL = ("import torch, random\n"
        "import math\n"
        "x = torch.tensor([0.5], requires_grad=True); y = torch.tanh(x)\n"
        "y.backward()\n"
        "print(math.tanh(0.5), y.item())\n"
        "print(x.grad.item(),\n"
        "      1 - math.tanh(0.5) ** 2)\n"
        "seed = random.random()\n")


def test_the_library_and_what_uses_it_are_left_out_line_by_line():
    rewritten, library = without_library(CELL, ast.parse(CELL), set())
    assert library == "torch"
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
