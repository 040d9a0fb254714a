"""Numerical estimates of a derivative: a value a notebook cell computes, and a numerical derivative function.

Graded on the corpus as the human grader grades it (the Karpathy-style notebooks' ``numerical_grad`` and
``numerical_grad2``, the tutorial's ``numerical_derivative``), under course files written from the staff docs
(``tests/courses/``), and on learner-style code written here in other shapes: a script with loops, a dict
comprehension and numpy; a notebook with the step in a cell of its own and a helper in another; lambdas, steps
of the function's own, arguments in another order.
"""

from __future__ import annotations

import functools
import json
import re
import tomllib

import pytest
from helpers import ROOT, micrograde
from recipes import section

from grader.errors import ConfigError
from grader.exercise.config import load, parse
from grader.exercise.numeric import EstimateCase
from grader.grade import Options, grade
from grader.judging.judge import Tolerance
from grader.judging.kinds import UNREADABLE, prepare_estimate

KARPATHY = ROOT / "tests" / "assignments" / "karpathy_exercises"
TUTORIAL = ROOT / "tests" / "assignments" / "tutorial_deep"
KARPATHY_COURSE = ROOT / "tests" / "courses" / "karpathy-exercises.toml"
TUTORIAL_COURSE = ROOT / "tests" / "courses" / "tutorial-numerical-derivative.toml"
F = "a**2 * c - cos(2*b) + 3.0/c + b**1.5 - a**0.5"
VALUE = {"kind": "numerical-gradient", "value": "numerical_grad", "calls": "f", "inputs": ["a", "b", "c"],
         "of": F, "at": [2, 3, 4], "points": 10}
NUMERICAL = parse({"targets": {"numerical_grad": VALUE, "numerical_grad2": {
    **VALUE, "value": "numerical_grad2", "method": "symmetric"}}}, "numerical.toml")
DERIVATIVE = {"kind": "numerical-derivative", "function": "numerical_derivative", "inputs": ["x"],
              "of": "3*x**2 - 4*x + 5", "at": [3.0], "step": 0.0001, "points": 10}


def verdicts(folder):
    return tomllib.loads((folder / "verdicts.toml").read_text())["submissions"]


def course(**targets: dict):
    return parse({"targets": targets}, "course.toml")


def graded(path, config) -> dict:
    report = grade(path, Options(config=config)).to_json()
    json.dumps(report, allow_nan=False)
    return report


def verdict_of(report: dict, target: str) -> tuple:
    """A target as the human grader's verdict says it: "right" (every point, no diagnosis), or its one
    diagnosis's code, cell and line."""
    score = report["targets"][target]
    found = [(d["code"], d.get("cell"), d["line"]) for d in report["diagnoses"] if d["target"] == target]
    if not found and score["score"] == score["max_score"]:
        return ("right",)
    assert score["score"] < score["max_score"] and len(found) == 1, (score, found)
    return found[0]


def human(part: object) -> tuple:
    if part == "right":
        return ("right",)
    return part["code"], part.get("cell"), part["line"]


# ---------------------------------------------------------------- the course's configuration

@pytest.mark.parametrize(("change", "says"), [
    ({"value": None}, "numerical_grad] value: missing"),
    ({"calls": "f(a)"}, "calls: expected a Python name"),
    ({"at": [2, 3]}, "at: one number for each of inputs (a, b, c), got 2"),
    ({"at": [-1, 3, 4]}, "at: of 'a**2 * c - cos(2*b) + 3.0/c + b**1.5 - a**0.5' has no finite gradient at (-1, 3, 4)"),
    ({"method": "central"}, 'method: expected one of "forward", "symmetric"'),
    ({"tolerance": -1}, "tolerance: expected a positive number"),
    ({"variants": ["a + d"]}, "variants: d is not one of its inputs"),
    ({"variants": "a + b"}, "variants: expected a list of formulas"),
    ({"of": "a + os.system"}, "] of: "),
])
def test_a_wrong_numerical_gradient_target_is_one_line_naming_its_key(change, says):
    table = {k: v for k, v in {**VALUE, **change}.items() if v is not None}
    with pytest.raises(ConfigError, match=says.replace("[", r"\[").replace("]", r"\]").replace("(", r"\(")
                       .replace(")", r"\)").replace("*", r"\*").replace("+", r"\+")):
        course(numerical_grad=table)


