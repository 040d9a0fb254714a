"""Modules, optimizers and training functions of real course assignments, graded part by part as a human grades them.

The corpus (``tests/assignments/``): the tutorial's ``Module.parameters``, ``Neuron``, ``Layer`` and ``MLP``
under ``tests/courses/tutorial-modules.toml``, of the learners who deleted the ``# Solution N`` cells (a
notebook that keeps them is graded once cells are picked, by another part of micrograde); the homework's
``Linear``, ``ReLU``, ``CrossEntropyLoss``, ``SGD.step``, ``SGD.zero_grad`` and ``train_one_epoch`` under
``tests/courses/dl-course-nn.toml``. Learner-style code of our own, not shaped like the corpus:
``tests/coursework/`` with its verdicts in ``expected.toml``. A part said right gets every point and no
diagnosis; a part said to inherit another's bug too (the bug is charged once, where it is); a wrong part
exactly the human's code, at the human's file, cell and line.
"""

from __future__ import annotations

import functools
import tomllib
from pathlib import Path

import pytest
from helpers import ROOT

from grader.exercise.config import load
from grader.grade import Options, grade

COURSES = ROOT / "tests" / "courses"
ASSIGNMENTS = ROOT / "tests" / "assignments"
COURSEWORK = ROOT / "tests" / "coursework"
EXPECTED = tomllib.loads((COURSEWORK / "expected.toml").read_text())


@functools.cache
def report(path: Path, course: str) -> dict:
    return grade(path, Options(config=load(COURSES / course))).to_json()


def assert_part(found: dict, target: str, verdict: object, where: str) -> None:
    """The human's verdict of one part: right (or right in itself), or exactly their code at their line."""
    score = found["targets"][target]
    diagnoses = [d for d in found["diagnoses"] if d["target"] == target]
    if verdict == "right" or verdict == "full" or (isinstance(verdict, dict) and "inherits" in verdict):
        assert (score["score"], diagnoses) == (score["max_score"], []), f"{where}: {target} {diagnoses}"
        return
    assert score["score"] < score["max_score"], f"{where}: {target} kept every point"
    assert [d["code"] for d in diagnoses] == [verdict["codes"][0] if "codes" in verdict else verdict["code"]], \
        f"{where}: {target} {diagnoses}"
    diagnosis = diagnoses[0]
    assert diagnosis["line"] == verdict["line"], f"{where}: {target} {diagnosis}"
    assert diagnosis.get("cell") == verdict.get("cell"), f"{where}: {target} {diagnosis}"
    if "file" in verdict:
        assert diagnosis["file"] == verdict["file"], f"{where}: {target} {diagnosis}"


def corpus_parts(assignment: str, parts: tuple[str, ...], names: tuple[str, ...]) -> list:
    table = tomllib.loads((ASSIGNMENTS / assignment / "verdicts.toml").read_text())["submissions"]
    return [pytest.param(name, part, table[name], id=f"{name}-{part}") for name in names for part in parts]


TUTORIAL_PARTS = ("Module.parameters", "Neuron", "Layer", "MLP")
DELETED_SOLUTIONS = ("deleted_solutions", "neuron_no_bias", "layer_nested_params", "mlp_comprehension")


@pytest.mark.parametrize(("name", "part", "entry"), corpus_parts("tutorial_deep", TUTORIAL_PARTS, DELETED_SOLUTIONS))
def test_the_tutorials_modules_get_the_human_graders_verdict(name, part, entry):
    found = report(ASSIGNMENTS / "tutorial_deep" / entry["path"], "tutorial-modules.toml")
    assert_part(found, part, entry["parts"][part], name)


HOMEWORK_PARTS = ("Linear", "ReLU", "CrossEntropyLoss", "SGD.step", "SGD.zero_grad", "train_one_epoch")
HOMEWORK = ("blank", "solution", "clutter", "sgd_sign", "no_zero_grad", "relu_bug", "ce_no_max", "linear_order",
            "venv_committed", "tensor_indent")  # a committed venv/ left out; a Tensor that does not compile apart


@pytest.mark.parametrize(("name", "part", "entry"), corpus_parts("dl_course_hw1", HOMEWORK_PARTS, HOMEWORK))
def test_the_homeworks_nn_optim_and_training_get_the_human_graders_verdict(name, part, entry):
    # the whole course: its Value ops are graded, so a module right through a bug of theirs is charged to the op
    found = report(ASSIGNMENTS / "dl_course_hw1" / entry["path"], "dl-course-hw1.toml")
    assert_part(found, part, entry["parts"][part], name)


def written(name: str, tmp: Path) -> Path:
    """The submission ``name`` of ``expected.toml``: its file, or its base with its bug written in."""
    entry = EXPECTED[name]
    if "path" in entry:
        return COURSEWORK / entry["path"]
    source = (COURSEWORK / entry["base"]).read_text()
    for old, new in entry["replace"]:
        assert source.count(old) == 1, (name, old)
        source = source.replace(old, new)
    path = tmp / f"{name}.py"
    path.write_text(source)
    return path


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_learner_style_coursework_gets_the_human_graders_verdict(name, tmp_path):
    entry = EXPECTED[name]
    found = report(written(name, tmp_path), entry["course"])
    targets = list(found["targets"])
    said = ("path", "base", "replace", "course", "why")
    assert sorted(targets) == sorted(k for k in entry if k not in said), "every target is said"
    for target in targets:
        assert_part(found, target, entry[target], name)
    assert [d for d in found["diagnoses"] if d["target"] == "submission"] == []


def inherited_targets(path: Path, course: str, monkeypatch) -> set[str]:
    """The targets some of whose cases came out right only with the grader's Value (or stand-in parts) in the
    learner's place: wrong on the learner's own, through another part's bug."""
    import grader.judging.judge
    import grader.judging.kinds as kinds

    monkeypatch.setattr(grader.judging.judge, "_JUDGED", {})  # every reply judged afresh, none taken as seen
    found = set()
    judge = kinds.judge_module

    def watched(case, reply, tolerance):
        verdict = judge(case, reply, tolerance)
        if "inherited" in verdict.faults:
            found.add(case.part)
        return verdict

    monkeypatch.setattr(kinds, "judge_module", watched)
    grade(path, Options(config=load(COURSES / course)))
    return found


@pytest.mark.parametrize(("path", "course", "through"), [
    (ASSIGNMENTS / "dl_course_hw1" / "solution", "dl-course-nn.toml", set()),
    (ASSIGNMENTS / "dl_course_hw1" / "relu_bug", "dl-course-nn.toml", {"ReLU"}),
    (ASSIGNMENTS / "tutorial_deep" / "deleted_solutions.ipynb", "tutorial-modules.toml", set()),
    (ASSIGNMENTS / "tutorial_deep" / "neuron_no_bias.ipynb", "tutorial-modules.toml", {"Layer", "MLP"}),
    (ASSIGNMENTS / "tutorial_deep" / "layer_nested_params.ipynb", "tutorial-modules.toml", {"MLP"}),
    (COURSEWORK / "hw_numpy.py", "dl-course-nn.toml", set()),
    (COURSEWORK / "dataclass_generators.py", "tutorial-modules.toml", set()),
    ("mul_wrong_grad", "tutorial-modules.toml", {"Neuron", "Layer", "MLP"}),
])
def test_a_right_module_is_right_on_the_learners_own_value(path, course, through, monkeypatch, tmp_path):
    """Right code is right as the learner runs it; only a part wrong through another's bug is right only on the
    grader's Value or stand-in parts."""
    path = written(path, tmp_path) if isinstance(path, str) else path
    assert inherited_targets(path, course, monkeypatch) == through
