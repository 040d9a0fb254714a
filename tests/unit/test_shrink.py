"""micrograde's own shrinker: small cases, the same mistake, every case a legal one, and runs that repeat."""

from __future__ import annotations

import zlib

import pytest

from grader.exercise.cases import Case, case
from grader.exercise.expr import features, leaf, safe_domain
from grader.exercise.ops import CLASSIC
from grader.judging.judge import Verdict
from grader.search import engine, shrink
from grader.search.generable import Space
from grader.search.strategies import expressions

a, b, c = leaf("a"), leaf("b"), leaf("c")


def evaluator(fails, seen: list | None = None, error=lambda case: None):
    """``evaluate_many`` of a submission that fails exactly where ``fails(case)`` says (``error(case)``:
    the exception it raises there instead), recording every case it is shown."""
    def evaluate_many(cases: list) -> list[Verdict]:
        if seen is not None:
            seen.extend(cases)
        verdicts = []
        for one in cases:
            raised = error(one)
            verdicts.append(Verdict(one, error={"type": raised}) if raised else Verdict(one, grads_ok=not fails(one)))
        return verdicts
    return evaluate_many


def reuses_a_mul(one: Case) -> bool:
    """The `=` for `+=` in `__mul__`: wrong wherever some node feeding a multiplication is used twice."""
    return any(node[0] == "mul" for e in one.exprs for node in e) and any(features(e).reuse for e in one.exprs)


def shrunk(start: Case, fails, target: str | None = "mul", **kwargs) -> Case:
    first = evaluator(fails)([start])[0]
    assert not first.passed("grad")
    found = shrink.shrink(first, evaluator(fails, **kwargs), "grad", target)
    return min([first, *found], key=lambda v: v.case.rank).case


def test_a_big_failing_case_shrinks_to_the_smallest_one_showing_the_same_mistake():
    t = (a * b) + c
    start = case(((t * 2.0) + (t * c)).tanh() * (b ** 2), a=-1.25, b=0.75, c=1.75)
    assert shrunk(start, reuses_a_mul).label == "(a * a)"
    assert shrunk(start, reuses_a_mul).inputs == (("a", 2.0),)  # the simplest value a person can check


def test_leaves_become_one_and_operands_are_replaced_where_that_shows_the_mistake():
    def needs_a_shared_product(one: Case) -> bool:
        """Fails only where a product is itself used twice."""
        expr = one.expr
        counts = [0] * len(expr)
        for node in expr:
            for j in node[1:3] if node[0] in ("add", "mul") else node[1:2] if node[0] in ("pow", "tanh") else ():
                counts[j] += 1
        return any(node[0] == "mul" and counts[i] > 1 for i, node in enumerate(expr))

    t = a * b
    start = case((t * 2.0) + (t + c), a=0.5, b=-1.5, c=0.3)
    assert shrunk(start, needs_a_shared_product).label in ("(t1 + t1)  where t1 = (a * a)",
                                                           "(t1 * t1)  where t1 = (a * a)")


def test_a_second_expression_goes_when_the_mistake_does_not_need_it():
    start = case(a * b, (a * a).tanh(), a=0.5, b=2.0)
    assert shrunk(start, reuses_a_mul, target=None).exprs == case(a * a, a=2.0).exprs
    accumulates = case(a * b, a + c, a=2.0, b=-3.0, c=0.5)
    assert len(shrunk(accumulates, lambda one: len(one.exprs) == 2, target=None).exprs) == 2


def test_shrinking_never_slips_into_another_mistake():
    """Smaller cases raise (as a wrong value can make some input crash): the report keeps the wrong value."""
    start = case(((a * a) + b).tanh(), a=0.5, b=-1.5)

    def crashes(one: Case) -> str | None:
        return "ZeroDivisionError" if one.size <= 3 else None

    result = shrunk(start, reuses_a_mul, error=crashes)
    assert result.size > 3 and reuses_a_mul(result)


