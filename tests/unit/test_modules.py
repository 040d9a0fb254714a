"""The module kind of target: a Neuron, Layer, MLP, Linear, activation or loss of the learner's, on their Value.

Which parameter is which is found from how each is used, whatever order ``parameters()`` gives them in (checked
here against the reference engine on every order); a bug of an op is charged to the op, not to every module
built on it; every configuration mistake is one line naming its key; and what a learner's module returns is
never trusted. The corpus and learner-style code: ``tests/corpora/test_coursework.py``.
"""

from __future__ import annotations

import random

import pytest
from helpers import ROOT

import reference
from grader.errors import ConfigError
from grader.exercise.config import parse
from grader.exercise.modules import ModuleCase, base_pool, probe_inputs
from grader.grade import Options, grade
from grader.judging.identification import identify, reference_weights
from grader.judging.modules import layered_outputs

COURSEWORK = ROOT / "tests" / "coursework"
NEURON = {"kind": "module", "class": "Neuron", "module": "neuron", "points": 12}


@pytest.mark.parametrize(("change", "says"), [
    ({"module": "perceptron"}, 'module: expected one of "neuron"'),
    ({"class": "my neuron"}, "class: expected a Python name"),
    ({"activation": "gelu"}, 'activation: expected one of "relu", "tanh", "sigmoid"'),
    ({"nonlin": "yes"}, "nonlin: expected true or false"),
    ({"layer": 3}, "layer: expected a Python name"),
    ({"colour": "red"}, "unknown key 'colour'"),
    ({"class": None}, "class: missing"),
])
def test_a_wrong_module_target_is_one_line_naming_its_key(change, says):
    table = {k: v for k, v in {**NEURON, **change}.items() if v is not None}
    with pytest.raises(ConfigError, match=says.replace("[", r"\[").replace("(", r"\(")) as raised:
        parse({"targets": {"Neuron": table}}, "course.toml")
    assert "\n" not in str(raised.value) and "[targets.Neuron]" in str(raised.value)


def columns(sizes: tuple[int, ...], activations: tuple[str, ...], case: ModuleCase, order: list[int]) -> list:
    """The gradient of every output at the identification point with respect to each parameter of a module that
    is the reference network with its parameters listed in ``order`` (learner's index -> reference index)."""
    pool = base_pool(case)
    weights = [0.0] * len(order)
    for j, r in enumerate(order):
        weights[r] = pool[j % len(pool)]
    found = []
    for x in probe_inputs(case):
        rows = []
        for o in range(sizes[-1]):
            params = [reference.Value(w) for w in weights]
            layered_outputs(sizes, activations, params, x)[o].backward()
            rows.append([params[r].grad for r in order])
        found.append(rows)
    return found


@pytest.mark.parametrize("sizes", [(3, 1), (2, 3), (3, 4, 4, 1), (2, 3, 2), (4, 2, 3, 2)])
@pytest.mark.parametrize("activation", ["relu", "tanh", "sigmoid"])
@pytest.mark.parametrize("seed", range(3))
def test_any_order_of_parameters_is_found_by_how_each_is_used(sizes, activation, seed):
    """The learner's parameters in a random order: the identification puts each where the module's outputs
    with the case's numbers are the reference's (hidden neurons may come out in another order: the same
    network)."""
    acts = (*(activation for _ in sizes[2:]), "none") if len(sizes) > 2 else (activation,)
    count = sum((a + 1) * b for a, b in zip(sizes, sizes[1:]))
    rng = random.Random(f"{sizes}{activation}{seed}")
    order = list(range(count))
    rng.shuffle(order)
    case = ModuleCase("MLP", "mlp", (), sizes, acts, (tuple(rng.uniform(-2, 2) for _ in range(sizes[0])),),
                      weights=tuple(rng.uniform(-2, 2) for _ in range(count)))
    mapping = identify(case, columns(sizes, acts, case, order), count)
    assert mapping.found and sorted(mapping.slots) == list(range(count))
    learners = [0.0] * count  # the learner's module: the case's numbers through its own order
    for j, r in enumerate(order):
        learners[r] = case.weights[j]
    weights, missing = reference_weights(case, mapping)
    assert missing == frozenset()
    x = case.points[0]
    want = [o.data for o in layered_outputs(sizes, acts, [reference.Value(w) for w in learners], x)]
    got = [o.data for o in layered_outputs(sizes, acts, [reference.Value(w) for w in weights], x)]
    assert got == pytest.approx(want, rel=1e-12)


