"""Forged scores: a hostile submission gets exactly what its own code deserves, in both sandbox modes.

Each attack (``tests/attacks/``) is written as a student would write it and
falls back to the submission's own code when it is refused, so the deserved
score is that of the same submission without the attack, graded here too.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from helpers import SOLUTION, micrograde

import reference
from grader.child.inside import reading
from grader.child.worker import parse_reply, read_reply
from grader.exercise.cases import Case, TrainCase
from grader.grade import Options, grade
from grader.judging import judge, training
from grader.judging.plan import plan_op

ATTACKS = Path(__file__).parents[1] / "attacks"
OPS = ("add", "mul", "pow", "tanh", "backward")
# One real bug: __add__ overwrites gradient instead of adding to it.
BUGGY = SOLUTION.replace("self.grad += 1.0 * out.grad", "self.grad = 1.0 * out.grad").replace(
    "other.grad += 1.0 * out.grad", "other.grad = 1.0 * out.grad")
# No engine at all: only an honest train_step.
TRAIN_ONLY = "def train_step" + SOLUTION.split("def train_step")[1]


def run(tmp_path: Path, source: str, name: str = "work.py"):
    """Grade ``source``; the report must be plain JSON whatever the submission did."""
    path = tmp_path / name
    path.write_text(source)
    report = grade(path, Options(timeout=10.0))
    json.dumps(report.to_json(), allow_nan=False)
    return report


def attack(*names: str) -> str:
    return "\n".join((ATTACKS / f"{name}.src").read_text() for name in names)


_graded: dict[tuple[str, str], object] = {}


def deserved(tmp_path: Path, source: str, sandbox_mode: str):
    """The report of ``source`` without any attack (graded once per mode)."""
    if (source, sandbox_mode) not in _graded:
        honest = tmp_path / "honest"
        honest.mkdir()
        _graded[source, sandbox_mode] = run(honest, source)
    return _graded[source, sandbox_mode]


def assert_same_verdict(report, honest) -> None:
    assert report.target_scores() == honest.target_scores()
    assert sorted((d.target, d.code) for d in report.diagnoses) == sorted((d.target, d.code) for d in honest.diagnoses)


def assert_forbidden(report) -> None:
    assert report.codes("submission") == ["forbidden-import"], report.diagnoses
    assert report.score == 0.0


@pytest.mark.parametrize("attacks", [
    ("main_module",), ("import_main",), ("settrace",), ("setprofile",),
    ("frames_common", "frame_getframe"), ("frames_common", "frame_inspect"),
    ("frames_common", "frame_traceback"), ("frames_common", "frame_generator"), ("frames_common", "frame_gc"),
], ids=lambda a: a[-1])
def test_rewriting_the_harness_earns_nothing(tmp_path, mode, attacks):
    report = run(tmp_path, BUGGY + attack(*attacks))
    honest = deserved(tmp_path, BUGGY, mode)
    assert honest.codes("add") == ["grad-overwrite"]
    assert_same_verdict(report, honest)


@pytest.mark.parametrize("name", ["borrow_gc", "borrow_frames"])
def test_borrowing_the_reference_value_earns_nothing(tmp_path, mode, name):
    report = run(tmp_path, attack(name) + "\n" + TRAIN_ONLY)
    honest = deserved(tmp_path, TRAIN_ONLY, mode)
    scores = report.target_scores()
    assert all(scores[t][0] == 0.0 for t in OPS)
    assert scores["train_step"][0] == scores["train_step"][1]
    assert_same_verdict(report, honest)


@pytest.mark.parametrize("attacks", [("guard_class", "borrow_module"), ("guard_gc", "borrow_module"),
                                     ("borrow_module", "guard_frames")], ids=lambda a: "+".join(a))
def test_switching_the_audit_hook_off_still_forbidden(tmp_path, mode, attacks):
    report = run(tmp_path, attack(*attacks) + "\n" + TRAIN_ONLY)
    assert_forbidden(report)


# __mul__ with the right value that passes no gradient to its operands.
MUL_PASSES_NOTHING = SOLUTION.replace("""            self.grad += other.data * out.grad
            other.grad += self.data * out.grad""", """            pass""")


def test_keeping_another_targets_stand_in_earns_nothing(tmp_path, mode):
    """The wrapper that stands in for __mul__ while __add__ is graded, kept and called as __mul__ when
    __mul__ is graded, is the submission's own __mul__ again."""
    report = run(tmp_path, MUL_PASSES_NOTHING + attack("isolation_stash"))
    honest = deserved(tmp_path, MUL_PASSES_NOTHING, mode)
    assert honest.target_scores()["mul"][0] < honest.target_scores()["mul"][1]
    assert_same_verdict(report, honest)


