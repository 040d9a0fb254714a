"""Naming the misconception: the rules of ``grader.diagnosis.rules`` on verdicts built directly,
as the judge builds them, and the wording they lead to."""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.diagnosis import feedback, rules
from grader.diagnosis.training import TrainShape
from grader.exercise.cases import Case, Check, TrainCase, a, b, c, case
from grader.grade import Options, grade
from grader.judging.judge import Verdict
from grader.judging.training import parameter_name


def grads_wrong(*cases, faults=frozenset()) -> list[Verdict]:
    return [Verdict(x, grads_ok=False, faults=set(faults)) for x in cases]


ONCE = case(a * b, a=2.0, b=3.0)
ONCE_DEEPER = case((a + b) * c, a=2.0, b=3.0, c=0.5)
REUSED = case(a * a, a=2.0)


def test_an_operand_missing_from_the_children_is_missing_child_alone():
    verdicts = grads_wrong(ONCE) + grads_wrong(ONCE_DEEPER, faults={"missing-child"}) + grads_wrong(REUSED)
    assert list(rules.diagnose_op("mul", verdicts)) == ["missing-child"]


def test_detached_backward_needs_every_single_use_failure_to_pass_nothing():
    detached = grads_wrong(ONCE, ONCE_DEEPER, faults={"detached-backward"}) + grads_wrong(REUSED)
    assert list(rules.diagnose_op("mul", detached)) == ["detached-backward"]
    once_a_zero = grads_wrong(ONCE) + grads_wrong(ONCE_DEEPER, faults={"detached-backward"})
    assert list(rules.diagnose_op("mul", once_a_zero)) == ["wrong-local-grad"]
    # Attached where it belongs (out._backward = ...), a _backward that passes nothing computes 0.
    assert list(rules.diagnose_op("mul", detached, attached=True)) == ["wrong-local-grad"]


def test_reuse_only_failures_are_grad_overwrite():
    assert list(rules.diagnose_op("mul", grads_wrong(REUSED))) == ["grad-overwrite"]
    assert list(rules.diagnose_op("mul", grads_wrong(REUSED), overwrites=True)) == ["grad-overwrite"]
    # Every update visibly adds (+=): a term right by accident once (other.grad += self.grad), not an overwrite.
    assert list(rules.diagnose_op("mul", grads_wrong(REUSED), overwrites=False)) == ["wrong-local-grad"]


def test_constant_operand_evidence_prefers_the_ops_own_method():
    first, second = case(3 * a, a=1.5), case(a * 3, a=1.5)
    codes = rules.diagnose_op("mul", [Verdict(ONCE)] + grads_wrong(first, second))
    assert codes["constant-operand"].case == second
    codes = rules.diagnose_op("mul", [Verdict(ONCE), Verdict(second)] + grads_wrong(first))
    assert codes["constant-operand"].case == first


def test_a_special_check_speaks_only_when_it_fails_alone():
    at_zero = Check("relu.at-zero", "at 0", "grad", code="relu-at-zero")
    special = Verdict(case(a.apply("relu") + a, a=0.0), grads_ok=False, check=at_zero)
    assert list(rules.diagnose_op("relu", [special])) == ["relu-at-zero"]
    reused = grads_wrong(case(a.apply("relu") * a.apply("relu"), a=0.5))
    assert list(rules.diagnose_op("relu", [special, *reused])) == ["grad-overwrite"]


def train(right: list[bool], moved: list[bool], loss_ok: bool = True) -> Verdict:
    verdict = Verdict(TrainCase(steps=len(right), lr=0.05), forward_ok=loss_ok, grads_ok=all(right))
    verdict.train = {"right_steps": right, "moved": moved}
    return verdict


@pytest.mark.parametrize(("shape", "code"), [
    (TrainShape(calls_backward=False, updates=True, updates_data=True), "missing-backward"),
    (TrainShape(calls_backward=True, updates=False, updates_data=False), "missing-update"),
    (TrainShape(calls_backward=True, updates=True, updates_data=False), "wrong-update"),
    (TrainShape(calls_backward=True, updates=True, updates_data=True), "zero-grad-misplaced"),
])
def test_parameters_that_never_move_are_explained_by_what_train_step_does(shape, code):
    assert list(rules.diagnose_train([train([False], [False])], shape)) == [code]


def test_a_wrong_loss_that_the_update_follows_is_wrong_loss_alone():
    assert list(rules.diagnose_train([train([False], [True], loss_ok=False)])) == ["wrong-loss"]
    assert list(rules.diagnose_train([train([True], [True], loss_ok=False)])) == ["wrong-loss"]
    assert list(rules.diagnose_train([train([False], [True])])) == ["wrong-update"]
    assert list(rules.diagnose_train([train([True, False], [True, True])])) == ["missing-zero-grad"]


def test_parameters_are_named_as_the_model_holds_them():
    # MLP(3, [4, 4, 1]): layer 1 has 4 neurons of 3 weights and a bias (16), layer 2 4 of 4 + 1 (20).
    assert parameter_name(0) == "layer 1, neuron 1, weight 1"
    assert parameter_name(3) == "layer 1, neuron 1, bias"
    assert parameter_name(16) == "layer 2, neuron 1, weight 1"
    assert parameter_name(40) == "layer 3, neuron 1, bias"
    with pytest.raises(IndexError):
        parameter_name(41)


