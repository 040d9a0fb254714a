"""The gradient kind of target: a function that returns the gradient of a formula the course gives.

Graded on the Karpathy-style notebooks of ``tests/assignments/karpathy_exercises/`` (section 1) and on
learner-style files written here, under ``tests/courses/gradient-by-hand.toml``.
"""

from __future__ import annotations

import json
import math
import tomllib

import pytest
import sympy
from helpers import ROOT, micrograde

from grader.errors import ConfigError
from grader.exercise.config import load, parse
from grader.exercise.formula import FormulaError
from grader.exercise.formula import parse as parse_formula
from grader.grade import Options, grade

COURSE = ROOT / "tests" / "courses" / "gradient-by-hand.toml"
KARPATHY = ROOT / "tests" / "assignments" / "karpathy_exercises"
VERDICTS = tomllib.loads((KARPATHY / "verdicts.toml").read_text())["submissions"]
GRADIENT = {"kind": "gradient", "function": "gradf", "inputs": ["a", "b", "c"], "points": 16,
            "of": "a**2 * c - cos(2*b) + 3.0/c + b**1.5 - a**0.5"}


@pytest.mark.parametrize("text", ["a**2 * c - cos(2*b) + 3.0/c + b**1.5 - a**0.5", "-a**3 + sin(3*b) - 1.0/c",
                                  "exp(a*b) / (1 + c**2)", "math.log(a) * np.tanh(b - c) + sqrt(a*c)",
                                  "tan(a) - 2**b + c**-2.5"])
def test_the_exact_derivatives_are_sympys(text):
    formula = parse_formula(text, ("a", "b", "c"))
    symbols = sympy.symbols("a b c")
    expression = sympy.sympify(text.replace("math.", "").replace("np.", ""),
                               locals=dict(zip("abc", symbols)))
    for point in [(0.7, 1.3, 2.1), (2.0, 3.0, 4.0), (1.5, 0.25, 0.9)]:
        at = dict(zip(symbols, point))
        want = [float(sympy.diff(expression, s).subs(at)) for s in symbols]
        got = formula.gradient(*point)
        assert all(math.isclose(x, y, rel_tol=1e-12, abs_tol=1e-12) for x, y in zip(got, want)), (point, got, want)
        assert all(math.isclose(x, y, rel_tol=1e-6, abs_tol=1e-6)
                   for x, y in zip(formula.central_difference(*point), want))
        assert math.isclose(formula(*point), float(expression.subs(at)), rel_tol=1e-12)


@pytest.mark.parametrize(("text", "says"), [
    ("__import__('os').system('true')", "only sin"), ("a.real", "not allowed"), ("d + a", "not one of its inputs"),
    ("sin(a, b)", "of one argument"), ("'a' * 2", "is not a number"), ("a +", "not a Python expression"),
    ("[a for a in b]", "not allowed"), ("lambda: a", "not allowed"), ("max(a, b)", "only sin"),
])
def test_a_formula_is_read_never_run(text, says):
    with pytest.raises(FormulaError, match=says):
        parse_formula(text, ("a", "b", "c"))


@pytest.mark.parametrize(("change", "says"), [
    ({"of": "a + os.system"}, "gradf] of: "),
    ({"function": "not a name"}, "gradf] function: expected a Python name"),
    ({"inputs": ["a", "a"]}, "inputs: expected a list of distinct Python names"),
    ({"at": [[1, 2]]}, "at: every point needs one number for each of inputs"),
    ({"at": [[1, 2, True]]}, "at: expected a list of points"),
    ({"kind": "gradients"}, "kind: 'gradients' is not a kind of target"),
    ({"colour": "red"}, "unknown key 'colour'"),
    ({"function": None}, "function: missing"),
])
def test_a_wrong_gradient_target_is_one_line_naming_its_key(change, says):
    table = {k: v for k, v in {**GRADIENT, **change}.items() if v is not None}
    with pytest.raises(ConfigError, match=says.replace("[", r"\[").replace("]", r"\]")):
        parse({"targets": {"gradf": table}}, "course.toml")


def test_a_kind_is_never_given_to_a_classic_target_or_taken_by_another_name():
    with pytest.raises(ConfigError, match="'add' is a target of the classic exercise"):
        parse({"targets": {"add": GRADIENT}}, "course.toml")
    with pytest.raises(ConfigError, match="is named by what it grades"):
        parse({"targets": {"plus": {"kind": "op", "points": 5}}}, "course.toml")
    assert parse({"targets": {"add": {"kind": "op", "points": 5}}}, "course.toml").targets[0].kind == "op"


KARPATHY_GRADF = sorted(name for name, entry in VERDICTS.items() if "gradf" in entry["parts"])


@pytest.mark.parametrize("name", KARPATHY_GRADF)
def test_the_karpathy_notebooks_gradf_gets_the_human_graders_verdict(name):
    entry = VERDICTS[name]
    verdict = entry["parts"]["gradf"]
    report = grade(KARPATHY / entry["path"], Options(config=load(COURSE))).to_json()
    score = report["targets"]["gradf"]
    found = [d for d in report["diagnoses"] if d["target"] == "gradf"]
    if verdict == "right":
        assert (score["score"], found) == (score["max_score"], []), found
        return
    assert score["score"] < score["max_score"]
    assert [d["code"] for d in found] == [verdict["code"]]
    assert (found[0]["cell"], found[0]["line"]) == (verdict["cell"], verdict["line"]), found[0]


