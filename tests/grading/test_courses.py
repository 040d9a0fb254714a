"""Course configurations: other ops, other targets, hidden checks, the scaffold."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import nbformat
import pytest
from helpers import CORPUS, ROOT, micrograde
from recipes import run_recipe, section

import reference
from grader.exercise import config as course_config
from grader.exercise.checks import checks_for
from grader.exercise.expr import evaluate, render
from grader.exercise.kinds import ROLES
from grader.exercise.ops import BUILT_IN
from grader.exercise.targets import Exercise
from grader.judging.judge import Tolerance, judge_op
from grader.judging.plan import plan_op
from grader.staff.scaffold import scaffold_files

COURSES = Path(__file__).parents[1] / "courses"
KARPATHY = Path(__file__).parents[1] / "realstyle" / "karpathy_engine.py"  # karpathy/micrograd's engine and nn
SOLUTION = (CORPUS / "solution.py").read_text()

# The ops beyond the classic four, as a student writes them in a micrograd-style Value.
MORE_METHODS = '''
    def exp(self):
        e = math.exp(self.data)
        out = Value(e, (self,), "exp")

        def _backward():
            self.grad += e * out.grad

        out._backward = _backward
        return out

    def log(self):
        out = Value(math.log(self.data), (self,), "log")

        def _backward():
            self.grad += out.grad / self.data

        out._backward = _backward
        return out

    def sigmoid(self):
        s = 1 / (1 + math.exp(-self.data))
        out = Value(s, (self,), "sigmoid")

        def _backward():
            self.grad += s * (1 - s) * out.grad

        out._backward = _backward
        return out

    def relu(self):
        out = Value(max(0.0, self.data), (self,), "relu")

        def _backward():
            self.grad += (self.data > 0) * out.grad

        out._backward = _backward
        return out

    def __neg__(self):
        out = Value(-self.data, (self,), "neg")

        def _backward():
            self.grad += -out.grad

        out._backward = _backward
        return out

    def __sub__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data - other.data, (self, other), "-")

        def _backward():
            self.grad += out.grad
            other.grad += -out.grad

        out._backward = _backward
        return out

    def __truediv__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data / other.data, (self, other), "/")

        def _backward():
            self.grad += out.grad / other.data
            other.grad += -self.data / other.data ** 2 * out.grad

        out._backward = _backward
        return out
'''


def every_op_solution() -> str:
    """The corpus solution with every op of the spec written directly (after its given operators,
    so these definitions are the ones the class keeps)."""
    anchor = "\n\ndef train_step("
    assert SOLUTION.count(anchor) == 1 and SOLUTION.startswith("import math") or "\nimport math\n" in SOLUTION
    return SOLUTION.replace(anchor, "\n" + MORE_METHODS.rstrip("\n") + "\n" + anchor)


def write_config(tmp_path: Path, targets: dict[str, dict], extra: str = "") -> Path:
    lines = []
    for name, table in targets.items():
        lines.append(f"[targets.{name}]")
        lines += [f"{k} = {json.dumps(v)}" for k, v in table.items()]
    path = tmp_path / "micrograde.toml"
    path.write_text("\n".join(lines) + "\n" + extra)
    return path


def grade_json(path: Path, *args: str) -> tuple[int, dict]:
    result = micrograde("grade", str(path), "--format", "json", *args)
    assert result.returncode in (0, 1), result.stderr
    return result.returncode, json.loads(result.stdout)


def codes(report: dict, target: str) -> list[str]:
    return sorted(d["code"] for d in report["diagnoses"] if d["target"] == target)


def test_every_op_has_checks_and_a_reference_rule():
    """Each op's forward rule and local derivatives agree with the reference engine on its own checks."""
    for name in BUILT_IN:
        checks = checks_for(name)
        assert [c.id.split(".")[1] for c in checks][:3] == ["forward", "local-grad", "reused-node"], name
        assert checks[-1].generated
        for check in checks:
            for case in check.cases:
                assert name in {node[0] for node in case.expr}, (check.id, render(case.expr))
                data, grads = evaluate(case.expr, case.values, reference.Value)
                plan = plan_op(case, name)
                for got, want in zip(plan.values, data):
                    assert want is None or math.isclose(got, want, rel_tol=1e-12, abs_tol=1e-12), check.id