def recursion(depth: int, *roots) -> Verdict:
    return Verdict(case(*roots, a=1.0, b=2.0), error={"type": "RecursionError", "depth": depth, "line": 75})


def test_a_recursion_error_hint_matches_its_cause():
    cycle = feedback.message("crash", "backward", recursion(990, a * b), "grad")
    assert "never stops" in cycle and "explicit stack" not in cycle
    # A chain of 480 products, a * b * b * ..., as the expression compiler lays it out.
    chain = (("leaf", "a"), ("leaf", "b"), ("mul", 0, 1), *(("mul", k, 1) for k in range(2, 481)))
    assert case(a * b * b, a=1.0, b=2.0).expr == chain[:4]
    deep = Verdict(Case((chain,), (("a", 1.0), ("b", 2.0))), error={"type": "RecursionError", "depth": 995})
    too_deep = feedback.recursion_hint(deep)
    assert "explicit stack" in too_deep and "never stops" not in too_deep


def test_a_crash_shows_the_smallest_case_that_raises_it():
    verdict = Verdict(case(a + b, a=1.0, b=2.0), error={"type": "AttributeError", "message": "no gard", "line": 25})
    text = feedback.message("crash", "add", verdict, "both")
    assert "Smallest case that raises it: (a + b) with a = 1, b = 2." in text


def test_a_lost_child_names_the_case_it_was_running(tmp_path):
    solution = (Path(__file__).parents[1] / "corpus" / "solution.py").read_text()
    path = tmp_path / "engine.py"
    path.write_text(solution.replace('        out = Value(self.data + other.data, (self, other), "+")\n',
                                     "        while True:\n            pass\n"))
    [diagnosis] = grade(path, Options(timeout=1.0)).diagnoses
    assert (diagnosis.code, diagnosis.target) == ("timeout", "add")
    assert "on (a + b) with a = 2, b = -3." in diagnosis.message
    assert path.read_text().splitlines()[diagnosis.line - 1].strip() == "while True:"


# One statement is one misconception: what follows from it is not charged again.


def test_a_wrong_formula_that_also_raises_is_wrong_forward_alone():
    zero = case(a.tanh(), a=0.0)
    raised = Verdict(zero, error={"type": "ZeroDivisionError", "message": "float division by zero", "phase": "forward"})
    wrong = Verdict(case(a.tanh(), a=1.0), forward_ok=False, grads_ok=False)
    assert list(rules.diagnose_op("tanh", [raised, wrong])) == ["wrong-forward"]
    # Raising in the backward pass is a mistake of its own.
    in_backward = Verdict(zero, error={"type": "AttributeError", "message": "gard", "phase": "backward"})
    assert sorted(rules.diagnose_op("tanh", [in_backward, wrong])) == ["crash", "wrong-forward"]


def test_a_pass_that_runs_the_root_in_every_nodes_place_is_one_code():
    small = Verdict(ONCE, grads_ok=False, faults={"repeated-visit"}, traces=[[2, 2, 2]])
    larger = Verdict(ONCE_DEEPER, grads_ok=False, faults={"incomplete-traversal"}, traces=[[4, 4, 4, 4, 4]])
    assert list(rules.diagnose_backward([small, larger])) == ["repeated-visit"]
    # Nodes skipped and others run twice, each its own run: two mistakes.
    skipping = Verdict(ONCE_DEEPER, grads_ok=False, faults={"incomplete-traversal"}, traces=[[4, 2, 0, 1]])
    assert sorted(rules.diagnose_backward([small, skipping])) == ["incomplete-traversal", "repeated-visit"]


def test_a_name_bound_only_on_some_graphs_is_the_crash_alone():
    unbound = Verdict(case(a, a=2.0), error={"type": "UnboundLocalError", "phase": "backward",
                                             "message": "cannot access local variable 'child'"})
    assert list(rules.diagnose_backward([unbound] + grads_wrong(ONCE, faults={"missing-seed"}))) == ["crash"]


def test_a_wrong_update_that_also_piles_gradients_up_is_both():
    steps = TrainCase(steps=3, lr=0.05)
    uphill = Verdict(steps, grads_ok=False, train={"right_steps": [False] * 3, "moved": [True] * 3,
                                                    "accumulates": True})
    codes = rules.diagnose_train([uphill], TrainShape(calls_backward=True, updates=True, updates_data=True))
    assert sorted(codes) == ["missing-zero-grad", "wrong-update"]
    steady = Verdict(steps, grads_ok=False, train={**uphill.train, "accumulates": False})
    assert list(rules.diagnose_train([steady])) == ["wrong-update"]


def test_an_update_of_the_loss_is_wrong_update_and_its_returned_loss_not_charged_again():
    frozen = Verdict(TrainCase(steps=1, lr=0.05), forward_ok=False, grads_ok=False,
                     train={"right_steps": [False], "moved": [False], "accumulates": False})
    shape = TrainShape(calls_backward=True, updates=True, updates_data=False, updates_returned=True)
    assert list(rules.diagnose_train([frozen], shape)) == ["wrong-update"]
