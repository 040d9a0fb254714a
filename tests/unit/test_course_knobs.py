"""How a course says its exercise is meant: given code, checks off or weighted, reflected operators not asked
for, a ``backward()`` convention it teaches (``grader.exercise.knobs``, the kinds' options).

Graded on the real shapes these knobs exist for: the lecture's ``Value`` of Karpathy's notebook (given
``__add__`` and ``backward``, no ``__rmul__``) and the tutorial's ``backward()``, which zeroes the graph's
gradients first (``tests/assignments/``).
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from helpers import micrograde
from opmutants import engine

from grader.errors import ConfigError
from grader.exercise.config import as_toml, load, parse, tables
from grader.exercise.targets import Exercise
from grader.grade import Options, grade

ASSIGNMENTS = Path(__file__).parents[1] / "assignments"


def cell(notebook: Path, number: int) -> str:
    """A notebook's cell, numbered from 1 as Jupyter shows them."""
    return "".join(json.loads(notebook.read_text())["cells"][number - 1]["source"])


LECTURE = cell(ASSIGNMENTS / "karpathy_exercises" / "solution.ipynb", 10)  # __add__, __mul__, no __pow__ or tanh
WITHOUT_RMUL = LECTURE.replace("    def __rmul__(self, other):  # other * self\n        return self * other\n", "")
TUTORIAL_ENGINE = cell(ASSIGNMENTS / "tutorial_deep" / "blank.ipynb", 16)  # "# Solution 4": backward zeroes first


def graded(tmp_path: Path, source: str, course: dict) -> dict:
    path = tmp_path / "work.py"
    path.write_text(source)
    return grade(path, Options(config=parse(course, "course.toml"))).to_json()


def codes(report: dict, target: str) -> list[str]:
    return [d["code"] for d in report["diagnoses"] if d["target"] == target]


@pytest.mark.parametrize(("table", "says"), [
    ({"add": {"given": "yes"}}, "[targets.add] given: expected true or false"),
    ({"add": {"given": True, "points": 5}}, "[targets.add] points: a given part is graded for regressions"),
    ({"add": {"points": 5, "off": ["speed"]}}, "[targets.add] off: no check 'speed'"),
    ({"add": {"points": 5, "off": "generated"}}, "[targets.add] off: expected a list of check names"),
    ({"add": {"points": 5, "off": ["forward", "local-grad", "reused-node", "constant-operand", "generated"]}},
     "[targets.add] off: every check of the target is off"),
    ({"add": {"points": 5, "weights": {"forward": 0}}}, "[targets.add] weights: forward must be a positive number"),
    ({"add": {"points": 5, "weights": {"forward": True}}}, "[targets.add] weights: forward must be a positive"),
    ({"add": {"points": 5, "weights": {"fast": 2}}}, "[targets.add] weights: no check 'fast'"),
    ({"add": {"points": 5, "weights": [2]}}, "[targets.add] weights: expected a table of check names"),
    ({"add": {"points": 5, "off": ["generated"], "weights": {"generated": 2}}},
     "[targets.add] weights: check 'generated' is off"),
    ({"add": {"points": 5, "off": ["generated"], "hidden": ["generated"]}}, "[targets.add] hidden: no check"),
    ({"add": {"points": 5, "cell": ""}}, "[targets.add] cell: expected a cell's tag or the start of its first"),
    ({"add": {"points": 5, "cell": "# Exercise\n4"}}, "[targets.add] cell: expected"),
    ({"add": {"points": 5, "reflected": "no"}}, "[targets.add] reflected: expected true or false"),
    ({"tanh": {"points": 5, "reflected": False}}, "[targets.tanh] reflected: tanh has no reflected method"),
    ({"backward": {"points": 5, "accept": ["zero-first"]}}, "[targets.backward] accept: expected a list of some "
                                                            'of "zeroes-first"'),
    ({"add": {"points": 5, "accept": ["zeroes-first"]}}, "[targets.add]: unknown key 'accept'"),
])
def test_a_wrong_knob_is_one_line_naming_its_key(table, says):
    with pytest.raises(ConfigError) as raised:
        parse({"targets": table}, "course.toml")
    assert says in str(raised.value) and "\n" not in str(raised.value), str(raised.value)


