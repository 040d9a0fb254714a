"""Whole expressions: a computation the course names (softmax + negative log likelihood), end to end.

Graded on the Karpathy-style notebooks' section 2 as the human grader grades it (under
``tests/courses/karpathy-exercises.toml``, where the ops it needs are targets of their own, and under a course
that grades only the computation), and on a learner's own class and softmax written otherwise: children in a
list, labels of its own, a running total, a dict of exponentials.
"""

from __future__ import annotations

import json
import math
import tomllib

import pytest
from helpers import ROOT

from grader.errors import ConfigError
from grader.exercise.config import load, parse
from grader.exercise.expression import learner_code, reference_run
from grader.exercise.targets import Exercise
from grader.grade import Options, grade
from grader.judging.composition import fault
from grader.judging.judge import Tolerance
from grader.judging.kinds import UNREADABLE, prepare_expression

KARPATHY = ROOT / "tests" / "assignments" / "karpathy_exercises"
COURSE = ROOT / "tests" / "courses" / "karpathy-exercises.toml"
VERDICTS = tomllib.loads((KARPATHY / "verdicts.toml").read_text())["submissions"]
CODE = '''
def softmax(logits):
    counts = [z.exp() for z in logits]
    total = sum(counts)
    return [c / total for c in counts]

loss = -softmax([z0, z1, z2, z3])[2].log()
'''
SOFTMAX = {"kind": "expression", "function": "softmax", "inputs": ["z0", "z1", "z2", "z3"], "code": CODE,
           "at": [[1.0, -2.0, 0.5, 2.0]], "points": 16}
ALONE = parse({"targets": {"softmax_nll": SOFTMAX}}, "alone.toml")  # the computation is all the course grades


def graded(path, config) -> dict:
    report = grade(path, Options(config=config)).to_json()
    json.dumps(report, allow_nan=False)
    return report


def verdict_of(report: dict, target: str) -> tuple:
    score = report["targets"][target]
    found = [(d["code"], d.get("cell"), d["line"]) for d in report["diagnoses"] if d["target"] == target]
    if not found and score["score"] == score["max_score"]:
        return ("right",)
    assert score["score"] < score["max_score"] and len(found) == 1, (score, found)
    return found[0]


# ---------------------------------------------------------------- the course's code

@pytest.mark.parametrize("point", [(1.0, -2.0, 0.5, 2.0), (0.0, 0.0, 0.0, 0.0), (3.0, 1.0, -1.0, 0.25)])
def test_the_reference_side_is_the_courses_computation_on_the_reference_engine(point):
    """Softmax + NLL of class 2: the loss is log(sum e**z) - z2 and its gradient is softmax(z) - onehot(2)."""
    value, grads = reference_run(CODE, ("z0", "z1", "z2", "z3"), point, "loss")
    total = sum(math.exp(z) for z in point)
    assert math.isclose(value, math.log(total) - point[2], rel_tol=1e-12)
    want = [math.exp(z) / total - (i == 2) for i, z in enumerate(point)]
    assert all(math.isclose(g, w, rel_tol=1e-12, abs_tol=1e-15) for g, w in zip(grads, want))


def test_the_child_runs_the_courses_code_without_its_own_softmax():
    code = learner_code(SOFTMAX)
    assert "def softmax" not in code and "loss = -softmax([z0, z1, z2, z3])[2].log()" in code
    assert code.count("\n") == CODE.count("\n")  # the lines keep their numbers


@pytest.mark.parametrize(("change", "says"), [
    ({"code": "import os\nloss = z0"}, "code: line 1: import is not allowed"),
    ({"code": "loss = z0.__class__"}, "code: line 1: __class__ is not allowed"),
    ({"code": "loss = (z0"}, "code: not valid Python (line 1)"),
    ({"code": "total = z0 + z1"}, "code: it never assigns 'loss'"),
    ({"code": "loss = z0 + z1", "result": "nll"}, "code: it never assigns 'nll'"),
    ({"code": "loss = softmax([z0, z1, z2, z3])[2]"}, "code: it does not define softmax()"),
    ({"code": CODE.replace("total = sum(counts)", "total = sum(cnts)")},
     "code: on the reference engine at (1, -2, 0.5, 2) it raises NameError"),
    ({"at": [[1.0, 2.0]]}, "at: every point needs one number for each of inputs"),
    ({"code": 3}, "code: expected Python code"),
])
def test_a_wrong_expression_target_is_one_line_naming_its_key(change, says):
    with pytest.raises(ConfigError, match=says.replace("(", r"\(").replace(")", r"\)")):
        parse({"targets": {"softmax_nll": {**SOFTMAX, **change}}}, "course.toml")