def test_karpathy_engine_with_relu_course_gets_full_marks():
    path = KARPATHY
    status, report = grade_json(path, "--config", str(COURSES / "relu-course.toml"))
    assert status == 0 and report["diagnoses"] == [] and report["score"] == report["max_score"]
    assert list(report["targets"]) == ["add", "mul", "pow", "relu", "backward", "train_step"]
    assert report["config"]["source"].endswith("relu-course.toml") and len(report["config"]["sha256"]) == 64


def test_karpathy_engine_under_the_default_course_lacks_tanh():
    status, report = grade_json(KARPATHY)
    assert status == 1
    assert [(d["target"], d["code"]) for d in report["diagnoses"]] == [("tanh", "not-implemented")]
    assert report["targets"]["tanh"]["score"] == 0
    assert all(report["targets"][t]["score"] == report["targets"][t]["max_score"]
               for t in report["targets"] if t != "tanh")


ALL_OPS = {name: {"points": 5} for name in BUILT_IN} | {"backward": {"points": 10}}


def test_every_op_written_right_gets_full_marks(tmp_path):
    path = tmp_path / "engine.py"
    path.write_text(every_op_solution())
    status, report = grade_json(path, "--config", str(write_config(tmp_path, ALL_OPS)))
    assert report["diagnoses"] == [], report["diagnoses"]
    assert status == 0 and report["max_score"] == 5 * len(BUILT_IN) + 10


@pytest.mark.parametrize(("target", "old", "new", "code"), [
    ("exp", "self.grad += e * out.grad", "self.grad += e", "wrong-local-grad"),
    ("truediv", "other.grad += -self.data / other.data ** 2 * out.grad",
     "other.grad = -self.data / other.data ** 2 * out.grad", "grad-overwrite"),
    ("sub", "self.data - other.data", "other.data - self.data", "wrong-forward"),
    ("log", "self.grad += out.grad / self.data", "self.grad += out.grad * self.data", "wrong-local-grad"),
    ("relu", "self.grad += (self.data > 0) * out.grad",
     "self.grad += (self.data > 0) * out.grad if self.data != 0 else out.grad / self.data", "relu-at-zero"),
    ("sigmoid", "self.grad += s * (1 - s) * out.grad", "self.grad += s * out.grad", "wrong-local-grad"),
    ("neg", "self.grad += -out.grad", "self.grad = -out.grad", "grad-overwrite"),
])
def test_a_bug_in_one_more_op_costs_only_that_op(tmp_path, target, old, new, code):
    source = every_op_solution()
    assert source.count(old) == 1
    path = tmp_path / "engine.py"
    path.write_text(source.replace(old, new))
    _, report = grade_json(path, "--config", str(write_config(tmp_path, ALL_OPS)))
    assert {d["target"] for d in report["diagnoses"]} == {target}, report["diagnoses"]
    assert codes(report, target) == [code]
    lost = [t for t, s in report["targets"].items() if s["score"] < s["max_score"]]
    assert lost == [target]


def test_exp_and_truediv_course_catches_a_bug_in_each(tmp_path):
    config = write_config(tmp_path, {"add": {"points": 10}, "exp": {"points": 20}, "truediv": {"points": 20},
                                     "backward": {"points": 25}, "train_step": {"points": 25}})
    source = every_op_solution().replace("self.grad += e * out.grad", "self.grad += out.grad").replace(
        "self.grad += out.grad / other.data", "self.grad = out.grad / other.data")
    path = tmp_path / "engine.py"
    path.write_text(source)
    status, report = grade_json(path, "--config", str(config))
    assert status == 1
    assert codes(report, "exp") == ["wrong-local-grad"] and codes(report, "truediv") == ["grad-overwrite"]
    assert list(report["targets"]) == ["add", "exp", "truediv", "backward", "train_step"]
    assert report["targets"]["add"]["score"] == 10 and report["max_score"] == 100