@pytest.mark.parametrize(("submission", "says"), [
    ({"skip_cells": "# Solution"}, "[submission] skip_cells: expected a list"),
    ({"skip_cells": ["  "]}, "[submission] skip_cells: expected a cell's tag"),
    ({"given": ["f(x)"]}, "[submission] given: expected a list of names"),
    ({"given": "f"}, "[submission] given: expected a list of names"),
    ({"solutions": []}, "[submission]: unknown key 'solutions'"),
])
def test_a_wrong_submission_table_is_one_line_naming_its_key(submission, says):
    with pytest.raises(ConfigError, match=r"\[submission\]") as raised:
        parse({"targets": {"add": {"points": 5}}, "submission": submission}, "course.toml")
    assert says in str(raised.value), str(raised.value)


def test_the_command_says_a_wrong_knob_in_one_line(tmp_path):
    course = tmp_path / "micrograde.toml"
    course.write_text('[targets.mul]\npoints = 8\nweights = { "reused-node" = -1 }\n')
    done = micrograde("grade", str(tmp_path), "--config", str(course))
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "[targets.mul] weights: reused-node must be a positive" in done.stderr


def test_every_knob_survives_the_configuration_a_template_writes(tmp_path):
    """A template carries the course as ``as_toml(tables(config))``: read back, it means the same."""
    course = load(Path(__file__).parents[1] / "courses" / "karpathy-exercises.toml")
    written = tmp_path / "micrograde.toml"
    written.write_text(as_toml(tables(course), "carried"))
    again = load(written)
    assert again.sha256 == course.sha256
    assert tomllib.loads(written.read_text())["targets"]["add"] == {"given": True, "time_limit": 10.0}
    staged = parse({"targets": {"mul": {"points": 8, "cell": "# Exercise 4", "off": ["generated"],
                                        "weights": {"reused-node": 2}, "reflected": False},
                                "backward": {"points": 10, "accept": ["zeroes-first"]}},
                    "submission": {"skip_cells": ["# Solution"], "given": ["f", "Value.__repr__"]}}, "c.toml")
    written.write_text(as_toml(tables(staged), "carried"))
    assert load(written).sha256 == staged.sha256 != course.sha256


@pytest.mark.parametrize("name", sorted(p.name for p in (Path(__file__).parents[1] / "courses").glob("*.toml")))
def test_every_course_file_survives_the_configuration_a_template_writes(tmp_path, name):
    """Every kind's options, knobs and target names (``SGD.step``, a name with a dot, is quoted) read back the
    same from what a template or ``scaffold --adopt`` writes."""
    course = load(Path(__file__).parents[1] / "courses" / name)
    written = tmp_path / "micrograde.toml"
    written.write_text(as_toml(tables(course), "carried"))
    assert load(written).sha256 == course.sha256


def test_weights_share_a_targets_points_and_off_checks_are_not_run():
    exercise = Exercise(parse({"targets": {"mul": {"points": 8, "off": ["generated"],
                                                   "weights": {"reused-node": 2, "constant-operand": 3}}}}, "c"))
    mul = exercise.target("mul")
    assert [(c.id, mul.points_of(c)) for c in mul.checks] == [
        ("mul.forward", 8 / 7), ("mul.local-grad", 8 / 7), ("mul.reused-node", 16 / 7),
        ("mul.constant-operand", 24 / 7)]


def test_reflected_operators_not_asked_for_are_not_charged(tmp_path):
    """The lecture's Value without ``__rmul__``: the classic checks take 6 of mul's 15 points for ``3 * a``; a
    course that does not ask for it says ``reflected = false``, and a * 3 is still checked."""
    today = graded(tmp_path, WITHOUT_RMUL, {"targets": {"mul": {"points": 15}}})
    assert (today["targets"]["mul"]["score"], codes(today, "mul")) == (9.0, ["constant-operand"])
    meant = graded(tmp_path, WITHOUT_RMUL, {"targets": {"mul": {"points": 15, "reflected": False}}})
    assert (meant["targets"]["mul"]["score"], meant["diagnoses"]) == (15.0, [])
    broken = WITHOUT_RMUL.replace("        other = other if isinstance(other, Value) else Value(other)\n        out = "
                                  "Value(self.data * other.data", "        out = Value(self.data * other.data")
    assert broken != WITHOUT_RMUL
    lost = graded(tmp_path, broken, {"targets": {"mul": {"points": 15, "reflected": False}}})
    assert codes(lost, "mul") == ["constant-operand"], lost["diagnoses"]