LEARNER = '''import math

# my gradient of f, worked out on paper first


def gradf(a, b, c):
    grads = []
    grads.append(2 * a * c - 0.5 / math.sqrt(a))
    grads.append(2 * math.sin(2 * b) + 1.5 * b ** 0.5)
    grads.append({dfdc})
    return tuple(grads)


print("gradient at the course's point:", gradf(2, 3, 4))
'''


def test_a_gradient_written_otherwise_is_graded_as_written(tmp_path):
    """A tuple built by appends, a print at the top level: full marks; a dropped term of one partial
    derivative costs the points and is named, at its own line."""
    right = tmp_path / "right.py"
    right.write_text(LEARNER.format(dfdc="a ** 2 - 3 / c ** 2"))
    report = grade(right, Options(config=load(COURSE))).to_json()
    assert report["score"] == report["max_score"] == 16.0 and report["diagnoses"] == []
    wrong = tmp_path / "wrong.py"
    wrong.write_text(LEARNER.format(dfdc="- 3 / c ** 2"))
    report = grade(wrong, Options(config=load(COURSE))).to_json()
    [diagnosis] = report["diagnoses"]
    assert (diagnosis["code"], diagnosis["line"]) == ("wrong-derivative", 10)
    assert "Wrong: df/dc; right: df/da, df/db." in diagnosis["message"]


def test_a_callable_object_is_a_function(tmp_path):
    path = tmp_path / "work.py"
    path.write_text("import math\n\n\nclass Grad:\n    def __call__(self, a, b, c):\n"
                    "        return [2*a*c - 0.5/math.sqrt(a), 2*math.sin(2*b) + 1.5*b**0.5, a*a - 3/c**2]\n\n\n"
                    "gradf = Grad()\n")
    report = grade(path, Options(config=load(COURSE))).to_json()
    assert report["score"] == report["max_score"] and report["diagnoses"] == []


@pytest.mark.parametrize(("body", "code"), [
    ("return (x for x in iter(int, 1))", "wrong-derivative"),  # an endless generator: capped, and wrong
    ("return [a, b]", "wrong-derivative"),  # a number short
    ("return 'abc'", "wrong-derivative"),  # not numbers
    ("return None", "crash"),
    ("raise ValueError('no')", "crash"),
    ("while True: pass", "timeout"),
])
def test_what_a_gradient_function_returns_is_never_trusted(tmp_path, body, code):
    path = tmp_path / "work.py"
    path.write_text(f"def gradf(a, b, c):\n    {body}\n")
    result = micrograde("grade", str(path), "--config", str(COURSE), "--format", "json", "--timeout", "2")
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    assert [(d["target"], d["code"]) for d in report["diagnoses"]] == [("gradf", code)]


F = "from math import cos\n\n\ndef f(a, b, c):\n    return a**2 * c - cos(2*b) + 3.0/c + b**1.5 - a**0.5\n\n\n"
DERIVED = ("def gradf(a, b, c):\n    from math import sin\n    return [2*a*c - 0.5*a**-0.5, 2*sin(2*b) + 1.5*b**0.5, "
           "a**2 - 3.0/c**2]\n")
ESTIMATES = {  # the gradient by a finite difference of the course's own f, as learners write one
    "forward 1e-6": "h = 1e-6\n    return [(f(a+h, b, c) - f(a, b, c))/h, (f(a, b+h, c) - f(a, b, c))/h, "
                    "(f(a, b, c+h) - f(a, b, c))/h]",
    "central 1e-5": "h = 1e-5\n    return [(f(a+h, b, c) - f(a-h, b, c))/(2*h), (f(a, b+h, c) - f(a, b-h, c))/(2*h), "
                    "(f(a, b, c+h) - f(a, b, c-h))/(2*h)]",
    "central scaled": "hs = [1e-5 * max(1, abs(x)) for x in (a, b, c)]\n    return [(f(a+hs[0], b, c) - "
                      "f(a-hs[0], b, c))/(2*hs[0]), (f(a, b+hs[1], c) - f(a, b-hs[1], c))/(2*hs[1]), "
                      "(f(a, b, c+hs[2]) - f(a, b, c-hs[2]))/(2*hs[2])]",
}


@pytest.mark.parametrize("estimate", sorted(ESTIMATES))
def test_a_finite_difference_is_no_derivation(tmp_path, estimate):
    """A gradient function that differences the course's own ``f`` comes near the derivatives everywhere: it loses
    the points of the other points, where every usual difference misses a derivation's exactness, and is named
    ``finite-difference`` at the function's return; the derivation itself keeps every point."""
    path = tmp_path / "work.py"
    path.write_text(F + DERIVED)
    derived = grade(path, Options(config=load(COURSE))).to_json()
    assert derived["score"] == 16.0 and derived["diagnoses"] == [], derived["diagnoses"]
    path.write_text(F + "def gradf(a, b, c):\n    " + ESTIMATES[estimate] + "\n")
    report = grade(path, Options(config=load(COURSE))).to_json()
    assert [(d["code"], d["target"], d["line"]) for d in report["diagnoses"]] == [("finite-difference", "gradf", 10)]
    assert report["targets"]["gradf"]["score"] <= 8.0
    assert "other-points" in {c["id"].split(".")[-1] for c in report["checks"] if c["status"] == "failed"}