# ---------------------------------------------------------------- the corpus, as the human grader grades it

@pytest.mark.parametrize("name", sorted(VERDICTS))
def test_the_karpathy_notebooks_softmax_gets_the_human_graders_verdict(name):
    """Where the human grader says the computation inherits an op's bug (charged to that op), it keeps its
    points and a warning says why its gradients are wrong."""
    entry = VERDICTS[name]
    part = entry["parts"]["softmax_nll"]
    report = graded(KARPATHY / entry["path"], load(COURSE))
    if part == "right" or "inherits" in part:
        assert verdict_of(report, "softmax_nll") == ("right",)
        inherited = [w for w in report["warnings"] if w.startswith("softmax_nll is right in itself")]
        assert len(inherited) == ("inherits" in part)
        if "inherits" in part:
            assert all(f"only through {op}" in inherited[0] for op in part["inherits"])
            assert [d["code"] for d in report["diagnoses"] if d["target"] in part["inherits"]]  # charged there
        return
    assert verdict_of(report, "softmax_nll") == (part["code"], part["cell"], part["line"])


def test_without_its_ops_graded_the_computation_is_charged_for_the_op_at_fault():
    """log forgets out.grad: where log is no target of its own, the computation loses its points, pointed at
    the statement of log at fault (where the human grader points log's own verdict)."""
    entry = VERDICTS["log_no_outgrad"]
    report = graded(KARPATHY / entry["path"], ALONE)
    log = entry["parts"]["log"]
    assert verdict_of(report, "softmax_nll") == ("wrong-local-grad", log["cell"], log["line"])
    [diagnosis] = report["diagnoses"]
    assert "log is not graded on its own" in diagnosis["message"]


# ---------------------------------------------------------------- learner-style code of other shapes

ENGINE = '''"""Softmax and cross-entropy on my own little autograd class."""
import math


class Value:
    def __init__(self, data, children=(), op=""):
        self.data = float(data)
        self.grad = 0.0
        self._backward = lambda: None
        self._children = list(children)
        self._op = op

    @staticmethod
    def lift(x):
        return x if isinstance(x, Value) else Value(x)

    def __add__(self, other):
        other = Value.lift(other)
        out = Value(self.data + other.data, [self, other], "add")

        def _backward():
            self.grad += out.grad
            other.grad += out.grad
        out._backward = _backward
        return out

    __radd__ = __add__

    def __mul__(self, other):
        other = Value.lift(other)
        out = Value(self.data * other.data, [self, other], "mul")

        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out._backward = _backward
        return out

    __rmul__ = __mul__

    def __neg__(self):
        return self * -1.0

    def __truediv__(self, other):
        other = Value.lift(other)
        out = Value(self.data / other.data, [self, other], "div")

        def _backward():
            self.grad += out.grad / other.data
            other.grad -= out.grad * self.data / other.data ** 2
        out._backward = _backward
        return out

    def exp(self):
        out = Value(math.exp(self.data), [self], "exp")

        def _backward():
            self.grad += out.data * out.grad
        out._backward = _backward
        return out

    def log(self):
        out = Value(math.log(self.data), [self], "log")

        def _backward():
            self.grad += out.grad / self.data
        out._backward = _backward
        return out

    def backward(self):
        order, seen, stack = [], set(), [(self, False)]
        while stack:
            node, done = stack.pop()
            if done:
                order.append(node)
            elif id(node) not in seen:
                seen.add(id(node))
                stack.append((node, True))
                stack.extend((child, False) for child in node._children)
        self.grad = 1.0
        for node in reversed(order):
            node._backward()


def softmax(scores):
    exps = {}
    for i, s in enumerate(scores):
        exps[i] = s.exp()
    total = Value(0.0)
    for e in exps.values():
        total = total + e
    return [exps[i] / total for i in range(len(scores))]


if __name__ == "__main__":
    probs = softmax([Value(1.0), Value(-2.0), Value(0.5), Value(2.0)])
    print([p.data for p in probs])
'''
COMPOSED = parse({"targets": {"composed": {
    "kind": "expression", "inputs": ["a", "b", "c"], "code": "loss = (a * b + c.exp()).log() + a / c",
    "points": 10}}}, "composed.toml")
WITH_EXP = parse({"targets": {"exp": {"points": 8}, "softmax_nll": SOFTMAX}}, "with-exp.toml")