def test_hidden_checks_count_for_everyone_and_only_staff_see_why(tmp_path):
    """A bug only hidden checks catch costs the same points in the student's report as in the staff's; the
    student's says which hidden checks failed, never why (no message, diagnosis or counterexample)."""
    config = write_config(tmp_path, {"mul": {"points": 50, "hidden": ["generated", "reused-node"]},
                                     "backward": {"points": 50}})
    path = tmp_path / "engine.py"
    path.write_text(SOLUTION.replace("self.grad += other.data * out.grad", "self.grad = other.data * out.grad"))
    status, student = grade_json(path, "--config", str(config))
    _, staff = grade_json(path, "--config", str(config), "--audience", "staff")
    assert status == 1 and (student["score"], student["max_score"]) == (staff["score"], staff["max_score"]) == (80, 100)
    assert student["targets"] == staff["targets"]
    hidden = {c["id"]: c for c in student["checks"] if c.get("hidden")}
    assert set(hidden) == {c["id"] for c in staff["checks"] if c.get("hidden")} == {"mul.generated",
                                                                                     "mul.reused-node"}
    assert {c["status"] for c in hidden.values()} == {"failed"}
    assert all(c["counterexample"] is None and "hidden until" in c["message"] for c in hidden.values())
    assert student["diagnoses"] == [] and "grad-overwrite" not in json.dumps(student)
    assert codes(staff, "mul") == ["grad-overwrite"]
    assert student["audience"] == "student" and staff["audience"] == "staff"


@pytest.mark.parametrize(("text", "message"), [
    ("[targets.softmax]\npoints = 10\n", "[targets.softmax]: unknown target 'softmax'"),
    ("[targets.add]\npoints = -1\n", "[targets.add] points: expected a positive number"),
    ("[targets.add]\n", "[targets.add] points: missing"),
    ("[targets.add]\npoints = 10\nhidden = ['nothing']\n", "[targets.add] hidden: no check 'nothing'"),
    ("[limits]\nexamples = 0\n", "[limits] examples"),
    ("[limits]\nspeed = 3\n", "[limits]: unknown key 'speed'"),
    ("[scaffold]\nclass = 'not a name'\n", "[scaffold] class"),
    ("targets = 3\n", "[targets] must list at least one target"),
    ("[targets\n", "not valid TOML"),
    ("[policy]\nallowed_modules = 'numpy'\n", "[policy] allowed_modules: expected a list of module names"),
    ("[policy]\nallowed_modules = ['torch']\n", "[policy] allowed_modules: torch cannot be allowed"),
    ("[policy]\nallowed = ['numpy']\n", "[policy]: unknown key 'allowed'"),
])
def test_config_errors_name_the_key(tmp_path, text, message):
    config = tmp_path / "micrograde.toml"
    config.write_text(text)
    result = micrograde("grade", str(CORPUS / "solution.py"), "--config", str(config))
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and message in result.stderr, result.stderr


def test_config_from_pyproject_and_its_hash(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        "[project]\nname = 'course'\n\n[tool.micrograde.targets.add]\npoints = 40\n")
    loaded = course_config.load(tmp_path / "pyproject.toml")
    assert [t.name for t in loaded.targets] == ["add"] and loaded.targets[0].points == 40
    same = tmp_path / "micrograde.toml"
    same.write_text("# the same course, spelled differently\n[targets]\nadd = { points = 40.0 }\n")
    assert course_config.load(same).sha256 == loaded.sha256 != course_config.default().sha256
    (tmp_path / "other.toml").write_text("[targets.add]\npoints = 41\n")
    assert course_config.load(tmp_path / "other.toml").sha256 != loaded.sha256


def test_allowing_no_module_means_what_the_default_means(tmp_path):
    """``[policy] allowed_modules``: an empty list is the default, and a list of modules a course of its own."""
    (tmp_path / "none.toml").write_text("[policy]\nallowed_modules = []\n")
    (tmp_path / "numpy.toml").write_text("[policy]\nallowed_modules = ['numpy', 'numpy']\n")
    assert course_config.load(tmp_path / "none.toml").sha256 == course_config.default().sha256
    allowing = course_config.load(tmp_path / "numpy.toml")
    assert allowing.allowed_modules == ("numpy",) and allowing.sha256 != course_config.default().sha256


