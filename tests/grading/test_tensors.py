"""The tensor kind of target: an op of a course's Tensor whose entries are Values.

Its reference (the reference engine applied entry by entry) against numpy; every configuration mistake one line
naming its key; the university homework's Tensor parts (``tests/assignments/dl_course_hw1/``) as the human grader
grades them, under ``tests/courses/dl-course-tensor.toml``; learner-style Tensors not shaped like it
(``tests/tensors/``); what the learner's ops return never trusted; numpy missing where micrograde runs.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import tomllib

import numpy as np
import pytest
from helpers import ROOT, micrograde
from recipes import section

from grader.errors import ConfigError
from grader.exercise import shapes
from grader.exercise.config import as_toml, load, parse, tables
from grader.exercise.tensorcases import checks
from grader.exercise.tensors import TENSOR_OPS, TensorCase, size_of
from grader.grade import Options, grade
from grader.judging.judge import Tolerance
from grader.judging.tensors import STEP, direction, expected, judge_tensor

COURSE = ROOT / "tests" / "courses" / "dl-course-tensor.toml"
AUTOGRAD = ROOT / "tests" / "courses" / "numpy-autograd.toml"
HOMEWORK = ROOT / "tests" / "assignments" / "dl_course_hw1"
VERDICTS = tomllib.loads((HOMEWORK / "verdicts.toml").read_text())["submissions"]
LEARNERS = ROOT / "tests" / "tensors"
EXPECTED = tomllib.loads((LEARNERS / "expected.toml").read_text())
PARTS = {"Tensor.radd": "tensor_radd", "Tensor.mul": "tensor_mul", "Tensor.truediv": "tensor_truediv",
         "Tensor.exp": "tensor_exp", "Tensor.dot": "tensor_dot", "Tensor.max": "tensor_max",
         "Tensor.argmax": "tensor_argmax", "Tensor.reshape": "tensor_reshape"}
TENSOR = {"kind": "tensor", "class": "Tensor", "op": "mul", "points": 4}


@pytest.mark.parametrize("seed", range(5))
def test_the_shapes_are_numpys(seed):
    rng = np.random.default_rng(seed)
    for _ in range(200):
        a = tuple(int(n) for n in rng.integers(1, 4, rng.integers(0, 4)))
        b = tuple(int(rng.choice([1, n])) for n in a[rng.integers(0, len(a) + 1):])
        b = b if rng.random() < 0.8 else tuple(int(n) for n in rng.integers(1, 4, rng.integers(0, 4)))
        try:
            want = np.broadcast_shapes(a, b)
        except ValueError:
            want = None
        assert shapes.broadcast(a, b) == want, (a, b)
        if want is not None:
            x = np.arange(size_of(b)).reshape(b)
            spread = np.broadcast_to(x, want).ravel().tolist()
            assert [shapes.source(i, want, b) for i in range(size_of(want))] == spread
        if a:
            axis = int(rng.integers(-len(a), len(a)))
            x = np.arange(size_of(a)).reshape(a)
            assert shapes.along(a, axis) == x.sum(axis=axis).shape
            picked = np.moveaxis(x, axis, -1).reshape(-1, a[axis]).tolist()
            assert shapes.lines(a, axis) == picked
    assert shapes.matrix((2, 3), (3, 4)) == (2, 4) and shapes.matrix((3,), (3, 2)) == (2,)
    assert shapes.matrix((2, 3), (2, 3)) is None and shapes.along((2, 3), 2) is None


def numpy_result(case: TensorCase, leaves: np.ndarray) -> np.ndarray:
    """What numpy gives for the case's op at ``leaves`` (floats): the oracle of the reference."""
    given = [leaves[list(case.tensor(x).leaves)].reshape(case.tensor(x).shape) if isinstance(x, str) else x
             for x in case.operands]
    op = case.op.removeprefix("r") if case.spec.family == "reflected" else case.op
    if case.spec.family in ("elementwise", "reflected"):
        return {"add": np.add, "sub": np.subtract, "mul": np.multiply, "truediv": np.true_divide,
                "floordiv": np.floor_divide}[op](*given)
    if case.spec.family == "unary":
        return {"exp": np.exp, "log": np.log, "tanh": np.tanh, "relu": lambda x: np.maximum(x, 0)}[op](given[0])
    if case.spec.family == "matrix":
        return np.dot(*given)
    if case.spec.family == "reshape":
        return given[0].reshape(case.sizes)
    return getattr(given[0], op)(axis=case.axis)


