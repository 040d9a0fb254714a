"""The optimizer and training kinds of target: an optimizer's ``step`` and ``zero_grad``, a training function of the
course's own signature, on the grader's model.

The classic exercise's ``train_step``, written as a training target (``train_step(model, xs, ys, lr)``, the sum of
squares), gets every diagnosis the classic target gets on the mutation corpus, at the same line; other losses and
returns are configured, not hard-wired; every configuration mistake is one line naming its key; and what the
learner's training code returns or does is never trusted. The corpus and learner-style code:
``tests/corpora/test_coursework.py``.
"""

from __future__ import annotations

import tomllib

import pytest
from golden import SOLUTION, mutate
from helpers import CORPUS

from grader.errors import ConfigError
from grader.exercise.config import parse
from grader.grade import Options, grade

TRAINING = {"kind": "training", "call": "train(model, xs, ys, epochs, lr)", "loss": "mse", "points": 10}
OPTIMIZER = {"kind": "optimizer", "init": "SGD(params, lr=lr)", "method": "step", "points": 5}


@pytest.mark.parametrize(("table", "change", "says"), [
    (TRAINING, {"call": "train(model, xs, ys, epochs, learning_rate)"}, "call: learning_rate: each argument is a "
                                                                          "number or one of model"),
    (TRAINING, {"call": "train(model, **options)"}, "call: ** is not allowed"),
    (TRAINING, {"call": "model.fit(xs, ys)"}, "call: write one call of a function or class by its name"),
    (TRAINING, {"call": "train(model, xs, xs, lr)"}, "call: each name is passed once"),
    (TRAINING, {"call": "train(model, xs, ys"}, "call: not a Python call"),
    (TRAINING, {"loss": "l1"}, 'loss: expected one of "sum-of-squares", "mse", "hinge", "cross-entropy"'),
    (TRAINING, {"returns": "everything"}, 'returns: expected one of "loss", "mean"'),
    (TRAINING, {"sizes": [3]}, "sizes: expected a list of at least two whole numbers from 1 to 64"),
    (TRAINING, {"sizes": [3, 0, 1]}, "sizes: expected a list of at least two whole numbers"),
    (TRAINING, {"call": "train(model, xs, ys, epochs)"}, "call: pass lr, or an optimizer, to the function"),
    (OPTIMIZER, {"method": "update"}, 'method: expected one of "step", "zero_grad"'),
    (OPTIMIZER, {"init": "SGD(params, momentum=0.9, model)"}, "init: not a Python call"),
    (OPTIMIZER, {"init": "SGD(model)"}, "init: model: each argument is a number or one of params, lr"),
    (OPTIMIZER, {"init": None}, "init: missing"),
])
def test_a_wrong_training_target_is_one_line_naming_its_key(table, change, says):
    table = {k: v for k, v in {**table, **change}.items() if v is not None}
    with pytest.raises(ConfigError, match=says.replace("(", r"\(").replace(")", r"\)").replace("*", r"\*")) as raised:
        parse({"targets": {"t": table}}, "course.toml")
    assert "\n" not in str(raised.value) and "[targets.t]" in str(raised.value)


CLASSIC = {"targets": {"fit": {"kind": "training", "call": "train_step(model, xs, ys, lr)", "loss": "sum-of-squares",
                               "activation": "tanh", "points": 20}}}
TRAIN_MUTANTS = [m for m in tomllib.loads((CORPUS / "mutants.toml").read_text())["mutant"]
                 if m["expect"].get("train_step")]


@pytest.mark.parametrize("mutant", TRAIN_MUTANTS, ids=[m["name"] for m in TRAIN_MUTANTS])
def test_the_classic_train_step_as_a_training_target_gets_the_classic_diagnoses(tmp_path, mutant):
    """The same codes at the same lines as the classic ``train_step`` target, from the configured kind."""
    path = tmp_path / "solution.py"
    path.write_text(mutate(SOLUTION, mutant["replace"]))
    report = grade(path, Options(config=parse(CLASSIC, "course.toml"))).to_json()
    line = mutant["line"]["train_step"] if isinstance(mutant["line"], dict) else mutant["line"]
    found = [(d["code"], d["line"]) for d in report["diagnoses"] if d["target"] == "fit"]
    assert found == [(code, line) for code in mutant["expect"]["train_step"]]


def test_the_classic_solution_as_a_training_target_keeps_every_point(tmp_path):
    path = tmp_path / "solution.py"
    path.write_text(SOLUTION)
    report = grade(path, Options(config=parse(CLASSIC, "course.toml"))).to_json()
    assert (report["score"], report["diagnoses"]) == (20.0, [])