@pytest.mark.parametrize(("change", "says"), [
    ({"inputs": ["x", "y"]}, "inputs: a numerical derivative is of a function of one input, got 2"),
    ({"arguments": ["f", "y", "h"]}, "arguments: the call's arguments are f, x and"),
    ({"arguments": ["x", "h"]}, "arguments: the call's arguments are f, x and"),
    ({"step": 0}, "step: expected a positive number"),
    ({"at": [0.0], "of": "log(x)"}, "at: of 'log(x)' has no finite gradient at (0)"),
])
def test_a_wrong_numerical_derivative_target_is_one_line_naming_its_key(change, says):
    with pytest.raises(ConfigError, match=says.replace("(", r"\(").replace(")", r"\)")):
        course(numerical_derivative={**DERIVATIVE, **change})


def test_the_course_files_are_the_staff_docs_worked_configuration():
    """The configurations the corpus is graded with are the staff docs' worked one, target for target."""
    worked = section("docs/staff.md", "#### A worked configuration: numerical gradients and a softmax")
    [block] = re.findall(r"```toml\n(.*?)```", worked, re.S)
    documented = tomllib.loads(block)["targets"]
    for path in (KARPATHY_COURSE, TUTORIAL_COURSE):
        for name, table in tomllib.loads(path.read_text())["targets"].items():
            assert documented[name] == table, name


def test_the_course_files_mean_what_they_say():
    karpathy = load(KARPATHY_COURSE)
    grad2 = karpathy.target("numerical_grad2").settings
    assert (grad2["method"], grad2["at"], grad2["calls"]) == ("symmetric", (2.0, 3.0, 4.0), "f")
    tutorial = load(TUTORIAL_COURSE).target("numerical_derivative").settings
    assert (tutorial["step"], tutorial["at"]) == (0.0001, (3.0,))


# ---------------------------------------------------------------- the corpus, as the human grader grades it

KARPATHY_PARTS = [(name, part) for name, entry in sorted(verdicts(KARPATHY).items())
                  for part in ("numerical_grad", "numerical_grad2")]


@functools.cache
def karpathy_report(name: str) -> dict:
    return graded(KARPATHY / verdicts(KARPATHY)[name]["path"], load(KARPATHY_COURSE))


@pytest.mark.parametrize(("name", "part"), KARPATHY_PARTS)
def test_the_karpathy_notebooks_numerical_gradients_get_the_human_graders_verdict(name, part):
    assert verdict_of(karpathy_report(name), part) == human(verdicts(KARPATHY)[name]["parts"][part])


def test_an_edited_f_is_graded_as_the_course_gives_it_and_the_ta_is_told():
    """The learner retyped the given f (b**2.5): their own checks print WRONG, but the estimates are right for the
    course's f, which is what the course asks for; the report says which f it graded with, where a TA reads it."""
    report = karpathy_report("edited_f")
    said = [w for w in report["warnings"] if "is not the course's" in w]
    assert said == [f"{part}: the submission's f is not the course's (at a = 2, b = 3, c = 4 it gives 29.9641, the "
                    "course's f 19.5718): the estimate was graded with the course's f, as the course gives it"
                    for part in ("numerical_grad", "numerical_grad2")]
    assert not any("is not the course's" in w for w in karpathy_report("all_right")["warnings"])


def test_a_tiny_step_the_courses_check_accepts_is_accepted_for_the_other_function_too():
    """h = 2e-10 in a symmetric difference misses by 3.6e-6 on the course's f (its check says OK) and by more on
    micrograde's other function, whose values are larger: the step is judged where the course's check judges it."""
    checks = {c["id"]: c["status"] for c in karpathy_report("tiny_symmetric_step")["checks"]}
    assert checks["numerical_grad2.course-function"] == checks["numerical_grad2.other-function"] == "passed"


def without_solution_cells(path, tmp_path):
    """The notebook with the course's own ``# Solution N`` cells tagged ``skip-grading``: what is graded is the
    learner's exercise cell, which the course's solution cell right after it would redefine."""
    notebook = json.loads(path.read_text())
    for cell in notebook["cells"]:
        if cell["cell_type"] == "code" and "".join(cell["source"]).startswith("# Solution"):
            cell.setdefault("metadata", {}).setdefault("tags", []).append("skip-grading")
    copy = tmp_path / path.name
    copy.write_text(json.dumps(notebook))
    return copy