def test_the_hooks_helpers_cannot_be_rewritten_through_a_refusals_traceback(tmp_path, mode):
    """A refusal's traceback shows the hook's frame, and its globals the module functions the hook calls:
    none of their keyword defaults (what they decide with) can be read, let alone rewritten."""
    report = run(tmp_path, SOLUTION + attack("guard_helpers"))
    assert "helpers rewritten: []" in report.output, report.output
    assert report.score == 100.0


def test_emptying_the_record_from_a_signal_handler_still_forbidden(tmp_path, mode):
    report = run(tmp_path, attack("record_signal") + "\n" + SOLUTION)
    assert_forbidden(report)


def test_answering_for_the_harness_with_infinity(tmp_path, mode):
    report = run(tmp_path, attack("reply_infinity") + "\n" + TRAIN_ONLY)
    assert_same_verdict(report, deserved(tmp_path, TRAIN_ONLY, mode))


@pytest.mark.parametrize("name", ["reply_forged_id", "reply_direct"])
def test_replies_written_by_the_submission_earn_nothing(tmp_path, mode, name):
    report = run(tmp_path, BUGGY + attack(name))
    honest = deserved(tmp_path, BUGGY, mode).target_scores()
    scores = report.target_scores()
    assert scores["add"][0] <= honest["add"][0]
    assert {t: s for t, s in scores.items() if t != "add"} == {t: s for t, s in honest.items() if t != "add"}


def test_a_deeply_nested_reply_is_a_load_error_not_a_crash(tmp_path, mode):
    report = run(tmp_path, SOLUTION + attack("reply_nested"))
    assert report.codes("submission") == ["load-error"]
    assert report.score == 0.0


def test_a_deeply_nested_reply_exits_with_lost_points(tmp_path, mode):
    path = tmp_path / "work.py"
    path.write_text(SOLUTION + attack("reply_nested"))
    result = micrograde("grade", str(path), "--format", "json")
    assert result.returncode == 1, result.stderr
    assert json.loads(result.stdout)["score"] == 0.0


@pytest.mark.parametrize("variant", ["property", "descriptor", "getattribute", "getattr"])
def test_a_grad_computed_when_read_scores_zero(tmp_path, mode, variant):
    report = run(tmp_path, attack("computed_engine", f"computed_{variant}") + "\n" + TRAIN_ONLY)
    scores = report.target_scores()
    for target in OPS:
        assert report.codes(target) == ["computed-grad"], (target, report.diagnoses)
        assert scores[target][0] == 0.0, target
    assert scores["train_step"][0] == scores["train_step"][1]


@pytest.mark.parametrize("statement", [
    "import importlib\nimportlib.import_module('sym' + 'py')",
    "importlib = __import__('import' + 'lib')\nimportlib.import_module('to' + 'rch')",
    "__import__(''.join(['ja', 'x']))",
    "exec('import sym' + 'py')",
    "import importlib\nimportlib.import_module('refer' + 'ence.engine')",
    "import importlib\nimportlib.import_module('.'.join(['grader', 'judging', 'judge']))",
])
def test_obfuscated_forbidden_imports_at_load(tmp_path, mode, statement):
    body = "\n".join("    " + line for line in statement.splitlines())
    report = run(tmp_path, f"try:\n{body}\nexcept Exception:\n    pass\n" + SOLUTION)
    assert_forbidden(report)


def test_reading_the_reference_by_a_relative_path_from_inside_it(tmp_path, mode):
    inside = Path(reference.__file__).resolve().parent
    source = SOLUTION + (f"\nimport os\ntry:\n    os.chdir({str(inside)!r})\n    open('engine.py').read()\n"
                         "except OSError:\n    pass\n")
    report = run(tmp_path, source)
    assert_forbidden(report)