def test_bundled_exercises_are_the_default_scaffold():
    for name, text in scaffold_files(Exercise(course_config.default())).items():
        assert (ROOT / "exercises" / name).read_text(encoding="utf-8") == text, name


@pytest.mark.parametrize("name", sorted(p.name for p in COURSES.glob("*.toml")))
def test_the_scaffold_writes_a_stub_for_every_kind_of_target(tmp_path, name):
    """Every course of the tests, scaffolded: a stub for each part its targets grade (a Tensor's ops, modules,
    optimizers, training loops, hand-derived gradients, numerical estimates, the class's own methods), each
    not-implemented at its stub as written, with nothing left to say on stderr."""
    course = COURSES / name
    result = micrograde("scaffold", str(tmp_path / "course"), "--config", str(course))
    exercise = Exercise(course_config.load(course))
    handed_out = [t.name for t in exercise.targets if t.given and t.kind.role not in ROLES]
    said = (f"micrograde: note: no stub is written for {', '.join(handed_out)}: hand out the course's own files "
            "for them, or adopt its notebook (micrograde scaffold DIR --adopt NOTEBOOK)\n") if handed_out else ""
    assert result.returncode == 0 and result.stderr == said, result.stderr
    _, report = grade_json(tmp_path / "course", "--config", str(course))
    stubs = {d["target"] for d in report["diagnoses"] if d["code"] == "not-implemented"}
    assert stubs == {t.name for t in exercise.targets if not t.given} | set(handed_out), report["diagnoses"]
    assert report["score"] == 0


def test_scaffold_round_trip(tmp_path):
    """A course's scaffold: it imports, every graded target is not-implemented, the notebook is valid,
    and with the stubs written it gets full marks."""
    config = write_config(tmp_path, {"add": {"points": 10}, "mul": {"points": 10}, "relu": {"points": 10},
                                     "exp": {"points": 10}, "backward": {"points": 30},
                                     "train_step": {"points": 30}},
                          '[scaffold]\nclass = "Scalar"\ntrain_function = "fit_step"\n')
    out = tmp_path / "student"
    result = micrograde("scaffold", str(out), "--config", str(config))
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in out.iterdir()) == ["engine.py", "micrograd.ipynb", "micrograde.toml", "train.py"]
    assert course_config.load(out / "micrograde.toml").sha256 == course_config.load(config).sha256
    notebook = nbformat.read(out / "micrograd.ipynb", as_version=4)
    nbformat.validate(notebook)
    sha256 = course_config.load(config).sha256  # the course the notebook carries, named by its grading cell
    assert f'check(Scalar, fit_step, course="sha256:{sha256}")' in notebook.cells[-1].source
    assert notebook.metadata["micrograde"]["course"] == {"sha256": sha256,
                                                         "toml": (out / "micrograde.toml").read_text()}
    engine = (out / "engine.py").read_text()
    assert "class Scalar:" in engine and "import math" in engine and "def tanh" not in engine
    _, report = grade_json(out, "--config", str(config))
    assert sorted((d["target"], d["code"]) for d in report["diagnoses"]) == sorted(
        (t, "not-implemented") for t in ("add", "mul", "relu", "exp", "backward", "train_step"))
    written = every_op_solution().replace("class Value", "class Scalar").replace("Value(", "Scalar(").replace(
        "isinstance(other, Value)", "isinstance(other, Scalar)").replace("def train_step", "def fit_step")
    (out / "engine.py").write_text(written)
    (out / "train.py").unlink()
    (out / "micrograd.ipynb").unlink()
    status, report = grade_json(out, "--config", str(config))
    assert status == 0 and report["diagnoses"] == [], report["diagnoses"]


def test_the_docs_course_and_its_scaffold(tmp_path):
    """The course configuration the docs show (relu, division, no tanh), scaffolded by the docs' command."""
    example = re.findall(r"```toml\n(.*?)```", section("docs/staff.md", "## The course configuration"), re.S)[0]
    (tmp_path / "micrograde.toml").write_text(example, encoding="utf-8")
    result = run_recipe("docs/staff.md", "## The course configuration", tmp_path)
    assert result.returncode == 0, result.stderr
    engine = (tmp_path / "student-files" / "engine.py").read_text(encoding="utf-8")
    assert "def relu" in engine and "def __truediv__" in engine and "def tanh" not in engine