@pytest.mark.parametrize("op", sorted(TENSOR_OPS))
def test_the_reference_entry_by_entry_is_numpys(op):
    """Every case's expected entries are numpy's, and its expected gradients the central differences of numpy's
    loss (the result's entries, each times its gradient ``g``)."""
    for check in checks("t", {"class": "T", "op": op, "dims": (1, 2, 3)}):
        for case in check.cases:
            leaves = np.array(case.leaves)
            want = expected(case)
            result = np.asarray(numpy_result(case, leaves), dtype=float)
            assert want.shape == result.shape and np.allclose(want.data, result.ravel(), rtol=1e-12), case.label
            if not case.backward:
                continue
            seed = np.array(case.seed_of(result.size))

            def loss(x: np.ndarray, seed=seed, case=case) -> float:
                return float((seed * np.asarray(numpy_result(case, x), dtype=float).ravel()).sum())

            step = 1e-6
            slopes = [(loss(leaves + step * e) - loss(leaves - step * e)) / (2 * step) for e in np.eye(leaves.size)]
            assert np.allclose(want.grads, slopes, rtol=1e-6, atol=1e-6), (case.label, want.grads, slopes)


@pytest.mark.parametrize(("change", "says"), [
    ({"op": "conv"}, 'tensor_mul] op: expected one of "add", "sub", "mul"'),
    ({"also": ["rmul", "rmul"]}, "also: expected a list of some of"),
    ({"also": "rmul"}, "also: expected a list"),
    ({"class": "2d"}, "class: expected a Python name"),
    ({"method": "a.b"}, "method: expected a Python name"),
    ({"broadcasting": "yes"}, "broadcasting: expected true or false"),
    ({"dims": [2, 4]}, "dims: expected a list of distinct whole numbers from 1 to 3"),
    ({"entries": "floats"}, 'entries: expected one of "values", "numbers"'),
    ({"class": None}, "class: missing (the course's tensor class"),
    ({"op": None}, "op: missing"),
    ({"axes": True}, "unknown key 'axes'"),
])
def test_a_wrong_tensor_target_is_one_line_naming_its_key(change, says):
    table = {k: v for k, v in {**TENSOR, **change}.items() if v is not None}
    with pytest.raises(ConfigError) as raised:
        parse({"targets": {"tensor_mul": table}}, "course.toml")
    assert says in str(raised.value) and "\n" not in str(raised.value), str(raised.value)


@pytest.mark.parametrize("course", [COURSE, AUTOGRAD, ROOT / "tests" / "courses" / "matrix-of-values.toml"])
def test_a_tensor_course_written_out_means_the_same(course):
    """As ``micrograde template`` pins a course (every value written out: lists, truth values), read back."""
    config = load(course)
    again = parse(tomllib.loads(as_toml(tables(config), "pinned")), "pinned")
    assert again.sha256 == config.sha256 and again.targets == config.targets


def test_the_staff_docs_worked_configuration_is_the_courses():
    """The configuration these tests grade the homework with is the one the staff docs give, word for word."""
    text = section("docs/staff.md", "#### `tensor`: ops of a course's Tensor")
    block = text.split("```toml\n")[1].split("```")[0]
    assert tomllib.loads(block) == tomllib.loads(COURSE.read_text())


HOMEWORK_CASES = [name for name in sorted(VERDICTS) if name != "tensor_indent"]