def test_every_case_tried_keeps_the_target_op_and_safe_inputs():
    seen: list = []
    start = case(((a ** 3) * (b ** -1)).tanh() + a, a=1.5, b=-0.75)
    result = shrunk(start, lambda one: True, target="pow", seen=seen)
    assert seen and all(any(n[0] == "pow" for e in one.exprs for n in e) for one in seen)
    assert all(safe_domain(e, one.values) for one in seen for e in one.exprs)
    assert result.label == "(a ** 2)" and result.inputs == (("a", 2.0),)  # the simplest exponent (not 0 or 1)


def test_shrinking_stops_at_its_budget():
    seen: list = []
    start = case(((a * b) + (b * c)) * ((a * c) + 2.0), a=0.5, b=-1.5, c=0.3)
    shrunk(start, lambda one: True, seen=seen)
    assert 0 < len(seen) <= shrink.BUDGET


@pytest.mark.parametrize("replay", ["1", "0"])
def test_an_erratic_submission_is_shown_the_same_cases_with_and_without_kept_openings(replay, tmp_path, monkeypatch):
    """Failing at random-looking cases (a checksum of the case) and only on some: every mode shows it
    the same opening, then the same shrinking, within the budget."""
    monkeypatch.setenv("MICROGRADE_CACHE_DIR", str(tmp_path / "cache"))

    def erratic(one: Case) -> bool:
        return zlib.crc32(repr(one).encode()) % 3 == 0 and one.size > 2

    def run() -> tuple[list, list]:
        seen: list = []
        found = engine.search(Space("mul", 1, CLASSIC), evaluator(erratic, seen), "grad", 30)
        return seen, [v.case for v in found]

    monkeypatch.setenv("MICROGRADE_REPLAY", "1")
    first = run()  # generates and keeps the opening
    monkeypatch.setenv("MICROGRADE_REPLAY", replay)
    again = run()
    assert first == again and first[1]
    opening = engine.generate(lambda: expressions("mul"), 30)
    assert first[0][:len(opening)] == opening
    assert len(first[0]) - len(opening) <= shrink.BUDGET
    assert all(erratic(one) for one in first[1])


def test_a_child_lost_while_shrinking_ends_the_shrinking_with_what_it_found():
    """An ``evaluate_many`` that answers fewer cases than it was given has lost its child."""
    start = case(((a * b) + (b * c)) * ((a * c) + 2.0), a=0.5, b=-1.5, c=0.3)
    first = evaluator(reuses_a_mul)([start])[0]
    calls: list = []
    full = evaluator(reuses_a_mul)

    def lost_on_the_second_call(cases: list) -> list[Verdict]:
        calls.append(cases)
        return full(cases) if len(calls) == 1 else full(cases)[:1]

    found = shrink.shrink(first, lost_on_the_second_call, "grad", "mul")
    assert len(calls) == 2 and found and all(reuses_a_mul(v.case) for v in found)


def test_a_reflected_op_keeps_its_plain_number_first():
    """``2 * a`` is graded through ``__rmul__``: a shrunk case still puts a plain number first."""
    seen: list = []
    start = case(((a * b).apply("rmul", 0.5) + b).tanh(), a=1.25, b=-0.75)
    result = shrunk(start, lambda one: True, target="rmul", seen=seen)
    for one in seen:
        for expr in one.exprs:
            assert all(expr[node[1]][0] == "const" for node in expr if node[0] == "rmul")
    assert result.label == "(2 * a)" and result.inputs == (("a", 2.0),)


def test_the_smallest_case_is_the_one_easiest_to_work_out_by_hand():
    """Among cases of one size: + and * before ** before tanh, then the numbers in the order the
    generation lists them (2 first, never the degenerate exponents 0 and 1 before it)."""
    ranked = sorted([case((a ** 1).tanh(), a=2.0), case((a + a) + a, a=2.0), case((a ** 2).tanh(), a=2.0),
                     case((a * a) + a, a=-0.75), case((a * a) + a, a=2.0), case((a ** 0).tanh(), a=2.0)],
                    key=lambda one: one.rank)
    assert [(one.label, one.values["a"]) for one in ranked] == [
        ("((a * a) + a)", 2.0), ("((a * a) + a)", -0.75), ("((a + a) + a)", 2.0),
        ("(a ** 2).tanh()", 2.0), ("(a ** 0).tanh()", 2.0), ("(a ** 1).tanh()", 2.0)]