HINGE = {"targets": {"fit": {"kind": "training", "call": "fit(model, xs, ys, lr, epochs=3)", "loss": "hinge",
                             "returns": "last", "points": 12}}}
FIT = '''def fit(model, xs, ys, lr, epochs):
    for _ in range(epochs):
        scores = list(map(model, xs))
        losses = [(1 + -y * s).relu() for y, s in zip(ys, scores)]
        loss = sum(losses) * (1.0 / len(losses))
        for p in model.parameters():
            p.grad = 0.0
        loss.backward()
        for p in model.parameters():
            p.data -= lr * p.grad
    return loss.data
'''


@pytest.mark.parametrize(("old", "new", "code", "line"), [
    (None, None, None, None),
    ("        loss = sum(losses) * (1.0 / len(losses))\n", "        loss = sum(losses)\n", "wrong-loss", 5),
    ("    return loss.data\n", "    return losses[0].data\n", "wrong-loss", 11),
    ("            p.data -= lr * p.grad\n", "            p.data -= p.grad\n", "wrong-update", 10),
    ("        for p in model.parameters():\n            p.grad = 0.0\n", "", "missing-zero-grad", 6),
])
def test_a_hinge_loss_loop_that_returns_its_last_loss(tmp_path, old, new, code, line):
    """micrograd's demo: the mean hinge loss, epochs written in the call, the last epoch's loss returned."""
    path = tmp_path / "fit.py"
    path.write_text(FIT if old is None else FIT.replace(old, new))
    report = grade(path, Options(config=parse(HINGE, "course.toml"))).to_json()
    found = [(d["code"], d["line"]) for d in report["diagnoses"]]
    assert found == ([] if code is None else [(code, line)])
    assert (report["score"] == report["max_score"]) == (code is None)


@pytest.mark.parametrize(("body", "codes"), [
    ("    return (x for x in iter(int, 1))", ["missing-backward", "wrong-loss"]),  # an endless generator, no training
    ("    return [0.5] * 10**6", ["missing-backward", "wrong-loss"]),
    ("    for _ in range(500):\n        model(xs[0])[0].backward()\n    return 0.0",  # a flood of backward passes
     ["missing-update", "wrong-loss"]),
    ("    raise RuntimeError('no')", ["crash"]),
    ("    while True:\n        pass", ["timeout"]),
    ("    model.layers = None\n    return 0.0", ["crash"]),
])
def test_what_a_training_function_does_is_never_trusted(tmp_path, mode, body, codes):
    path = tmp_path / "work.py"
    path.write_text(f"def train_one_epoch(model, criterion, optimizer, xs, ys, batch_size):\n{body}\n")
    course = {"targets": {"t": {"kind": "training", "points": 5, "time_limit": 3, "loss": "cross-entropy",
                                "returns": "mean",
                                "call": "train_one_epoch(model, criterion, optimizer, xs, ys, batch_size=2)"}}}
    report = grade(path, Options(config=parse(course, "course.toml"))).to_json()
    assert [d["code"] for d in report["diagnoses"]] == codes, report["diagnoses"]
    assert report["score"] < report["max_score"]


@pytest.mark.parametrize(("body", "code"), [
    ("        for p in self.params:\n            p.data = 'far'", "wrong-update"),
    ("        self.params.clear()", "missing-update"),
    ("        for p in self.params:\n            p.data = float('nan')", "wrong-update"),
    ("        raise ValueError('no')", "crash"),
    ("        while True:\n            pass", "timeout"),
])
def test_what_an_optimizer_does_is_never_trusted(tmp_path, mode, body, code):
    path = tmp_path / "optim.py"
    path.write_text(f"class SGD:\n    def __init__(self, params, lr):\n        self.params = list(params)\n"
                    f"        self.lr = lr\n\n    def step(self):\n{body}\n")
    report = grade(path, Options(config=parse({"targets": {"t": {**OPTIMIZER, "time_limit": 3}}}, "c.toml"))).to_json()
    assert [d["code"] for d in report["diagnoses"]] == [code], report["diagnoses"]
    assert report["score"] == 0.0 or code != "missing-update"


def test_a_check_of_a_target_whose_name_holds_a_dot_can_be_hidden():
    """``SGD.step``'s checks are named as any target's: ``hidden = ["zero-gradient"]``, not ``step.zero-gradient``."""
    table = {**OPTIMIZER, "hidden": ["zero-gradient"]}
    assert parse({"targets": {"SGD.step": table}}, "course.toml").targets[0].hidden == ("zero-gradient",)
    with pytest.raises(ConfigError, match="no check 'step.zero-gradient'"):
        parse({"targets": {"SGD.step": {**OPTIMIZER, "hidden": ["step.zero-gradient"]}}}, "course.toml")