@pytest.mark.parametrize("name", HOMEWORK_CASES)
def test_the_homeworks_tensor_parts_get_the_human_graders_verdict(name):
    entry = VERDICTS[name]
    report = grade(HOMEWORK / entry["path"], Options(config=load(COURSE))).to_json()
    for part, target in PARTS.items():
        verdict = entry["parts"][part]
        score = report["targets"][target]
        found = [d for d in report["diagnoses"] if d["target"] == target]
        if verdict == "right":
            assert (score["score"], found) == (score["max_score"], []), (part, found)
            continue
        assert score["score"] < score["max_score"], part
        assert [(d["code"], d["file"], d["line"]) for d in found] == [
            (verdict["code"], verdict["file"], verdict["line"])], (part, found)


def test_a_tensor_class_that_does_not_compile_is_its_load_error():
    """The learner whose Tensor.exp has an indentation slip: every Tensor part scores nothing, and the report
    says the file did not load, at the line Python names (whatever it grades of the rest of the file)."""
    entry = VERDICTS["tensor_indent"]
    report = grade(HOMEWORK / entry["path"], Options(config=load(COURSE))).to_json()
    wanted = {(v["code"], v["file"], v["line"]) for part, v in entry["parts"].items() if part in PARTS}
    assert all(report["targets"][target]["score"] == 0.0 for target in PARTS.values())
    assert wanted <= {(d["code"], d["file"], d["line"]) for d in report["diagnoses"]}, report["diagnoses"]


def learner_source(entry: dict) -> str:
    source = (LEARNERS / entry["path"]).read_text()
    for old, new in entry.get("replace", []):
        assert source.count(old) == 1, old
        source = source.replace(old, new)
    return source


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_learner_style_tensors_get_a_careful_graders_verdict(name, tmp_path):
    entry = EXPECTED[name]
    path = tmp_path / entry["path"]
    path.write_text(learner_source(entry))
    report = grade(path, Options(config=load(ROOT / entry["config"]))).to_json()
    lines = path.read_text().splitlines()
    for target, score in report["targets"].items():
        found = [d for d in report["diagnoses"] if d["target"] == target]
        wanted = entry.get(target)
        if wanted is None:
            assert (score["score"], found) == (score["max_score"], []), (target, found)
            continue
        assert score["score"] < score["max_score"], target
        assert [(d["code"], d["line"]) for d in found] == [(wanted["code"], wanted["line"])], (
            target, found, lines[found[0]["line"] - 1] if found and found[0]["line"] else None)
        for phrase in wanted.get("says", []):
            assert phrase in found[0]["message"], (phrase, found[0]["message"])
    assert [d for d in report["diagnoses"] if d["target"] == "submission"] == []
    assumed = [w for w in report["warnings"] if "so it was called as" in w]  # a call style read off the methods
    assert len(assumed) == len(entry.get("warns", [])), assumed
    for phrase, warning in zip(entry.get("warns", []), assumed):
        assert warning.startswith(phrase), (phrase, warning)


def test_a_counterexample_names_its_shapes(tmp_path):
    path = tmp_path / "work.py"
    path.write_text(learner_source(EXPECTED["nd_mul_deepcopy"]))
    report = grade(path, Options(config=load(COURSE))).to_json()
    [found] = report["diagnoses"]
    example = found["counterexample"]
    assert example["expression"] == "(a * b).sum()"
    assert set(example["inputs"]) == {"a of shape (2, 1)", "b of shape (1, 3)"}
    assert "Smallest failing case: (a * b).sum() with a of shape (2, 1) = [[" in found["message"]
    assert "(checked against the reference engine applied entry by entry and finite differences)" in found["message"]


ATTACKS = ROOT / "tests" / "attacks"
# Hostile Tensors (``tests/attacks/tensor_*.src``) on a right base, the course that grades them, and what each op
# earns by what it does, whatever it offers the child: the code, and what its message says.
HOSTILE = {
    "values": ((HOMEWORK / "solution" / "micrograd" / "engine.py").read_text().split("def _as_value")[0]
               + (ATTACKS / "tensor_ops.src").read_text(), COURSE,
               {"tensor_radd": None, "tensor_mul": ("wrong-forward", ""), "tensor_truediv": ("crash", "RecursionError"),
                "tensor_exp": ("crash", "more than 1024 entries"), "tensor_dot": None,
                "tensor_max": ("crash", "more than 20000 nodes"), "tensor_argmax": ("crash", "holds no entries"),
                "tensor_reshape": ("crash", "nested more than 8 deep")}),
    "own-gradient": ((LEARNERS / "numpy_autograd.py").read_text().split('if __name__ == "__main__":')[0]
                     + (ATTACKS / "tensor_own_gradient.src").read_text(), AUTOGRAD,
                     {"tensor_add": ("crash", "more than 1024 entries"),
                      "tensor_mul": ("crash", "more than 20000 nodes"), "tensor_matmul": ("crash", "RecursionError"),
                      "tensor_relu": None, "tensor_sum": ("crash", "nested more than 8 deep"), "tensor_max": None,
                      "tensor_argmax": None, "tensor_reshape": None}),
}