@pytest.mark.parametrize(("change", "config", "expected"), [
    (None, ALONE, ("right",)),
    (("exps[i] = s.exp()", "exps[i] = Value(math.exp(s.data))"), ALONE, ("detached-data", None, 88)),
    (("exps[i] = s.exp()", "exps[i] = s * s + 1"), ALONE, ("wrong-expression", None, 92)),
    (("self.grad += out.data * out.grad", "self.grad += out.grad"), ALONE, ("wrong-local-grad", None, 58)),
    (("self.grad += out.data * out.grad", "self.grad += out.grad"), WITH_EXP, ("right",)),
    (None, COMPOSED, ("right",)),
    (("other.grad += self.data * out.grad", "other.grad += other.data * out.grad"), COMPOSED,
     ("wrong-local-grad", None, 35)),
    (("other.grad -= out.grad * self.data", "other.grad += out.grad * self.data"), COMPOSED,
     ("wrong-local-grad", None, 50)),
    (("out = Value(math.exp(self.data), [self], \"exp\")", "out = Value(math.exp(self.data) + 1, [self], \"exp\")"),
     COMPOSED, ("wrong-forward", None, 55)),
], ids=["right", "detached", "no-exp", "exp-bug-charged", "exp-bug-inherited", "ops-only", "mul-other",
        "div-sign", "exp-forward"])
def test_a_class_and_softmax_written_otherwise(tmp_path, change, config, expected):
    """Operands in a list, labels of its own (``mul``, ``div``), a dict of exponentials and a running total: each
    fault pointed at its statement, an op's at the operand's update the graph shows is wrong."""
    path = tmp_path / "nll.py"
    path.write_text(ENGINE.replace(*change) if change else ENGINE)
    target = next(iter(t.name for t in config.targets if t.kind != "op"))
    report = graded(path, config)
    assert verdict_of(report, target) == expected
    if config is WITH_EXP and change:
        assert report["targets"]["exp"]["score"] < report["targets"]["exp"]["max_score"]
        assert any(w.startswith("softmax_nll is right in itself") and "only through exp" in w
                   for w in report["warnings"])


# ---------------------------------------------------------------- what the child sends is never trusted

def test_a_hostile_graph_fails_its_case_without_an_exception():
    target = next(t for t in Exercise(ALONE).targets if t.name == "softmax_nll")
    case = target.checks[0].cases[0]
    prepared = prepare_expression(case, target, target.checks[0], Tolerance())
    for reply in ({"data": 1.0, "grads": [1.0], "nodes": [[1.0, 1.0, None, [], False]]}, {"grads": []},
                  {"data": 1.0, "grads": [0.0] * 4, "nodes": []}):
        with pytest.raises(UNREADABLE):
            prepared.judge(reply)
    hostile = [
        [[1.0, 1.0, "*" * 10_000, [0, 0, 7, -1, True], False]],  # itself among its operands, out of range
        [[1.0, 1.0, "+", [1], True], [2.0, {"invalid": "x"}, "exp", [0], "yes"]],  # a cycle, a bad flag
        [[float(i), 1e308, "mul", [i + 1, i + 1], True] for i in range(3000)] + [[0.5, 0.0, None, [], False]],
    ]
    for nodes in hostile:
        verdict = prepared.judge({"data": 1e308, "grads": [1e308, -1e308, 0.0, {"invalid": "NaN"}],
                                  "nodes": nodes})
        assert not verdict.passed("both")


def test_one_ops_fault_is_found_where_it_is_in_a_graph_of_its_own():
    """(a * b).log() with a = 2, b = 3, whose log forgets out.grad under a negation: log is at fault, not mul."""
    # root: -(log(a * b)) as neg(log(mul(a, b))); log passes 1/x without out.grad (-1).
    a, b = 2.0, 3.0
    product = a * b
    nodes = [[-math.log(product), 1.0, "neg", [1], False],
             [math.log(product), -1.0, "log", [2], False],
             [product, 1 / product, "*", [3, 4], False],  # log's share: 1/x, not -1/x
             [a, b / product, None, [], False], [b, a / product, None, [], False]]
    found = fault(nodes)
    assert (found.op, found.code) == ("log", "wrong-local-grad")


def test_the_worked_configuration_gives_the_instructors_solution_every_point():
    """Every target of the staff docs' worked configuration (the numerical gradients, the ops the softmax needs,
    the computation) keeps its points on the course's own solution: a hand-picked case written with the ops the
    course grades (``log`` of a product where the class has no ``+``) stays where the op is defined."""
    report = graded(KARPATHY / "solution.ipynb", load(COURSE))
    assert (report["score"], report["diagnoses"]) == (report["max_score"], [])
