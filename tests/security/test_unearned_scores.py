"""Attacks on the new kinds and the course knobs, written as a learner who wants points without the work: a cell
added with an exercise's first line after the course's finished engine, a computation that blames an op it does
not use, a module whose bug lies in an op no target grades, a grade's children talking to each other. Each scores no
higher than the same work without the trick. (The platform modes: ``tests/security/test_platform_attacks.py``.)"""

from __future__ import annotations

import json
from pathlib import Path

from helpers import ROOT, SOLUTION

from grader.exercise.config import load
from grader.grade import Options, grade

COURSES = ROOT / "tests" / "courses"
ATTACKS = ROOT / "tests" / "attacks"
TUTORIAL = ROOT / "tests" / "assignments" / "tutorial_deep"


def graded(path: Path, course: str) -> dict:
    return grade(path, Options(config=load(COURSES / course))).to_json()


def test_a_cell_added_after_the_courses_engine_is_not_graded_as_the_exercise(tmp_path):
    """The blank tutorial with one cell added at its end, first line ``# Exercise 4``: the course's finished engine
    (exercise 5, given to read) comes before it. Graded at the course's own exercise-4 cell, the blank one: no
    point more than the blank notebook, and the added cell is reported."""
    blank = json.loads((TUTORIAL / "blank.ipynb").read_text())
    added = json.loads(json.dumps(blank))
    added["cells"].append({"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                           "source": "# Exercise 4: done, see above\nprint('finished')\n"})
    (tmp_path / "blank.ipynb").write_text(json.dumps(blank))
    (tmp_path / "added.ipynb").write_text(json.dumps(added))
    honest, tricked = graded(tmp_path / "blank.ipynb", "tutorial-deep.toml"), graded(tmp_path / "added.ipynb",
                                                                                      "tutorial-deep.toml")
    scores = {t: s["score"] for t, s in tricked["targets"].items()}
    assert scores == {t: s["score"] for t, s in honest["targets"].items()}, scores
    assert all(scores[t] == 0.0 for t in ("add", "mul", "backward")), scores
    assert any("'# Exercise 4'" in w and "graded at the first" in w for w in tricked["warnings"]), tricked["warnings"]


SOFTMAX_COURSE = '''[targets.exp]
points = 10
[targets.softmax]
kind = "expression"
function = "softmax"
inputs = ["z0", "z1", "z2"]
code = """
def softmax(logits):
    counts = [z.exp() for z in logits]
    total = sum(counts)
    return [c / total for c in counts]

loss = -softmax([z0, z1, z2])[1].log()
"""
at = [[1.0, -2.0, 0.5]]
points = 10
'''
ENGINE = SOLUTION.split("\ndef train_step")[0] + '''

    def exp(self):
        out = Value(math.exp(self.data), (self,), "exp")

        def _backward():
            self.grad += out.data * out.grad

        out._backward = _backward
        return out

    def log(self):
        out = Value(math.log(self.data), (self,), "log")

        def _backward():
            self.grad += out.grad / self.data

        out._backward = _backward
        return out

    def __truediv__(self, other):
        return self * other**-1

    def __radd__(self, other):
        return self + other

    def __neg__(self):
        return self * -1
'''
HONEST = ENGINE + '''

def softmax(logits):
    counts = [z.exp() for z in logits]
    total = sum(counts)
    return [c / total for c in counts]
'''
# Constant probabilities, each made a node of the graph beside one node labelled exp whose value no exp gives: the
# graph blames exp, which its own target grades (and the learner's exp is right, so nothing is charged there).
BLAMING = ENGINE + '''

def softmax(logits):
    fake = Value(0.3, (logits[0],), "exp")
    return [Value(1 / 3, (fake,), "*") * 1.0 for _ in logits]
'''


def test_a_computation_that_blames_an_op_keeps_no_points(tmp_path):
    (tmp_path / "course.toml").write_text(SOFTMAX_COURSE)
    course = load(tmp_path / "course.toml")
    reports = {}
    for name, source in (("honest", HONEST), ("blaming", BLAMING)):
        (tmp_path / f"{name}.py").write_text(source)
        reports[name] = grade(tmp_path / f"{name}.py", Options(config=course)).to_json()
    assert reports["honest"]["score"] == 20.0, reports["honest"]["diagnoses"]
    blaming = reports["blaming"]
    assert blaming["targets"]["exp"]["score"] == 10.0 and blaming["targets"]["softmax"]["score"] == 0.0, blaming
    assert not any("keeps its points" in w for w in blaming["warnings"]), blaming["warnings"]


def test_handing_the_engine_between_children_in_process(tmp_path, mode):
    """``attacks/handoff_engine.src``: the training child's engine handed to the op child through every place two
    children might share, and file locks; nothing gets across, and the score is that of the same engine whose
    handoff is switched off."""
    train = "def train_step" + SOLUTION.split("def train_step")[1]
    attack = (ATTACKS / "handoff_engine.src").read_text()
    reports = {}
    for handoff in (True, False):
        path = tmp_path / f"handoff-{handoff}.py"
        path.write_text(f"HANDOFF = {handoff}\n" + attack + "\n" + train)
        reports[handoff] = grade(path, Options(timeout=10.0)).to_json()
    said = [line for line in reports[True]["output"].splitlines() if line.startswith("handoff:")]
    assert not any("found" in line for line in said), said
    assert "handoff: no lock (PermissionError)" in said, said
    assert {t: s["score"] for t, s in reports[True]["targets"].items()} == {
        t: s["score"] for t, s in reports[False]["targets"].items()}