def hostile_verdict(report: dict, deserved: dict) -> list[str]:
    """How ``report`` differs from what each target ``deserved``: its one code and a phrase of its message, or
    full marks."""
    wrong = []
    for target, verdict in deserved.items():
        found = [d for d in report["diagnoses"] if d["target"] == target]
        score = report["targets"][target]
        if verdict is None and (found or score["score"] != score["max_score"]):
            wrong.append(f"{target}: {found}")
        elif verdict is not None and not ([d["code"] for d in found] == [verdict[0]]
                                          and verdict[1] in found[0]["message"]):
            wrong.append(f"{target}: {found}")
    return wrong


@pytest.mark.parametrize("attack", sorted(HOSTILE))
def test_what_tensor_ops_return_is_never_trusted(tmp_path, mode, attack):
    """A result offering forged entries through ``__array__``, ``tolist``, ``__iter__`` and a lying ``shape``
    (and attacking the reply pipe from there), a million entries (a result, or a gradient), a list holding
    itself, an endless iterator, a graph deeper than a recursion and longer than the walk allows, closures that
    recurse forever: each op gets the verdict its stored result earns, and the honest ops keep their points."""
    source, course, deserved = HOSTILE[attack]
    path = tmp_path / "engine.py"
    path.write_text(source)
    result = micrograde("grade", str(path), "--config", str(course), "--format", "json", "--timeout", "20")
    assert result.returncode == 1, result.stderr
    assert hostile_verdict(json.loads(result.stdout), deserved) == []


FORGED = [{"shape": "2", "data": [1.0]}, {"shape": [2, -1], "data": []}, {"shape": [10 ** 6], "data": []},
          {"shape": [2], "data": [1.0]}, {"shape": [True, 2], "data": [1.0, 2.0]}, {"shape": [1] * 9, "data": [1.0]},
          {"shape": [3], "data": [1.0, 2.0, 3.0], "grads": [1.0]}, {"shape": [3], "data": [1.0, 2.0, 3.0]}]


@pytest.mark.parametrize("reply", FORGED)
def test_a_reply_that_cannot_be_read_fails_its_case(reply):
    """What a forged reply holds is never taken for a result: a wrong shape or count, no gradients, raises one
    of the errors that fail the case as unreadable (``grader.judging.kinds.UNREADABLE``)."""
    [case] = [c for c in checks("t", {"class": "T", "op": "exp"})[0].cases if c.result_shape == (3,)][:1]
    with pytest.raises((ValueError, TypeError)):
        judge_tensor(case, reply, Tolerance())


def test_each_oracle_catches_what_it_must():
    """A reply as the child sends it for ``a.exp()``: right; gradients twice too large (both oracles disagree);
    a forward pass twice too large with gradients that follow it (only the reference disagrees)."""
    case = checks("t", {"class": "T", "op": "exp"})[0].cases[2]
    leaves, seed = np.array(case.leaves), np.array(case.seed_of(len(case.leaves)))
    moved = [leaves + sign * STEP * np.array(direction(len(case.leaves))) for sign in (1, -1)]

    def reply(scale: float, grads_scale: float) -> dict:
        return {"shape": list(case.result_shape), "data": (scale * np.exp(leaves)).tolist(),
                "grads": (grads_scale * seed * np.exp(leaves)).tolist(), "reached": [True] * len(case.leaves),
                "probes": [(scale * np.exp(x)).tolist() for x in moved]}

    right = judge_tensor(case, reply(1.0, 1.0), Tolerance())
    assert right.passed("both") and right.fd_ok
    wrong = judge_tensor(case, reply(1.0, 2.0), Tolerance())
    assert (wrong.forward_ok, wrong.grads_ok, wrong.fd_ok, wrong.oracle) == (True, False, False, "both")
    consistent = judge_tensor(case, reply(2.0, 2.0), Tolerance())
    assert (consistent.forward_ok, consistent.grads_ok, consistent.fd_ok) == (False, False, True)


