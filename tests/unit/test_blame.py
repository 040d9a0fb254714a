"""Blame: each diagnosis points at the statement at fault, chosen by the verdicts' evidence.

The verdicts here are built directly, as the judge would build them, so each rule of
``grader.diagnosis.blame`` is checked on the evidence it reads; the submissions are real
files (and a notebook as Jupyter saves it) read by the real ``read_submission``.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from grader.diagnosis.blame import attaches_backward, blame, written
from grader.diagnosis.training import TrainShape, train_shape
from grader.exercise.cases import TrainCase, a, b, case
from grader.grade import grade
from grader.judging.judge import Verdict
from grader.submission.source import read_submission

SOLUTION = (Path(__file__).parents[1] / "corpus" / "solution.py").read_text()


def submission(tmp_path: Path, *replacements: tuple[str, str]):
    source = SOLUTION
    for old, new in replacements:
        assert source.count(old) == 1
        source = source.replace(old, new)
    path = tmp_path / "engine.py"
    path.write_text(source)
    return read_submission(path)


def line_of(source_text: str, statement: str) -> int:
    return next(n for n, line in enumerate(source_text.splitlines(), 1) if line.strip() == statement)


def mul_verdict(self_grad: float, other_grad: float) -> Verdict:
    """``a * b`` at a = 2, b = -3 (expected a.grad = -3, b.grad = 2), with the gradients given."""
    verdict = Verdict(case(a * b, a=2.0, b=-3.0), grads_ok=False)
    expr = verdict.case.expr
    verdict.graph = (expr, [(2.0, -3.0), (-3.0, 2.0), (-6.0, 1.0)],
                     [(2.0, self_grad), (-3.0, other_grad), (-6.0, 1.0)])
    return verdict


def where(code: str, kind: str, target: str, method: str, verdict, sub, reflected=None):
    found = blame(code, kind, target, method, verdict, sub, reflected)
    return found.line


@pytest.mark.parametrize(("self_grad", "other_grad", "statement"), [
    (0.0, 2.0, "self.grad += other.data * out.grad"),
    (-3.0, 7.0, "other.grad += self.data * out.grad"),
    (5.0, 7.0, "self.grad += other.data * out.grad"),  # both wrong: the first
])
def test_wrong_local_grad_points_at_the_update_of_the_wrong_operand(tmp_path, self_grad, other_grad, statement):
    sub = submission(tmp_path)
    verdict = mul_verdict(self_grad, other_grad)
    assert where("wrong-local-grad", "op", "mul", "__mul__", verdict, sub) == line_of(SOLUTION, statement)


def test_an_operand_updated_twice_while_the_other_never_is_points_at_the_copy(tmp_path):
    sub = submission(tmp_path, ("other.grad += self.data * out.grad", "self.grad += self.data * out.grad"))
    source = sub.files[0].units[0].source
    copied = [n for n, line in enumerate(source.splitlines(), 1) if line.strip() == "self.grad += self.data * out.grad"]
    assert where("wrong-local-grad", "op", "mul", "__mul__", mul_verdict(-1.0, 0.0), sub) == copied[0]


def test_grad_overwrite_points_at_the_assignment_not_the_accumulation(tmp_path):
    sub = submission(tmp_path, ("other.grad += self.data * out.grad", "other.grad = self.data * out.grad"))
    line = where("grad-overwrite", "op", "mul", "__mul__", mul_verdict(-3.0, 2.0), sub)
    assert line == line_of(sub.files[0].units[0].source, "other.grad = self.data * out.grad")


def test_wrong_forward_follows_the_local_variable_passed_to_the_constructor(tmp_path):
    sub = submission(tmp_path)
    verdict = Verdict(case(a.apply("tanh"), a=0.5), forward_ok=False)
    line = where("wrong-forward", "op", "tanh", "tanh", verdict, sub)
    assert line == line_of(SOLUTION, "t = (math.exp(2 * x) - 1) / (math.exp(2 * x) + 1)")


def test_constant_operand_blames_the_reflected_method_only_when_the_number_comes_first(tmp_path):
    sub = submission(tmp_path)
    first = Verdict(case(3 * a, a=1.5), grads_ok=False)
    second = Verdict(case(a * 3, a=1.5), grads_ok=False)
    assert where("constant-operand", "op", "mul", "__mul__", first, sub, "__rmul__") == line_of(
        SOLUTION, "return self * other")
    assert where("constant-operand", "op", "mul", "__mul__", second, sub, "__rmul__") == 31  # the wrapping


def test_missing_child_and_detached_backward_point_at_the_wiring(tmp_path):
    sub = submission(tmp_path, ("        out._backward = _backward\n        return out\n\n    def __mul__",
                                "        self._backward = _backward\n        return out\n\n    def __mul__"))
    source = sub.files[0].units[0].source
    verdict = Verdict(case(a + b, a=1.0, b=2.0), grads_ok=False)
    assert where("missing-child", "op", "add", "__add__", verdict, sub) == line_of(
        source, 'out = Value(self.data + other.data, (self, other), "+")')
    assert where("detached-backward", "op", "add", "__add__", verdict, sub) == line_of(
        source, "self._backward = _backward")


def test_an_error_points_at_the_line_its_traceback_names(tmp_path):
    sub = submission(tmp_path)
    verdict = Verdict(case(a + b, a=1.0, b=2.0),
                      error={"type": "AttributeError", "line": 25, "file": sub.files[0].units[0].filename})
    assert where("crash", "op", "add", "__add__", verdict, sub) == 25


def test_a_deleted_seed_is_blamed_where_it_belongs(tmp_path):
    sub = submission(tmp_path, ("        self.grad = 1.0\n        for node", "        for node"))
    verdict = Verdict(case(a * b, a=2.0, b=3.0), grads_ok=False)
    assert where("missing-seed", "backward", "backward", "backward", verdict, sub) == line_of(
        sub.files[0].units[0].source, "for node in reversed(topo):")


def test_wrong_order_blames_a_node_listed_before_its_operands(tmp_path):
    sub = submission(tmp_path, ("                for child in v._prev:\n                    build_topo(child)\n"
                                "                topo.append(v)",
                                "                topo.append(v)\n                for child in v._prev:\n"
                                "                    build_topo(child)"))
    verdict = Verdict(case(a * b, a=2.0, b=3.0), grads_ok=False)
    assert where("wrong-order", "backward", "backward", "backward", verdict, sub) == line_of(
        sub.files[0].units[0].source, "topo.append(v)")
    # Without such a node, the loop that runs the nodes: its header states the order.
    assert where("wrong-order", "backward", "backward", "backward", verdict, submission(tmp_path)) == line_of(
        SOLUTION, "for node in reversed(topo):")


@pytest.mark.parametrize(("traces", "statement"), [
    ([[2, 1, 0, 2, 1, 0]], "for node in reversed(topo):"),  # every node twice: the loop repeats the order
    ([[4, 2, 0, 1, 2, 0, 1]], "if v not in visited:"),  # only a shared node twice: the order holds it twice
])
def test_repeated_visit_tells_the_loop_from_the_order(tmp_path, traces, statement):
    sub = submission(tmp_path)
    verdict = Verdict(case(a * b, a=2.0, b=3.0), grads_ok=False, traces=traces)
    assert where("repeated-visit", "backward", "backward", "backward", verdict, sub) == line_of(SOLUTION, statement)


def train_verdict(right_first_step: bool) -> Verdict:
    verdict = Verdict(TrainCase(steps=1, lr=0.05), forward_ok=False)
    verdict.train = {"right_steps": [right_first_step], "moved": [True]}
    return verdict


def test_train_step_blames(tmp_path):
    sub = submission(tmp_path)
    assert where("wrong-loss", "train", "train_step", "train_step", train_verdict(True), sub) == line_of(
        SOLUTION, "return loss.data")
    assert where("wrong-loss", "train", "train_step", "train_step", train_verdict(False), sub) == line_of(
        SOLUTION, "loss = sum((yout - ygt) ** 2 for ygt, yout in zip(ys, ypred))")
    assert where("zero-grad-misplaced", "train", "train_step", "train_step", None, sub) == line_of(
        SOLUTION, "model.zero_grad()")
    assert where("wrong-update", "train", "train_step", "train_step", None, sub) == line_of(
        SOLUTION, "p.data += -lr * p.grad")
    no_update = submission(tmp_path, ("    for p in model.parameters():\n        p.data += -lr * p.grad\n", ""))
    assert where("missing-update", "train", "train_step", "train_step", None, no_update) == line_of(
        SOLUTION, "return loss.data") - 2
    no_zero = submission(tmp_path, ("    model.zero_grad()\n", ""))
    assert where("missing-zero-grad", "train", "train_step", "train_step", None, no_zero) == line_of(
        SOLUTION, "loss.backward()") - 1


def test_train_shape_reads_what_train_step_visibly_does(tmp_path):
    def shape(*replacements):
        return train_shape(written(submission(tmp_path, *replacements), "train_step").node)

    assert shape() == TrainShape(calls_backward=True, updates=True, updates_data=True)
    assert shape(("    loss.backward()\n", "")).calls_backward is False
    assert shape(("        p.data += -lr * p.grad", "        pass")).updates is False
    assert shape(("p.data += -lr * p.grad", "p.grad += -lr * p.grad")).updates_data is False


def test_a_notebook_diagnosis_names_the_cell_and_the_line_in_it(tmp_path):
    notebook = nbformat.v4.new_notebook()
    engine = SOLUTION.split("\n\ndef train_step")[0]
    notebook.cells = [nbformat.v4.new_markdown_cell("# micrograd"), nbformat.v4.new_code_cell("import random"),
                      nbformat.v4.new_code_cell(engine)]
    path = tmp_path / "work.ipynb"
    nbformat.write(notebook, path)
    found = blame("wrong-forward", "op", "add", "__add__", Verdict(case(a + b, a=1.0, b=2.0), forward_ok=False),
                  read_submission(path))
    # Cells are numbered as Jupyter shows them, markdown included: the engine is the third.
    assert (found.cell, found.line) == (3, line_of(engine, 'out = Value(self.data + other.data, (self, other), "+")'))


def test_a_reset_written_as_a_loop_is_the_reset_blamed(tmp_path):
    sub = submission(tmp_path, ("    model.zero_grad()\n    loss.backward()\n",
                                "    loss.backward()\n    for q in model.parameters():\n        q.grad = 0.0\n"))
    source = sub.files[0].units[0].source
    assert where("zero-grad-misplaced", "train", "train_step", "train_step", None, sub) == line_of(
        source, "for q in model.parameters():")
    # A reset is not an update: the update loop is still the only one.
    assert train_shape(written(sub, "train_step").node) == TrainShape(True, True, True)


@pytest.mark.parametrize(("attach", "attached"), [("out._backward = _backward", True),
                                                  ("self._backward = _backward", False),
                                                  ("_backward = _backward", False)])
def test_whether_the_backward_is_attached_to_the_returned_node(tmp_path, attach, attached):
    sub = submission(tmp_path, ("        out._backward = _backward\n        return out\n\n    def __mul__",
                                f"        {attach}\n        return out\n\n    def __mul__"))
    assert attaches_backward(written(sub, "__add__").node) is attached


@pytest.mark.parametrize("operand, update", [("other", "            other.grad += self.data * out.grad\n"),
                                             ("self", "            self.grad += other.data * out.grad\n")])
def test_a_missing_update_names_the_operand_that_gets_nothing(tmp_path, operand, update):
    path = tmp_path / "engine.py"
    path.write_text(SOLUTION.replace(update, "", 1))
    [diagnosis] = [d for d in grade(path).diagnoses if d.target == "mul"]
    assert diagnosis.code == "wrong-local-grad"
    assert f"adds to {operand}.grad, so {operand} gets no gradient" in diagnosis.message


def test_an_update_through_a_loop_over_the_children_names_no_operand(tmp_path):
    """Updates that do not name the operands (a loop over the children) give no note: it could be wrong."""
    loop = ("            for child, local in zip((self, other), (other.data, self.data * 0)):\n"
            "                child.grad += local * out.grad\n")
    path = tmp_path / "engine.py"
    path.write_text(SOLUTION.replace("            self.grad += other.data * out.grad\n"
                                     "            other.grad += self.data * out.grad\n", loop, 1))
    [diagnosis] = [d for d in grade(path).diagnoses if d.target == "mul"]
    assert diagnosis.code == "wrong-local-grad" and "gets no gradient" not in diagnosis.message