@pytest.mark.parametrize("name", sorted(verdicts(TUTORIAL)))
def test_the_tutorials_numerical_derivative_gets_the_human_graders_verdict(name, tmp_path):
    entry = verdicts(TUTORIAL)[name]
    report = graded(without_solution_cells(TUTORIAL / entry["path"], tmp_path), load(TUTORIAL_COURSE))
    assert verdict_of(report, "numerical_derivative") == human(entry["parts"]["numerical_derivative"])


# ---------------------------------------------------------------- learner-style code of other shapes

SCRIPT = '''"""My answers to the micrograd exercises, as one script."""
import math

import numpy as np


def f(a, b, c):
    return a**2 * c - math.cos(2*b) + 3.0/c + b**1.5 - a**0.5


point = (2.0, 3.0, 4.0)
h = 1e-6

# forward differences, one input at a time
numerical_grad = []
for i in range(3):
    moved = list(point)
    moved[i] += h
    numerical_grad.append((f(*moved) - f(*point)) / h)


def nudge(i, step):
    p = np.array(point)
    p[i] += step
    return f(*p)


numerical_grad2 = {name: (nudge(i, h) - nudge(i, -h)) / (2 * h) for i, name in enumerate("abc")}

print("forward:", numerical_grad)
print("symmetric:", numerical_grad2)
'''


@pytest.mark.parametrize(("change", "expected"), [
    ((), {"numerical_grad": ("right",), "numerical_grad2": ("right",)}),
    (("/ (2 * h) for i", "/ h for i"),
     {"numerical_grad": ("right",), "numerical_grad2": ("wrong-difference-quotient", None, 28)}),
    (("(nudge(i, h) - nudge(i, -h)) / (2 * h)", "(nudge(i, 0) - nudge(i, -h)) / h"),
     {"numerical_grad": ("right",), "numerical_grad2": ("one-sided-difference", None, 28)}),
    (("h = 1e-6", "h = 1e-2"),
     {"numerical_grad": ("wrong-step", None, 12), "numerical_grad2": ("wrong-step", None, 12)}),
    (("numerical_grad.append((f(*moved) - f(*point)) / h)", "numerical_grad.append((f(*moved) - f(*point)) / -h)"),
     {"numerical_grad": ("wrong-difference-quotient", None, 19), "numerical_grad2": ("right",)}),
], ids=["right", "symmetric-over-h", "backward-for-symmetric", "step-1e-2", "sign"])
def test_a_script_with_loops_a_dict_comprehension_and_numpy(tmp_path, change, expected):
    """Each estimate is pointed at the statement that fills it (the ``append`` in the loop, the comprehension),
    a wrong step at the step's assignment."""
    path = tmp_path / "answers.py"
    path.write_text(SCRIPT.replace(*change) if change else SCRIPT)
    report = graded(path, NUMERICAL)
    assert {t: verdict_of(report, t) for t in expected} == expected


def notebook(*cells: str) -> str:
    return json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": "code", "id": f"c{i}", "metadata": {}, "execution_count": None, "outputs": [],
         "source": source} for i, source in enumerate(cells)]})


CELLS = ["import numpy as np\nfrom math import sin, cos",
         "def f(a, b, c):\n    return a**2 * c - cos(2*b) + 3.0/c + b**1.5 - a**0.5",
         "h = 1e-6",
         "def partial(fn, at, i, step, both_ways=False):\n    e = np.zeros(len(at))\n    e[i] = step\n"
         "    if both_ways:\n        return (fn(*(at + e)) - fn(*(at - e))) / (2 * step)\n"
         "    return (fn(*(at + e)) - fn(*at)) / step",
         "x0 = np.array([2.0, 3.0, 4.0])\nnumerical_grad = np.array([partial(f, x0, i, h) for i in range(3)])",
         "numerical_grad2 = tuple(partial(f, x0, i, h, both_ways=True) for i in range(3))\nnumerical_grad2"]