def test_the_lectures_own_add_is_given_graded_for_regressions_and_worth_nothing(tmp_path):
    """Karpathy's notebook gives __add__: as a target of its own it loses 2 of 5 points today for 2 + a; given,
    it is checked, worth nothing, and a learner who breaks it is told it is the course's code."""
    lecture = LECTURE.replace("    def __radd__(self, other):  # other + self\n        return self + other\n", "")
    today = graded(tmp_path, lecture, {"targets": {"add": {"points": 5}, "exp": {"points": 5}}})
    assert today["targets"]["add"] == {"score": 3.0, "max_score": 5.0}
    course = {"targets": {"add": {"given": True, "reflected": False}, "exp": {"points": 5}}}
    given = graded(tmp_path, lecture, course)
    assert given["targets"]["add"] == {"score": 0.0, "max_score": 0.0, "given": True}
    assert (given["score"], given["max_score"], given["diagnoses"]) == (5.0, 5.0, [])
    assert all(c["status"] == "passed" for c in given["checks"] if c["target"] == "add")
    broken = lecture.replace("            self.grad += 1.0 * out.grad\n", "            self.grad = 1.0 * out.grad\n")
    told = graded(tmp_path, broken, course)
    assert (told["score"], told["max_score"]) == (5.0, 5.0)
    [diagnosis] = [d for d in told["diagnoses"] if d["target"] == "add"]
    assert diagnosis["code"] == "grad-overwrite" and diagnosis["message"].startswith("This is the course's own code")


def test_a_broken_given_part_is_not_full_marks_at_the_command_line(tmp_path):
    path = tmp_path / "engine.py"
    path.write_text(LECTURE.replace("        self.grad = 1.0\n", "        self.grad = 0.0\n"))
    course = tmp_path / "micrograde.toml"
    course.write_text("[targets.backward]\ngiven = true\n[targets.mul]\npoints = 10\n")
    done = micrograde("grade", str(path), "--config", str(course))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "  backward         given        " in done.stdout and "  total           10 / 10" in done.stdout
    assert "[missing-seed] backward" in done.stdout and "All checks passed" not in done.stdout


def test_a_backward_that_zeroes_the_graph_first_is_accepted_where_the_course_teaches_it(tmp_path):
    """The tutorial's own backward() resets every gradient in the graph before seeding: 8 of 20 points lost
    today as no-accumulation; accepted by a course that teaches it, and still wrong when wrong in another way."""
    today = graded(tmp_path, TUTORIAL_ENGINE, {"targets": {"backward": {"points": 20}}})
    assert (today["targets"]["backward"]["score"], codes(today, "backward")) == (12.0, ["no-accumulation"])
    course = {"targets": {"backward": {"points": 20, "accept": ["zeroes-first"]}}}
    accepted = graded(tmp_path, TUTORIAL_ENGINE, course)
    assert (accepted["targets"]["backward"]["score"], accepted["diagnoses"]) == (20.0, [])
    reversed_order = "        for v in reversed(topo):\n            v._backward()"
    assert reversed_order in TUTORIAL_ENGINE
    wrong = graded(tmp_path, TUTORIAL_ENGINE.replace(reversed_order, "        for v in topo:\n            "
                                                                     "v._backward()"), course)
    assert codes(wrong, "backward") == ["wrong-order"]
    assert [d["line"] for d in wrong["diagnoses"]] == [49]  # the loop that runs the closures


def test_the_classic_exercise_is_unchanged_by_the_knobs(tmp_path):
    """No knob set: the route matrix's engine grades as it always has."""
    report = graded(tmp_path, engine(), {"targets": {"add": {"points": 15}, "mul": {"points": 15},
                                                     "backward": {"points": 20}}})
    assert (report["score"], report["max_score"], report["diagnoses"]) == (50.0, 50.0, [])
