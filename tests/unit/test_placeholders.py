"""A part still as the course handed it out is ``not-implemented`` at its placeholder, not a misconception
(``grader.diagnosis.placeholder``): the stubs of the three real assignments (``tests/assignments/``), each
where the human grader points, and code that merely does nothing is still diagnosed for what it does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from grader.exercise.config import parse
from grader.grade import Options, grade

ASSIGNMENTS = Path(__file__).parents[1] / "assignments"


def cell(notebook: Path, number: int) -> str:
    return "".join(json.loads(notebook.read_text())["cells"][number - 1]["source"])


def diagnosed(tmp_path: Path, source: str, targets: dict) -> list[tuple[str, str, int | None]]:
    path = tmp_path / "work.py"
    path.write_text(source)
    report = grade(path, Options(config=parse({"targets": targets}, "course.toml"))).to_json()
    return [(d["target"], d["code"], d["line"]) for d in report["diagnoses"]]


def test_the_tutorials_pass_stubs_under_todo_comments(tmp_path):
    """Exercise 4's cell: ``_backward`` closures of ``# TODO`` and ``pass``, a ``backward()`` of ``pass``."""
    stub = cell(ASSIGNMENTS / "tutorial_deep" / "blank.ipynb", 15)
    found = diagnosed(tmp_path, stub, {"add": {"points": 8, "off": ["forward"]}, "mul": {"points": 8},
                                       "backward": {"points": 10}})
    assert found == [("add", "not-implemented", 18), ("mul", "not-implemented", 27),
                     ("backward", "not-implemented", 39)]


def test_the_homeworks_your_code_here(tmp_path):
    """The homework's engine.py: ``# YOUR CODE HERE`` above ``raise NotImplementedError`` (after a given assert
    in ``__pow__``), and above the ``pass`` of backward()'s loop, whose topological sort is given."""
    engine = (ASSIGNMENTS / "dl_course_hw1" / "blank" / "micrograd" / "engine.py").read_text()
    found = diagnosed(tmp_path, engine, {"mul": {"points": 6}, "pow": {"points": 6}, "exp": {"points": 5},
                                         "relu": {"points": 5}, "backward": {"points": 8}})
    assert found == [("mul", "not-implemented", 32), ("pow", "not-implemented", 37), ("exp", "not-implemented", 41),
                     ("relu", "not-implemented", 54), ("backward", "not-implemented", 73)]


def test_a_method_the_class_does_not_have_points_where_the_course_asks_for_it(tmp_path):
    """Karpathy's section 2: the lecture's class with ``# YOUR CODE HERE`` where the methods go."""
    lecture = cell(ASSIGNMENTS / "karpathy_exercises" / "blank.ipynb", 10)
    found = diagnosed(tmp_path, lecture, {"exp": {"points": 8}, "mul": {"points": 8}, "backward": {"points": 5}})
    assert found == [("exp", "not-implemented", 27), ("mul", "not-implemented", 27)]


@pytest.mark.parametrize(("closure", "code"), [
    ("            pass\n", "wrong-local-grad"),  # a closure that passes nothing on: written, and wrong
    ("            # TODO\n            pass\n", "not-implemented"),
    ("            # TODO: check this sign\n            self.grad -= out.grad\n            other.grad += out.grad\n",
     "wrong-local-grad"),  # a TODO over code is not a stub
])
def test_only_a_stub_is_a_placeholder(tmp_path, closure, code):
    lecture = cell(ASSIGNMENTS / "karpathy_exercises" / "blank.ipynb", 10)
    right = "            self.grad += 1.0 * out.grad\n            other.grad += 1.0 * out.grad\n"
    assert right in lecture
    found = diagnosed(tmp_path, lecture.replace(right, closure), {"add": {"points": 5, "reflected": False}})
    assert [c for _, c, _ in found] == [code]