@pytest.mark.parametrize(("cell", "source", "expected"), [
    (None, None, {"numerical_grad": ("right",), "numerical_grad2": ("right",)}),
    (2, "h = 0.05", {"numerical_grad": ("wrong-step", 3, 1), "numerical_grad2": ("wrong-step", 3, 1)}),
    (4, "def gradf(a, b, c):\n    return [2*a*c - 0.5*a**-0.5, 2*sin(2*b) + 1.5*b**0.5, a**2 - 3/c**2]\n\n"
        "x0 = np.array([2.0, 3.0, 4.0])\nnumerical_grad = gradf(*x0)  # the same, exactly",
     {"numerical_grad": ("pasted-constants", 5, 5), "numerical_grad2": ("right",)}),
    (4, "numerical_grad = [partial(f, x0, i, h) for i in range(3)]",
     {"numerical_grad": ("crash", 5, 1), "numerical_grad2": ("crash", 6, 1)}),
    (5, "[f(2 + h, 3, 4), f(2 - h, 3, 4), f(2, 3 + h, 4), f(2, 3 - h, 4), f(2, 3, 4 + h), f(2, 3, 4 - h)]\n"
        "numerical_grad2 = [15.646446609406727, 2.0392452149554643, 3.8125]",
     {"numerical_grad": ("right",), "numerical_grad2": ("pasted-constants", 6, 2)}),
], ids=["right", "step-in-its-own-cell", "gradf-called", "x0-never-defined", "pasted-beside-calls"])
def test_a_notebook_with_the_step_and_a_helper_in_cells_of_their_own(tmp_path, cell, source, expected):
    """The helper (defined in one cell, called in others) evaluates the grader's function; numbers that do not
    come from f (gradf's, or pasted beside calls of f made for show) do not follow the function it is replaced
    by."""
    cells = list(CELLS)
    if cell is not None:
        cells[cell] = source
    path = tmp_path / "work.ipynb"
    path.write_text(notebook(*cells))
    report = graded(path, NUMERICAL)
    assert {t: verdict_of(report, t) for t in expected} == expected
    if cell == 5:  # pasted beside calls: right with the course's own f, so half the points
        assert report["targets"]["numerical_grad2"]["score"] == 5.0


DERIVATIVE_SOURCES = {
    "lambda": ("numerical_derivative = lambda f, x, h=1e-5: (f(x + h) - f(x)) / h\n", ("right",)),
    "symmetric": ("def numerical_derivative(f, x, h):\n    return (f(x + h) - f(x - h)) / (2 * h)\n", ("right",)),
    "backward": ("def numerical_derivative(f, x, h):\n    return (f(x) - f(x - h)) / h\n", ("right",)),
    "own-step": ("def numerical_derivative(f, x, h):\n    h = 0.01  # big enough to see something\n"
                 "    return (f(x + h) - f(x)) / h\n", ("wrong-step", None, 2)),
    "sign": ("def numerical_derivative(f, x, h):\n    return (f(x) - f(x + h)) / h\n",
             ("wrong-difference-quotient", None, 2)),
    "precedence": ("def numerical_derivative(f, x, h):\n    rise = f(x + h) - f(x - h)\n    return rise / 2*h\n",
                   ("wrong-difference-quotient", None, 3)),
    "no-division": ("def numerical_derivative(f, x, h):\n    return f(x + h) - f(x)\n",
                    ("wrong-difference-quotient", None, 2)),
    "constant": ("def numerical_derivative(f, x, h):\n    f(x + h)\n    return 14.0\n", ("pasted-constants", None, 3)),
    "stub": ("def numerical_derivative(f, x, h):\n    '''TODO'''\n    pass\n", ("not-implemented", None, 3)),
    "raises": ("def numerical_derivative(f, x, h):\n    return (f(x + h) - f(x)) / (h - h)\n", ("crash", None, 2)),
}


@pytest.mark.parametrize("name", sorted(DERIVATIVE_SOURCES))
def test_numerical_derivative_functions_written_otherwise(tmp_path, name):
    source, expected = DERIVATIVE_SOURCES[name]
    path = tmp_path / "ex0.py"
    path.write_text(source)
    assert verdict_of(graded(path, course(numerical_derivative=DERIVATIVE)), "numerical_derivative") == expected


@pytest.mark.parametrize(("source", "expected"), [
    ("def numerical_derivative(f, x, h):\n    return (f(x + h) - f(x)) / h\n", ("one-sided-difference", None, 2)),
    ("def numerical_derivative(f, x, h):\n    return (f(x + h) - f(x - h)) / (2 * h)\n", ("right",)),
])
def test_a_forward_difference_where_the_course_asks_for_the_symmetric_one(tmp_path, source, expected):
    path = tmp_path / "ex0.py"
    path.write_text(source)
    config = course(numerical_derivative={**DERIVATIVE, "method": "symmetric"})
    assert verdict_of(graded(path, config), "numerical_derivative") == expected