def test_judging_an_op_from_raw_replies():
    """judge_op on replies written by hand: right, a wrong gradient, a wrong forward value, non-numbers."""
    case = checks_for("mul")[1].cases[1]  # ((a * b) * c)
    assert render(case.expr) == "((a * b) * c)"
    plan = plan_op(case, "mul")
    data, grads = evaluate(case.expr, case.values, reference.Value)
    probes = []
    for i, position, h in plan.probes:
        node = case.expr[i]
        xs = [plan.values[j] for j in node[1:3]]
        for shifted in (xs[position] + h, xs[position] - h):
            ys = list(xs)
            ys[position] = shifted
            probes.append(ys[0] * ys[1])
    right = {"data": data, "grads": grads, "probes": probes}
    tolerance = Tolerance()
    verdict = judge_op(case, right, plan, tolerance)
    assert verdict.passed("both") and verdict.fd_ok
    wrong_grad = {**right, "grads": [g * 2 if g is not None else None for g in grads]}
    verdict = judge_op(case, wrong_grad, plan, tolerance)
    assert verdict.forward_ok and not verdict.grads_ok and verdict.oracle == "both"
    wrong_data = {**right, "data": [*data[:-1], data[-1] + 1]}
    assert not judge_op(case, wrong_data, plan, tolerance).forward_ok
    invalid = {**right, "grads": [{"invalid": "str"}] * len(grads)}
    assert not judge_op(case, invalid, plan, tolerance).grads_ok
    assert judge_op(case, {**right, "probes": []}, plan, tolerance).error["type"] == "MalformedReply"


def test_course_api(tmp_path):
    """What grader/__init__.py promises a course's own scripts."""
    import grader

    options = grader.Options(config=grader.load_config(COURSES / "relu-course.toml"), audience="staff")
    first = grader.grade_file(KARPATHY, options)
    again = grader.grade_file(KARPATHY, options)
    assert first.score == again.score == 100.0 and first.targets == again.targets
    assert grader.load_config(None).sha256 == course_config.default().sha256


def test_a_course_repository_is_graded_by_its_own_configuration(tmp_path):
    """A micrograde.toml where micrograde runs is the course's, with no --config."""
    (tmp_path / "micrograde.toml").write_text((COURSES / "relu-course.toml").read_text())
    (tmp_path / "engine.py").write_text((KARPATHY).read_text())
    result = micrograde("grade", "engine.py", "--format", "json", cwd=tmp_path)
    report = json.loads(result.stdout)
    assert result.returncode == 0 and "relu" in report["targets"] and report["config"]["source"] == "micrograde.toml"


def test_every_counterexample_is_written_with_the_courses_own_ops():
    """A course without tanh is never shown ``(a / b).tanh()``: every hand-picked case of every target of the
    docs' course uses only ops its value class has (those it grades and those its scaffold gives), and every
    check keeps cases; the classic exercise's cases are untouched."""
    from grader.exercise.ops import available

    example = re.findall(r"```toml\n(.*?)```", section("docs/staff.md", "## The course configuration"), re.S)[0]
    import tomllib

    exercise = Exercise(course_config.parse(tomllib.loads(example), "docs"))
    have = available(t.name for t in exercise.op_targets)
    assert "tanh" not in have and {"add", "mul", "pow", "relu", "truediv", "neg"} <= have
    for target in exercise.targets:
        for check in target.checks:
            assert check.generated or check.cases, check.id
            for case in check.cases:
                kinds = {node[0] for expr in getattr(case, "exprs", ()) for node in expr} - {"leaf", "const"}
                assert kinds <= have, (check.id, case.label)
    local = next(c for c in exercise.target("truediv").checks if c.id == "truediv.local-grad")
    assert "(a / b).tanh()" not in [c.label for c in local.cases] and "(-(a / b))" in [c.label for c in local.cases]
    classic = Exercise(course_config.default())
    assert all(check.cases == tuple(checks_for(t.name)[k].cases) for t in classic.targets
               for k, check in enumerate(t.checks))