def test_a_reply_of_the_wrong_numbers_is_a_wrong_result():
    case = checks("t", {"class": "T", "op": "exp"})[0].cases[0]
    count = size_of(case.result_shape)
    for bad in (math.nan, math.inf, "1.0", None, {"invalid": "ndarray"}):
        reply = {"shape": list(case.result_shape), "data": [bad] * count, "grads": [0.0] * len(case.leaves),
                 "reached": [True] * len(case.leaves), "probes": [[0.0] * count] * 2}
        verdict = judge_tensor(case, reply, Tolerance())
        assert not verdict.forward_ok and not verdict.passed("both"), bad


NO_NUMPY = ("import sys\nclass Refuse:\n    def find_spec(self, name, path=None, target=None):\n"
            "        if name.partition('.')[0] == 'numpy':\n            raise ModuleNotFoundError(name)\n"
            "sys.meta_path.insert(0, Refuse())\nsys.modules['numpy'] = None\n"
            "import grader, grader.cli, grader.grade, grader.judging.kinds, grader.diagnosis.target, "
            "grader.exercise.kinds, grader.child.shipping\n"
            "from grader.cli import main\nsys.exit(main(sys.argv[1:]))\n")


def test_without_numpy_a_tensor_course_says_so_in_one_line(tmp_path):
    """micrograde imports without numpy and grades the classic exercise; a course with tensor targets stops
    with one line naming numpy and how to install it (exit 3: the machine, not the submission)."""
    work = tmp_path / "engine.py"
    work.write_text((ROOT / "tests" / "corpus" / "solution.py").read_text())
    classic = subprocess.run([sys.executable, "-c", NO_NUMPY, "grade", str(work)], capture_output=True, text=True,
                             cwd=tmp_path, timeout=120)
    assert classic.returncode == 0, classic.stderr
    tensor = subprocess.run([sys.executable, "-c", NO_NUMPY, "grade", str(HOMEWORK / "solution"), "--config",
                             str(COURSE)], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert tensor.returncode == 3 and tensor.stdout == "", tensor
    [line] = tensor.stderr.strip().splitlines()
    assert "need numpy, which is not installed where micrograde runs" in line
    assert "python -m pip install numpy" in line and "micrograde[tensor]" in line and "tensor_radd" in line


def test_a_handed_back_notebook_has_the_tensor_feedback_after_the_tensor_class(tmp_path):
    """The feedback of each tensor target follows the cell that defines the Tensor class, not the Value's."""
    import nbformat

    value, tensor = learner_source(EXPECTED["nd_exp_numbers"]).split('if __name__ == "__main__":')[0].split(
        "class Tensor(np.ndarray):")
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(value), nbformat.v4.new_code_cell("class Tensor(np.ndarray):" + tensor)]
    path = tmp_path / "work.ipynb"
    nbformat.write(notebook, path)
    result = micrograde("grade", str(path), "--config", str(COURSE), "--feedback", str(tmp_path / "back.ipynb"))
    assert result.returncode == 1, result.stderr
    cells = json.loads((tmp_path / "back.ipynb").read_text())["cells"]
    kinds = ["value" if "class Value" in "".join(c["source"]) else "tensor" if "class Tensor" in "".join(c["source"])
             else c.get("id", "") for c in cells]
    assert kinds[:3] == ["micrograde-summary", "value", "tensor"], kinds
    assert kinds[3:] == [f"micrograde-{target.replace('_', '-')}" for target in PARTS.values()], kinds
    assert "**detached-result**" in "".join(cells[3 + list(PARTS.values()).index("tensor_exp")]["source"])
