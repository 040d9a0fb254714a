"""Attacks on what the course-configured kinds add to the child, in both sandbox modes.

A numerical gradient's cells are run again in the child with the grader's function, which records
where it is evaluated; a whole expression's graph is read back from the learner's nodes. A hostile
submission gets what its own code deserves: code run again is as confined as at load, a forged
record earns nothing, a graph of any size is read within its caps, and a computation that hangs
costs only its own target.
"""

from __future__ import annotations

import json
from pathlib import Path

from grader.exercise.config import parse
from grader.grade import Options, grade

F = "a**2 * c - cos(2*b) + 3.0/c + b**1.5 - a**0.5"
VALUE = {"kind": "numerical-gradient", "value": "numerical_grad", "calls": "f", "inputs": ["a", "b", "c"],
         "of": F, "at": [2, 3, 4], "method": "symmetric", "points": 10}
PREAMBLE = f"from math import sin, cos\n\n\ndef f(a, b, c):\n    return {F}\n\n\nh = 1e-5\n"
HONEST = ("numerical_grad = [(f(2 + h, 3, 4) - f(2 - h, 3, 4)) / (2 * h), (f(2, 3 + h, 4) - f(2, 3 - h, 4)) / (2 * h),"
          "\n                  (f(2, 3, 4 + h) - f(2, 3, 4 - h)) / (2 * h)]\n")
PASTED = ("for i in range(3):\n    for s in (h, -h):\n"
          "        f(*[2 + s * (i == 0), 3 + s * (i == 1), 4 + s * (i == 2)])\n"
          "numerical_grad = [15.646446609406727, 2.0392452149554643, 3.8125]\n")


def graded(tmp_path: Path, source: str, **targets: dict) -> dict:
    path = tmp_path / "work.py"
    path.write_text(source)
    report = grade(path, Options(config=parse({"targets": targets}, "course.toml"), timeout=5.0)).to_json()
    json.dumps(report, allow_nan=False)
    return report


def outcome(report: dict, target: str) -> tuple:
    return (report["targets"][target]["score"],
            sorted(d["code"] for d in report["diagnoses"] if d["target"] in (target, "submission")))


def test_code_run_again_is_as_confined_as_its_first_run(tmp_path, mode):
    """Every run of the cells (at load, then with each function in turn) tries to write beside the submission's
    folder and to start a process: refused every time, and the estimate still earns its points."""
    outside = tmp_path / "outside"
    outside.mkdir()
    attack = (f"import os\nfor attempt in (lambda: open({str(outside / 'written')!r}, 'w').write('x'),\n"
              "                lambda: os.system('true')):\n    try:\n        attempt()\n"
              "    except Exception:\n        pass\n")
    folder = tmp_path / "submission"
    folder.mkdir()
    report = graded(folder, PREAMBLE + attack + HONEST, numerical_grad=VALUE)
    assert outcome(report, "numerical_grad") == (10.0, [])
    assert list(outside.iterdir()) == []


def test_a_forged_record_of_where_f_was_evaluated_earns_nothing(tmp_path, mode):
    """Pasted numbers beside points appended to the record through the function's closure (and junk that no
    reply can carry) earn what pasted numbers beside real calls of f earn: the course's function's half."""
    forged = ("record = next(c.cell_contents for c in f.__closure__ if type(c.cell_contents) is list)\n"
              "junk = []\njunk.append(junk)\n"
              "record += [[2 + h, 3.0, 4.0], [2 - h, 3.0, 4.0], [2.0, 3 + h, 4.0], [2.0, 3 - h, 4.0],\n"
              "           [2.0, 3.0, 4 + h], [2.0, 3.0, 4 - h], junk, 'x', [1e308] * 3] * 200\n"
              "record[0] = 'many'\n"
              "numerical_grad = [15.646446609406727, 2.0392452149554643, 3.8125]\n")
    honest = tmp_path / "honest"
    honest.mkdir()
    deserved = outcome(graded(honest, PREAMBLE + PASTED, numerical_grad=VALUE), "numerical_grad")
    assert deserved == (5.0, ["pasted-constants"])
    # At load f is the learner's own, with no record to forge: the attack is guarded as a learner would.
    source = PREAMBLE + "try:\n" + "".join(f"    {line}\n" for line in forged.splitlines()) + \
        "except (StopIteration, TypeError):\n    numerical_grad = None\n"
    assert outcome(graded(tmp_path, source, numerical_grad=VALUE), "numerical_grad") == deserved


