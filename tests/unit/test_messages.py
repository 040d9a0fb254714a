"""Messages a new learner tripped on: each says what to look at, in the words of the case it shows."""

from __future__ import annotations

import re

from helpers import SOLUTION

from grader.grade import grade


def graded(tmp_path, source: str):
    path = tmp_path / "engine.py"
    path.write_text(source)
    return grade(path)


def test_missing_zero_grad_counts_steps_as_its_case_does(tmp_path):
    report = graded(tmp_path, SOLUTION.replace("    model.zero_grad()\n", ""))
    [diagnosis] = [d for d in report.diagnoses if d.target == "train_step"]
    assert diagnosis.code == "missing-zero-grad"
    steps, after = re.search(r"(\d+) steps? of train_step .* after step (\d+)", diagnosis.message).groups()
    assert steps == after == "2"  # the smallest case that shows it: its last step is the first wrong one


def test_returns_loss_failing_on_the_weights_says_what_to_look_at(tmp_path):
    report = graded(tmp_path, SOLUTION.replace("    model.zero_grad()\n", ""))
    [check] = [c for c in report.checks if c.id == "train_step.returns-loss"]
    assert check.status == "failed"
    assert check.message.startswith("The losses train_step returns are right; the parameters after a step are not")


def test_a_gradient_without_out_grad_is_named(tmp_path):
    source = SOLUTION.replace("self.grad += other.data * out.grad", "self.grad += other.data").replace(
        "other.grad += self.data * out.grad", "other.grad += self.data")
    report = graded(tmp_path, source)
    [diagnosis] = [d for d in report.diagnoses if d.target == "mul"]
    assert diagnosis.code == "wrong-local-grad" and "you forgot `out.grad`" in diagnosis.message
    wrong_rule = graded(tmp_path, SOLUTION.replace("self.grad += other.data * out.grad",
                                                   "self.grad += 2 * other.data * out.grad"))
    [diagnosis] = [d for d in wrong_rule.diagnoses if d.target == "mul"]
    assert diagnosis.code == "wrong-local-grad" and "out.grad`" not in diagnosis.message


def test_a_part_with_no_stub_is_not_told_to_fill_one_in(tmp_path):
    """A stub that still raises is filled in; a part the submission has nothing of (a file without its
    train_step) is written, where the course asks for it."""
    without = SOLUTION[:SOLUTION.index("def train_step(")]
    stub = without + "def train_step(model, xs, ys, lr):\n    raise NotImplementedError\n"
    [missing] = [d for d in graded(tmp_path, without).diagnoses if d.target == "train_step"]
    [stubbed] = [d for d in graded(tmp_path, stub).diagnoses if d.target == "train_step"]
    assert missing.code == stubbed.code == "not-implemented"
    assert "Fill in the stub" not in missing.message and "Write it where your course" in missing.message
    assert "Fill in the stub" in stubbed.message and stubbed.line is not None