def test_an_import_function_stashed_before_grading(tmp_path, mode):
    source = "import builtins\n_load = builtins.__import__\n" + SOLUTION.replace(
        "    loss.backward()", "    try:\n        _load('to' + 'rch')\n    except ImportError:\n        pass\n"
        "    loss.backward()")
    report = run(tmp_path, source)
    assert_forbidden(report)


def test_a_micrograd_package_of_the_students_own(tmp_path, mode):
    submission = tmp_path / "submission"
    (submission / "micrograd").mkdir(parents=True)
    (submission / "micrograd" / "__init__.py").write_text("")
    engine, train = SOLUTION.split("def train_step")
    (submission / "micrograd" / "engine.py").write_text(engine)
    (submission / "train.py").write_text("from micrograd.engine import Value\n\n\ndef train_step" + train)
    report = grade(submission, Options(timeout=10.0))
    assert report.diagnoses == ()
    assert report.score == report.max_score


def test_a_local_folder_named_like_a_library_does_not_let_the_library_in(tmp_path, mode):
    submission = tmp_path / "submission"
    (submission / "sympy").mkdir(parents=True)
    (submission / "sympy" / "notes.py").write_text("# nothing here\n")
    (submission / "work.py").write_text("try:\n    import sympy\nexcept Exception:\n    pass\n" + SOLUTION)
    report = grade(submission, Options(timeout=10.0))
    assert_forbidden(report)


def test_introspection_an_honest_submission_uses_still_works(tmp_path, mode):
    source = (
        "import collections, dataclasses, functools, inspect, traceback, typing\n"
        "Point = collections.namedtuple('Point', 'x y')\n"
        "T = typing.TypeVar('T')\n\n\n"
        "@dataclasses.dataclass\nclass Step:\n    lr: float = 0.1\n\n\n"
        "@functools.lru_cache\ndef twice(x):\n    return 2 * x\n\n\n"
        "assert list(inspect.signature(twice.__wrapped__).parameters) == ['x']\n"
        "try:\n    1 / 0\nexcept ZeroDivisionError:\n    traceback.print_exc()\n"
        "traceback.print_stack()\n"  # the harness's frames too: printing them reads no grader file
        "breakpoint()\n"
        + SOLUTION
    )
    report = run(tmp_path, source)
    assert report.diagnoses == ()
    assert report.score == report.max_score
    assert "ZeroDivisionError" in report.output
    assert 'File "<loading>"' in report.output


MUL = Case(exprs=((("leaf", "a"), ("leaf", "b"), ("mul", 0, 1)),), inputs=(("a", 2.0), ("b", 3.0)))


def test_close_calls_a_non_finite_value_close_only_to_itself():
    inf, nan = math.inf, math.nan
    assert not judge.close(inf, 3.0) and not judge.close(-inf, 3.0) and not judge.close(nan, 3.0)
    assert not judge.close(1e308, inf) and not judge.close(inf, -inf) and not judge.close(3.0, nan)
    assert judge.close(inf, inf) and judge.close(-inf, -inf)
    assert judge.close(3.0, 3.0 + 1e-9) and not judge.close(3.0, 3.1)


def judged(reply: dict):
    """``MUL`` judged on a reply written by hand, as the grading process judges the child's."""
    plan = plan_op(MUL, "mul")
    return judge.judge_op(MUL, reply, plan, judge.Tolerance())


# The probes of a * b at a = 2, b = 3: a nudged up and down by its step, then b by its step.
STEPS = {position: h for _, position, h in plan_op(MUL, "mul").probes}
PROBES = [(2.0 + STEPS[0]) * 3.0, (2.0 - STEPS[0]) * 3.0, 2.0 * (3.0 + STEPS[1]), 2.0 * (3.0 - STEPS[1])]


def test_a_reply_of_infinities_fails_its_case():
    line = (b'{"id": 3, "data": [Infinity, Infinity, Infinity], "grads": [Infinity, Infinity, Infinity],'
            b' "probes": [Infinity, Infinity, Infinity, -Infinity]}')
    verdict = judged(parse_reply(line))
    assert not verdict.passed("both")
    assert not verdict.forward_ok and not verdict.grads_ok and not verdict.fd_ok
    json.dumps(verdict.actual, allow_nan=False)  # what a report would show is plain JSON