EXPRESSION = {"kind": "expression", "function": "softmax", "inputs": ["z0", "z1", "z2"], "points": 12,
              "code": "def softmax(zs):\n    es = [z.exp() for z in zs]\n    s = sum(es)\n"
                      "    return [e / s for e in es]\n\nloss = -softmax([z0, z1, z2])[1].log()\n"}
ENGINE = '''import math


class Value:
    def __init__(self, data, _children=(), _op=""):
        self.data, self.grad, self._backward, self._prev, self._op = data, 0.0, lambda: None, list(_children), _op

    def _wrap(self, other):
        return other if isinstance(other, Value) else Value(other)

    def __add__(self, other):
        other = self._wrap(other)
        out = Value(self.data + other.data, (self, other), "+")
        def _backward():
            self.grad += out.grad
            other.grad += out.grad
        out._backward = _backward
        return out

    __radd__ = __add__

    def __mul__(self, other):
        other = self._wrap(other)
        out = Value(self.data * other.data, (self, other), "*")
        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out._backward = _backward
        return out

    def __neg__(self):
        return self * -1

    def __truediv__(self, other):
        return self * self._wrap(other) ** -1

    def __pow__(self, k):
        out = Value(self.data ** k, (self,), f"**{k}")
        def _backward():
            self.grad += k * self.data ** (k - 1) * out.grad
        out._backward = _backward
        return out

    def exp(self):
        out = Value(math.exp(self.data), (self,), "exp")
        def _backward():
            self.grad += out.grad  # forgets the local derivative
        out._backward = _backward
        return out

    def log(self):
        out = Value(math.log(self.data), (self,), "log")
        def _backward():
            self.grad += out.grad / self.data
        out._backward = _backward
        return out

    def backward(self):
        order, seen = [], set()
        def visit(v):
            if id(v) not in seen:
                seen.add(id(v))
                for child in v._prev:
                    visit(child)
                order.append(v)
        visit(self)
        self.grad = 1.0
        for v in reversed(order):
            v._backward()
'''


def test_a_graph_of_any_size_is_read_within_its_caps(tmp_path, mode):
    """A normaliser holding twenty thousand extra operands (ten times the nodes the child sends), every exp's
    label nearly a megabyte: the graph is read within its caps, and exp's fault is still found where it is."""
    softmax = ("def softmax(zs):\n    es = [z.exp() for z in zs]\n    s = sum(es)\n"
               "    s._prev.extend(Value(0.0) for _ in range(20_000))\n"
               "    for e in es:\n        e._op = 'exp' * 300_000\n"
               "    return [e / s for e in es]\n")
    report = graded(tmp_path, ENGINE + softmax, softmax_nll=EXPRESSION)
    assert outcome(report, "softmax_nll") == (0.0, ["wrong-local-grad"])
    [diagnosis] = [d for d in report["diagnoses"] if d["target"] == "softmax_nll"]
    assert diagnosis["line"] == ENGINE.splitlines().index("            self.grad += out.grad  # forgets the local "
                                                          "derivative") + 1


def test_a_computation_that_hangs_costs_only_its_own_target(tmp_path, mode):
    source = (ENGINE.replace("self.grad += out.grad  # forgets", "self.grad += out.data * out.grad  #")
              + "\n\ndef softmax(zs):\n    while True:\n        pass\n\n\n" + PREAMBLE + HONEST)
    report = graded(tmp_path, source, softmax_nll=EXPRESSION, numerical_grad=VALUE)
    assert outcome(report, "softmax_nll") == (0.0, ["timeout"])
    assert outcome(report, "numerical_grad") == (10.0, [])