def test_arguments_in_the_functions_own_order_and_a_step_of_its_own(tmp_path):
    path = tmp_path / "ex0.py"
    path.write_text("def slope(x, f, h=1e-6):\n    return (f(x + h) - f(x)) / h\n\n\n"
                    "def slope_at(f, x):\n    return slope(x, f)\n\n\n"
                    "def coarse(f, x):\n    h = 0.1\n    return (f(x + h) - f(x)) / h\n")
    config = course(a={**DERIVATIVE, "function": "slope", "arguments": ["x", "f", "h"]},
                    b={**DERIVATIVE, "function": "slope_at", "arguments": ["f", "x"]},
                    c={**DERIVATIVE, "function": "coarse", "arguments": ["f", "x"]})
    report = graded(path, config)
    assert [verdict_of(report, t) for t in "abc"] == [("right",), ("right",), ("wrong-step", None, 10)]


# ---------------------------------------------------------------- what the child sends is never trusted

def test_a_hostile_reply_fails_its_case_without_an_exception():
    config = course(numerical_grad=VALUE)
    target = next(t for t in __import__("grader.exercise.targets", fromlist=["Exercise"]).Exercise(config).targets)
    case = target.checks[0].cases[0]
    assert isinstance(case, EstimateCase)
    prepared = prepare_estimate(case, target, target.checks[0], Tolerance())
    for reply in ({"result": "nope", "calls": []}, {"result": [1.0], "calls": "x"}, {}):
        with pytest.raises(UNREADABLE):
            prepared.judge(reply)
    hostile = [{"result": [1e308, -1e308, 5.0], "calls": [[1e308, 3.0, 4.0], [2.0, "x", 4.0], [2.0, 3.0]]},
               {"result": [{"invalid": "NoneType"}, None, 2.0], "calls": [[2.0 + 1e-300, 3.0, 4.0]] * 600},
               {"result": [15.6, 2.0, 3.8] * 30, "calls": [[float("nan"), 3.0, 4.0], [2.0, 3.0, 4.0]]}]
    for reply in hostile:
        verdict = prepared.judge(reply)
        assert not verdict.passed("grad")


@pytest.mark.parametrize(("value", "code"), [
    ("(x * 1.5 for x in iter(int, 1))", "not-implemented"),  # an endless generator of zeros: capped, a stub's
    ("'abc'", "wrong-derivative"),
    ("None", "crash"),
    ("[f(2, 3, 4, scale=1.0)] * 3", "crash"),  # an argument of the learner's own, that the course's f has not
])
def test_what_a_value_holds_is_never_trusted(tmp_path, value, code):
    path = tmp_path / "work.py"
    path.write_text(f"from math import sin, cos\n\n\ndef f(a, b, c, scale=1.0):\n    return scale * ({F})\n\n\n"
                    f"numerical_grad = {value}\n")
    course_file = tmp_path / "course.toml"
    course_file.write_text("[targets.numerical_grad]\n" + "".join(
        f"{k} = {json.dumps(v)}\n" for k, v in VALUE.items()))
    result = micrograde("grade", str(path), "--config", str(course_file), "--format", "json", "--timeout", "2")
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    assert [(d["target"], d["code"]) for d in report["diagnoses"]] == [("numerical_grad", code)]


def test_the_cells_after_the_one_that_computes_the_value_are_not_run_again(tmp_path):
    """A later cell that names the value (a summary, a plot) is left out of the runs: here one that would never
    finish with the grader's function in place of the learner's."""
    later = ("# the estimates, side by side: numerical_grad and numerical_grad2\n"
             "while f.__code__.co_filename.startswith('<'):  # only the learner's own f is from the notebook\n"
             "    pass\nprint(numerical_grad, numerical_grad2)")
    path = tmp_path / "work.ipynb"
    path.write_text(notebook(*CELLS, later))
    report = grade(path, Options(config=NUMERICAL, timeout=3.0)).to_json()
    assert {t: verdict_of(report, t) for t in ("numerical_grad", "numerical_grad2")} == {
        "numerical_grad": ("right",), "numerical_grad2": ("right",)}