def test_the_right_reply_passes():
    """The hand-written replies below differ from this one only where they are hostile."""
    verdict = judged({"data": [2.0, 3.0, 6.0], "grads": [3.0, 2.0, 1.0], "probes": PROBES})
    assert verdict.passed("both") and verdict.fd_ok


@pytest.mark.parametrize("probes", [
    [6.0, 6.0, 6.0, 6.0],
    [1e308, -1e308, 6.0, "x"],
    [float("inf"), 6.0, 6.0, 6.0],
])
def test_hostile_probes_fail_the_finite_difference_oracle_without_an_exception(probes):
    verdict = judged({"data": [2.0, 3.0, 6.0], "grads": [3.0, 2.0, 1.0], "probes": probes})
    assert verdict.passed("both")  # the values themselves are right
    assert not verdict.fd_ok


@pytest.mark.parametrize("reply", [
    {"data": [2.0, 3.0, {"invalid": [[["deep"]]]}], "grads": [True, 2.0, 1.0], "probes": PROBES},
    {"data": [2.0, 3.0, 6.0], "grads": [3.0, 10 ** 400, 1.0], "probes": PROBES},
    {"error": {"type": ["x"], "message": {"a": 1}, "line": 1e9, "file": 3, "phase": None}},
    {"error": "no"},
])
def test_hostile_numbers_fail_the_case_without_an_exception(reply):
    verdict = judged(reply)
    assert not verdict.passed("both")
    json.dumps([verdict.actual, verdict.actual_data, verdict.error], allow_nan=False)
    if verdict.error is not None:
        assert all(isinstance(verdict.error[k], str) for k in ("type", "message", "phase"))
        assert verdict.error["line"] is None and verdict.error["file"] is None


def test_forged_training_parameters_fail_without_an_overflow():
    case = TrainCase(lr=0.05, steps=2)
    weights = [0.1] * 41
    xs, ys = [[1.0, 2.0, 3.0]], [1.0]
    reply = {"losses": [1.0, 1.0], "params": [[1e200] * 41, [1e200] * 41]}  # the second loss is judged on these
    verdict = training.judge_train(case, weights, xs, ys, reply, judge.Tolerance())
    assert not verdict.passed("both")


def test_a_deeply_nested_reply_is_unreadable_not_a_recursion_error():
    assert parse_reply(b"[" * 200_000) is None
    assert parse_reply(b'{"a": ' * 100_000 + b"1" + b"}" * 100_000) is None
    assert parse_reply(b'{"id": 4, "grads": [[1.0], {"invalid": "nan"}], "note": "[[[[[[[[[["}') == {
        "id": 4, "grads": [[1.0], {"invalid": "nan"}], "note": "[[[[[[[[[["}


def test_replies_saying_the_same_are_read_once_and_ids_are_read_as_json_reads_them():
    first = read_reply(b'{"id": 7, "data": [1.0], "note": "x"}')
    again = read_reply(b'{"id": 9, "data": [1.0], "note": "x"}')
    assert first == (7, {"data": [1.0], "note": "x"}) and again[0] == 9 and again[1] is first[1]
    assert read_reply(b'{"id": 7, "data": [2.0]}')[1] is not first[1]
    # a repeated id: the last one counts, as json.loads has it
    assert read_reply(b'{"id": 7, "data": [1.0], "id": 8}')[0] == 8
    # not the harness's layout: read whole
    assert read_reply(b'{"data": [1.0], "id": 5}') == (5, {"data": [1.0], "id": 5})
    assert read_reply(b'{"id": 5, ' + b"[" * 200_000) == (None, None)
    assert read_reply(b"[1, 2]") == (None, None)