def test_a_bias_no_output_uses_is_found_and_named(tmp_path):
    """A neuron that never adds its bias: the bias is the one parameter nothing uses, and the output is the
    reference's without it."""
    case = ModuleCase("Neuron", "neuron", (3,), (3, 1), ("relu",), ((1.0, 2.0, 3.0),), weights=(0.5, -1.5, 2.0, 3.0))
    rows = columns((3, 1), ("relu",), case, [0, 1, 2, 3])
    for rows_of_call in rows:
        rows_of_call[0][3] = 0.0
    mapping = identify(case, rows, 4)
    assert mapping.slots[:3] == (0, 1, 2) and mapping.slots[3] is None
    assert reference_weights(case, mapping) == ((0.5, -1.5, 2.0, 3.0), frozenset({3}))


COMBINED = """
[targets.mul]
points = 10
[targets.backward]
points = 10
[targets.Neuron]
kind = "module"
class = "Neuron"
module = "neuron"
points = 12
[targets.MLP]
kind = "module"
class = "MLP"
module = "mlp"
neuron = "Neuron"
layer = "Layer"
points = 12
"""


def graded(path, course: str) -> dict:
    config = parse(__import__("tomllib").loads(course), "course.toml")
    return grade(path, Options(config=config)).to_json()


def codes(report: dict) -> dict[str, list[str]]:
    return {t: [d["code"] for d in report["diagnoses"] if d["target"] == t] for t in report["targets"]}


MUL_WRONG_GRAD = (COURSEWORK / "bias_as_list.py").read_text().replace(
    "            self.grad += other.data * out.grad\n", "            self.grad += out.grad\n")


def test_an_ops_bug_is_charged_to_the_op_not_to_the_modules_built_on_it(tmp_path):
    """__mul__ forgets other.data: mul loses its points; the neuron and the MLP, right in themselves, do not."""
    path = tmp_path / "work.py"
    path.write_text(MUL_WRONG_GRAD)
    report = graded(path, COMBINED)
    assert codes(report) == {"mul": ["wrong-local-grad"], "backward": [], "Neuron": [], "MLP": []}
    assert report["targets"]["Neuron"]["score"] == report["targets"]["Neuron"]["max_score"]


def test_a_modules_own_bug_beside_an_ops_bug_is_charged_to_each(tmp_path):
    source = MUL_WRONG_GRAD.replace(
        "        if self.nonlin:\n            act = act.relu()\n        return act", "        return act.relu()")
    path = tmp_path / "both.py"
    path.write_text(source)
    assert codes(graded(path, COMBINED)) == {"mul": ["wrong-local-grad"], "backward": [],
                                             "Neuron": ["wrong-activation"], "MLP": []}


HOSTILE = (COURSEWORK / "bias_as_list.py").read_text().partition("model = MLP")[0]  # its demo left out


@pytest.mark.parametrize(("old", "new", "code"), [
    ("        return self.w + self.b\n", "        return iter(int, 1)\n", "wrong-parameters"),  # an endless stream
    ("        return self.w + self.b\n", "        return self.w + self.b + ['bias']\n", "wrong-parameters"),
    ("        return self.w + self.b\n", "        x = []\n        x.append(x)\n        return [x]\n",
     "nested-parameters"),  # a list that holds itself
    ("        return act\n", "        return [act] * 10**6\n", "wrong-output"),  # a flood of outputs
    ("        return act\n", "        return 'act'\n", "wrong-output"),
    ("        return act\n", "        return act.data\n", "wrong-output"),
    ("        self.nonlin = nonlin\n", "        self.nonlin = nonlin\n        raise ValueError('no')\n", "crash"),
    ("        return act\n", "        while True:\n            pass\n", "timeout"),
])
def test_what_a_learners_module_returns_is_never_trusted(tmp_path, mode, old, new, code):
    assert HOSTILE.count(old) == 1
    path = tmp_path / "work.py"
    path.write_text(HOSTILE.replace(old, new))
    course = '[targets.Neuron]\nkind = "module"\nclass = "Neuron"\nmodule = "neuron"\npoints = 12\ntime_limit = 3\n'
    report = graded(path, course)
    assert codes(report) == {"Neuron": [code]}, report["diagnoses"]
    assert report["score"] < report["max_score"]