def test_a_verdict_reached_before_is_a_copy_and_only_for_the_same_request_reply_and_context():
    plan = plan_op(MUL, "mul")
    right = read_reply(b'{"id": 1, "data": [2.0, 3.0, 6.0], "grads": [3.0, 2.0, 1.0], "probes": %s}'
                       % json.dumps(PROBES).encode())[1]
    wrong = read_reply(b'{"id": 2, "data": [2.0, 3.0, 6.0], "grads": [3.0, 3.0, 1.0], "probes": %s}'
                       % json.dumps(PROBES).encode())[1]
    calls = []

    def judge_counted(reply):
        calls.append(reply)
        return judge.judge_op(MUL, reply, plan, judge.Tolerance())

    first = judge.judged(plan.request, right, judge_counted, ())
    again = judge.judged(plan.request, right, judge_counted, ())
    assert len(calls) == 1 and again == first and again is not first
    again.check = "changed"
    assert judge.judged(plan.request, right, judge_counted, ()).check is None
    assert not judge.judged(plan.request, wrong, judge_counted, ()).passed("both") and first.passed("both")
    judge.judged(plan.request, right, judge_counted, (judge.Tolerance(1e-3, 1e-3),))
    assert len(calls) == 3


def test_computed_attributes_names_what_a_class_computes_instead_of_storing():
    namespace: dict = {}
    exec(attack("computed_engine"), namespace)
    computed = {}
    for variant in ("property", "descriptor", "getattribute", "getattr"):
        exec(attack(f"computed_{variant}"), namespace)
        computed[variant] = reading.computed_attributes(namespace["Value"])
    assert computed == {"property": ["grad"], "descriptor": ["grad"], "getattribute": ["data", "grad"],
                        "getattr": ["data", "grad"]}

    class Slotted:
        __slots__ = ("data", "grad")

    class Plain:
        grad = 0.0

    class DataProperty(Plain):
        data = property(lambda self: 1.0)

    assert reading.computed_attributes(Slotted) == []
    assert reading.computed_attributes(Plain) == []
    assert reading.computed_attributes(DataProperty) == ["data"]


def test_stored_reads_without_running_student_code():
    namespace: dict = {}
    exec(attack("computed_engine") + attack("computed_getattribute"), namespace)
    node = namespace["Value"](2.0)
    node.grad = 5.0
    assert reading.stored(node, "grad") == 5.0 and reading.stored(node, "data") == 2.0

    class Slotted:
        __slots__ = ("data", "grad")

        def __getattribute__(self, name):
            raise AssertionError("student code ran")

    slotted = Slotted()
    object.__setattr__(slotted, "grad", 7.0)
    assert reading.stored(slotted, "grad") == 7.0
    with pytest.raises(AttributeError):
        reading.stored(slotted, "data")
    # back to the first class, after others were read: each class is read its own way, whichever came last
    assert reading.stored(node, "grad") == 5.0 and reading.stored(slotted, "grad") == 7.0
    exec(attack("computed_property"), namespace)
    with pytest.raises(AttributeError):
        reading.stored(namespace["Value"](1.0), "grad")


class Lying(float):
    """A float that says another number than the one it stores, each time it is converted or compared."""

    def __float__(self):
        return 123.0

    def __repr__(self):
        return "123.0"

    __eq__ = __sub__ = __add__ = __mul__ = lambda self, other: 123.0

    @property
    def __class__(self):
        return float


class LyingInt(int):
    def __float__(self):
        return 123.0

    __index__ = __float__


def test_a_number_is_read_for_what_it_stores_not_what_its_methods_say():
    assert reading.number(Lying(2.0)) == 2.0 and type(reading.number(Lying(2.0))) is float
    assert reading.number(LyingInt(3)) == 3.0
    assert reading.number(Lying(math.inf)) == {"invalid": "inf"}
    assert reading.number(True) == {"invalid": "bool"}


def test_a_grad_that_converts_to_another_number_is_read_as_stored(tmp_path, mode):
    """Every gradient and value is stored as a float whose ``__float__`` says 123.0: the grader reads the
    stored numbers, so the (otherwise right) engine gets every point of its own."""
    backward = "        for node in reversed(topo):\n            node._backward()\n"
    lying = SOLUTION.replace("class Value", "class Lying(float):\n    def __float__(self):\n        return 123.0\n\n\n"
                             "class Value", 1)
    lying = lying.replace(backward, backward + "        for node in topo:\n"
                          "            node.grad, node.data = Lying(node.grad), Lying(node.data)\n")
    assert lying.count("Lying(node.grad)") == 1
    report = run(tmp_path, lying)
    scores = report.target_scores()
    assert all(scores[target][0] == scores[target][1] for target in OPS), report.diagnoses