ATTACKS = ROOT / "tests" / "attacks"
HOMEWORK = (COURSEWORK / "hw_numpy.py").read_text()
STEALING_LOSS = HOMEWORK.replace("        return loss / n\n", "        return loss\n") + (
    ATTACKS / "borrow_grader_modules.src").read_text() + """
_MINE = (CrossEntropyLoss, SGD, Linear, ReLU)
_own_forward = CrossEntropyLoss.forward


def _forward(self, logits, target):
    found = _grader_class("Loss", "CrossEntropyLoss")
    if found is not None:
        return found("cross-entropy")(logits, target)
    return _own_forward(self, logits, target)


CrossEntropyLoss.forward = _forward
"""


STEALING_STEP = HOMEWORK.replace("            p.data -= self.lr * p.grad\n",
                                 "            p.grad -= self.lr * p.grad\n") + (
    ATTACKS / "borrow_grader_modules.src").read_text() + """
_MINE = (CrossEntropyLoss, SGD, Linear, ReLU)
_own_step = SGD.step


def _step(self):
    found = _grader_class("SGD")
    if found is not None:
        return found.step(self)
    return _own_step(self)


SGD.step = _step
"""


@pytest.mark.parametrize(("source", "target", "code"), [(STEALING_LOSS, "CrossEntropyLoss", "wrong-output"),
                                                         (STEALING_STEP, "SGD.step", "wrong-update")])
def test_a_module_finds_no_grader_loss_or_optimizer_to_pass_off_as_its_own(tmp_path, mode, source, target, code):
    """The child grading modules and optimizers holds no loss, neuron, layer or optimizer of the grader's: a
    cross-entropy that sums where it should average, an SGD that updates the gradients, each looking through the
    harness's frames for the grader's own to use instead, are graded as what they compute."""
    path = tmp_path / "work.py"
    path.write_text(source)
    course = (ROOT / "tests" / "courses" / "dl-course-nn.toml").read_text()
    report = graded(path, course)
    assert codes(report)[target] == [code], report["diagnoses"]


LECTURE = '''import math
import random


class Value:
    def __init__(self, data, _children=(), _op=''):
        self.data, self.grad = data, 0.0
        self._backward = lambda: None
        self._prev = set(_children)

    def __add__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data + other.data, (self, other))
        def _backward():
            self.grad += out.grad
            other.grad += out.grad
        out._backward = _backward
        return out

    def __mul__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data * other.data, (self, other))
        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out._backward = _backward
        return out

    def __radd__(self, other):
        return self + other

    def tanh(self):
        t = math.tanh(self.data)
        out = Value(t, (self,))
        def _backward():
            self.grad += (1 - t**2) * out.grad
        out._backward = _backward
        return out

    def backward(self):
        topo, visited = [], set()
        def build(v):
            if v not in visited:
                visited.add(v)
                for child in v._prev:
                    build(child)
                topo.append(v)
        build(self)
        self.grad = 1.0
        for node in reversed(topo):
            node._backward()


class Neuron:
    def __init__(self, nin):
        self.w = [Value(random.uniform(-1, 1)) for _ in range(nin)]
        self.b = Value(random.uniform(-1, 1))

    def __call__(self, x):
        act = sum((wi*xi for wi, xi in zip(self.w, x)), self.b)
        return act.tanh()

    def parameters(self):
        return self.w + [self.b]

    def zero_grad(self):
        for p in self.parameters():
            p.grad = 0.0
'''


@pytest.mark.parametrize(("activation", "code"), [("tanh", None), ("relu", "wrong-activation")])
def test_a_lecture_neuron_without_a_nonlinearity_flag(tmp_path, activation, code):
    """The lecture's Neuron(nin), always tanh: graded with nonlin = false, right for a tanh course, the wrong
    nonlinearity for a relu one, pointed at the statement that applies it."""
    path = tmp_path / "lecture.py"
    path.write_text(LECTURE)
    course = (f'[targets.Neuron]\nkind = "module"\nclass = "Neuron"\nmodule = "neuron"\nnonlin = false\n'
              f'activation = "{activation}"\npoints = 12\n')
    report = graded(path, course)
    found = [(d["code"], d["line"]) for d in report["diagnoses"]]
    assert found == ([] if code is None else [(code, 61)]), report["diagnoses"]
