"""The course's own notebook and conventions, on the real assignments of ``tests/assignments/``.

Each assignment is graded under a configuration written from docs/staff.md (``tests/courses/``): Karpathy's
exercises (given ``__add__`` and ``backward``, no ``__rmul__`` asked for, the hand-derived gradient), the
step-by-step tutorial (its ``# Solution N`` cells left out, Exercise 4's ``Value`` graded as Exercise 4's cell
leaves it, its ``backward()`` convention accepted) and the university homework (its given operators). Every
part today's kinds grade gets the human grader's verdict (code, cell and line); the blank notebooks score only
their given parts, never the course's solution; every report names what was not graded.
"""

from __future__ import annotations

import json
import tomllib
from functools import cache
from pathlib import Path

import pytest
from helpers import micrograde

from grader.exercise.config import load, parse
from grader.grade import Options, grade
from grader.submission.cells import cut
from grader.submission.source import read_submission

TESTS = Path(__file__).parents[1]
ASSIGNMENTS = TESTS / "assignments"
COURSES = TESTS / "courses"
# Each assignment's course, and the targets that grade its parts (the parts today's kinds can grade).
GRADED = {
    "karpathy_exercises": ("karpathy-exercises.toml", {p: p for p in (
        "gradf", "numerical_grad", "numerical_grad2", "add", "backward", "exp", "log", "mul", "truediv", "neg",
        "radd", "softmax_nll")}),
    "tutorial_deep": ("tutorial-deep.toml", {
        "numerical_derivative": "numerical_derivative", "add_backward": "add", "mul_backward": "mul",
        "backward": "backward", **{p: p for p in ("Module.parameters", "Neuron", "Layer", "MLP")}}),
    "dl_course_hw1": ("dl-course-hw1.toml", {
        **{f"Value.{op}": op for op in ("mul", "pow", "exp", "relu", "backward")}, "Value.given": "add",
        **{f"Tensor.{op}": f"tensor_{op}"
           for op in ("radd", "mul", "truediv", "exp", "dot", "max", "argmax", "reshape")},
        **{p: p for p in ("Linear", "ReLU", "CrossEntropyLoss", "SGD.step", "SGD.zero_grad", "train_one_epoch")}}),
}
# Each course file of an assignment holds the targets of the focused course files its kinds' tests use.
PART_FILES = {"tutorial_deep": ("tutorial-numerical-derivative.toml", "tutorial-modules.toml"),
              "dl_course_hw1": ("dl-course-tensor.toml", "dl-course-nn.toml")}


def verdicts(assignment: str) -> dict:
    return tomllib.loads((ASSIGNMENTS / assignment / "verdicts.toml").read_text())


@cache
def report(assignment: str, name: str) -> dict:
    """One submission of the corpus graded under its course, as staff see it (once a session)."""
    entry = verdicts(assignment)["submissions"][name]
    course = load(COURSES / GRADED[assignment][0])
    return grade(ASSIGNMENTS / assignment / entry["path"], Options(config=course, audience="staff")).to_json()


PARTS = [(a, s, p) for a in GRADED for s in verdicts(a)["submissions"] for p in GRADED[a][1]]


@pytest.mark.parametrize(("assignment", "name", "part"), PARTS, ids=["/".join(p) for p in PARTS])
def test_every_graded_part_gets_the_human_graders_verdict(assignment, name, part):
    verdict = verdicts(assignment)["submissions"][name]["parts"][part]
    target = GRADED[assignment][1][part]
    found = report(assignment, name)
    score = found["targets"][target]
    diagnoses = [(d["code"], d.get("cell"), d["line"]) for d in found["diagnoses"] if d["target"] == target]
    if verdict != "right" and verdict.get("code") == "load-error":  # said once, of the submission
        diagnoses = [(d["code"], d.get("cell"), d["line"]) for d in found["diagnoses"] if d["code"] == "load-error"]
    if verdict == "right" or "inherits" in verdict:
        assert (score["score"], diagnoses) == (score["max_score"], []), diagnoses
        return
    assert score.get("given") or score["score"] < score["max_score"]
    assert diagnoses == [(verdict["code"], verdict.get("cell"), verdict["line"])]


@pytest.mark.parametrize("assignment", list(GRADED))
def test_the_blank_scores_only_its_given_parts(assignment):
    """As handed out: every part the learner writes is not-implemented, never graded on the course's solution
    (the tutorial's solution cells follow each exercise), and no given part is charged."""
    found = report(assignment, "blank")
    given = {t for t, s in found["targets"].items() if s.get("given")}
    assert found["score"] == 0.0 < found["max_score"]
    assert all(found["targets"][t]["score"] == 0.0 for t in found["targets"] if t not in given)
    assert {d["code"] for d in found["diagnoses"]} == {"not-implemented"}
    assert not any(d["target"] in given for d in found["diagnoses"])


@pytest.mark.parametrize(("assignment", "name"), [(a, s) for a in GRADED for s in verdicts(a)["submissions"]])
def test_every_learners_report_names_what_was_not_graded(assignment, name):
    """The parts no target of today's kinds covers are listed by name: section 1's estimates and the softmax,
    the tutorial's modules and its earlier steps, the homework's Tensor, nn, optim and training notebook."""
    found = {u["name"] for u in report(assignment, name)["ungraded"]}
    expected = {"karpathy_exercises": set(), "tutorial_deep": {"Value"},  # the earlier steps' Value
                "dl_course_hw1": {"Callback", "Runner", "LossHistory", "EarlyStopping"}}[assignment]
    assert expected <= found, found
    assert not found & {"gradf", "f", "_as_value", "Sequential", "micrograd/test/test_engine.py"}


def test_the_tutorials_solution_cells_are_not_run_and_its_steps_are_graded_where_they_stand():
    """In kept_solutions_mul_bug the learner's Exercise 4 multiplies by .grad; the # Solution 4 cell right after
    it and Exercise 5's full engine both redefine Value correctly. Neither is what is graded."""
    found = report("tutorial_deep", "kept_solutions_mul_bug")
    assert [(d["target"], d["code"], d["cell"], d["line"]) for d in found["diagnoses"]] == [
        ("mul", "wrong-local-grad", 15, 26)]
    skipped = [u for u in found["ungraded"] if u["what"] == "skipped"]
    assert [u["name"].split(" (")[0] for u in skipped] == ["cells 4, 7, 10, 13, 16, 21, 24"]


def test_a_cut_ends_at_the_last_cell_selected_and_whole_words_only(tmp_path):
    cells = ["# Exercise 1\nclass Value: pass", "# Exercise 10\nclass Value: x = 1", "print('done')"]
    notebook = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": "code", "id": f"c{i}", "metadata": {"tags": ["ten"] if i == 1 else []}, "source": c,
         "outputs": [], "execution_count": None} for i, c in enumerate(cells)]}
    path = tmp_path / "work.ipynb"
    path.write_text(json.dumps(notebook))
    submission = read_submission(path)
    assert [u.cell for u in cut(submission, "# Exercise 1").files[0].units] == [1]
    assert [u.cell for u in cut(submission, "ten").files[0].units] == [1, 2]
    assert cut(submission, "# Exercise 2") is None
    assert [u.cell for u in submission.files[0].units] == [1, 2, 3]  # the submission itself is unchanged


def test_a_cut_takes_the_rest_of_its_section_and_finds_a_heading(tmp_path):
    """The part stands at the end of the selected cell's section (the learner's cells below it, under the same
    Markdown heading), never in the next section; a selector no cell's first line matches names a heading."""
    cells = [("markdown", "## Exercise 1: a Value"), ("code", "# Exercise 1\nclass Value: pass"),
             ("code", "class Value:\n    x = 1"), ("markdown", "## Exercise 2: adding"), ("code", "y = 2"),
             ("markdown", "Some notes, no heading."), ("code", "z = 3")]
    notebook = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": kind, "id": f"c{i}", "metadata": {}, "source": text,
         **({"outputs": [], "execution_count": None} if kind == "code" else {})}
        for i, (kind, text) in enumerate(cells)]}
    path = tmp_path / "work.ipynb"
    path.write_text(json.dumps(notebook))
    submission = read_submission(path)
    assert [u.cell for u in cut(submission, "# Exercise 1").files[0].units] == [2, 3]
    assert [u.cell for u in cut(submission, "# Exercise 2").files[0].units] == [2, 3, 5, 7]
    assert cut(submission, "# Exercise 3") is None
    flat = tmp_path / "flat.ipynb"  # no headings: the selected cell alone
    flat.write_text(json.dumps({**notebook, "cells": [c for c in notebook["cells"] if c["cell_type"] == "code"]}))
    assert [u.cell for u in cut(read_submission(flat), "# Exercise 1").files[0].units] == [1]


def test_a_cell_the_notebook_no_longer_has_is_said_and_costs_only_its_targets(tmp_path):
    """A learner who rewrote Exercise 4's first line is graded under Exercise 4's heading, which names the same
    place; one who also deleted the heading has no such place: its targets are not-implemented, saying which cell
    the course grades; the other targets are graded as usual."""
    notebook = json.loads((ASSIGNMENTS / "tutorial_deep" / "deleted_solutions.ipynb").read_text())
    [exercise] = [c for c in notebook["cells"] if "".join(c["source"]).startswith("# Exercise 4")]
    exercise["source"] = "# my gradients\n" + "".join(exercise["source"]).split("\n", 1)[1]
    course = parse({"targets": {"add": {"points": 8, "cell": "# Exercise 4"},
                                "tanh": {"points": 5}}}, "course.toml")
    path = tmp_path / "work.ipynb"
    path.write_text(json.dumps(notebook))
    under_heading = grade(path, Options(config=course)).to_json()
    assert under_heading["targets"] == {"add": {"score": 8.0, "max_score": 8.0},
                                        "tanh": {"score": 5.0, "max_score": 5.0}}, under_heading["diagnoses"]
    [heading] = [c for c in notebook["cells"] if "".join(c["source"]).startswith("## Exercise 4")]
    heading["source"] = "## Backpropagation"
    path.write_text(json.dumps(notebook))
    found = grade(path, Options(config=course)).to_json()
    assert found["targets"] == {"add": {"score": 0.0, "max_score": 8.0}, "tanh": {"score": 5.0, "max_score": 5.0}}
    [diagnosis] = found["diagnoses"]
    assert diagnosis["code"] == "not-implemented" and "'# Exercise 4'" in diagnosis["message"]


def test_adopting_the_courses_notebook_keeps_it_and_adds_the_grading_cell(tmp_path):
    """``micrograde scaffold --adopt``: every cell of the course's notebook kept as it is, the grading cell and
    the course's configuration added; a target's cell the notebook lacks is one line naming the key."""
    blank = ASSIGNMENTS / "tutorial_deep" / "blank.ipynb"
    done = micrograde("scaffold", str(tmp_path / "out"), "--adopt", str(blank), "--config",
                      str(COURSES / "tutorial-deep.toml"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(tmp_path / "out" / "blank.ipynb"), str(tmp_path / "out" / "micrograde.toml")]
    original, written = json.loads(blank.read_text()), json.loads((tmp_path / "out" / "blank.ipynb").read_text())
    assert written["cells"][:-2] == original["cells"]
    sha256 = load(COURSES / "tutorial-deep.toml").sha256  # the course the notebook carries, named by its cell
    assert written["cells"][-1]["source"] == f'from grader import check\n\ncheck(course="sha256:{sha256}")'
    assert written["metadata"]["micrograde"]["course"] == {"sha256": sha256,
                                                           "toml": (tmp_path / "out" / "micrograde.toml").read_text()}
    assert load(tmp_path / "out" / "micrograde.toml").sha256 == load(COURSES / "tutorial-deep.toml").sha256
    again = micrograde("scaffold", str(tmp_path / "again"), "--adopt", str(tmp_path / "out" / "blank.ipynb"),
                       "--config", str(COURSES / "tutorial-deep.toml"))
    assert again.returncode == 0, again.stderr
    assert json.loads((tmp_path / "again" / "blank.ipynb").read_text())["cells"] == written["cells"]  # one check
    wrong = tmp_path / "wrong.toml"
    wrong.write_text('[targets.backward]\npoints = 10\ncell = "# Exercise 9"\n')
    refused = micrograde("scaffold", str(tmp_path / "no"), "--adopt", str(blank), "--config", str(wrong))
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1
    assert "[targets.backward] cell: no code cell of blank.ipynb is tagged '# Exercise 9'" in refused.stderr


def test_the_adopted_notebook_checks_itself_in_a_real_kernel(tmp_path):
    """Karpathy's solution notebook adopted, run top to bottom in a real kernel from its folder: its check()
    cell grades the cells run, under the course beside it, and names what it did not grade (a helper of the
    learner's own)."""
    import nbclient
    import nbformat

    done = micrograde("scaffold", str(tmp_path), "--adopt", str(ASSIGNMENTS / "karpathy_exercises" /
                                                                  "solution.ipynb"),
                      "--config", str(COURSES / "karpathy-exercises.toml"))
    assert done.returncode == 0, done.stderr
    book = nbformat.read(tmp_path / "solution.ipynb", as_version=4)
    # A learner's own helper, before the check cell: no target reads it.
    book.cells.insert(len(book.cells) - 1, nbformat.v4.new_code_cell("def plot_losses(xs):\n    return xs"))
    nbclient.NotebookClient(book, timeout=300, allow_errors=True, resources={"metadata": {"path": str(tmp_path)}},
                            kernel_name="python3").execute()
    shown = book.cells[-1].outputs[0]["data"]["text/markdown"]
    total = sum(t.points for t in load(COURSES / "karpathy-exercises.toml").targets)
    assert shown.startswith(f"## micrograde: {total:g} / {total:g}")
    assert "| `__add__` | given (no points) | 5 of 5 |" in shown
    assert "**Not graded**" in shown and "plot\\_losses (a function, In \\[" in shown


def test_the_scaffold_writes_given_parts_out_and_asks_only_for_the_rest(tmp_path):
    """micrograde's own scaffold for a course with given parts: the course's code (micrograd's) instead of a
    stub, not listed as the learner's to write, no train_step where the course has none; graded blank, the
    given parts pass and everything else is not-implemented."""
    course = tmp_path / "micrograde.toml"
    course.write_text('[targets.add]\ngiven = true\nreflected = false\n[targets.backward]\ngiven = true\n'
                      '[targets.exp]\npoints = 8\n[targets.mul]\npoints = 8\nreflected = false\n')
    done = micrograde("scaffold", str(tmp_path / "out"), "--config", str(course))
    assert done.returncode == 0, done.stderr
    engine = (tmp_path / "out" / "engine.py").read_text()
    assert "Fill in the methods that raise NotImplementedError:\n``exp``, ``__mul__``.\n" in engine
    assert "    # Given by the course (add): it is checked, and worth no points.\n    def __add__" in engine
    assert 'NotImplementedError("__add__")' not in engine and 'NotImplementedError("backward")' not in engine
    assert not (tmp_path / "out" / "train.py").exists()
    cells = json.loads((tmp_path / "out" / "micrograd.ipynb").read_text())["cells"]
    assert not any("train" in "".join(cell["source"]) for cell in cells)
    found = json.loads(micrograde("grade", str(tmp_path / "out" / "engine.py"), "--config", str(course), "--format",
                                  "json").stdout)
    assert sorted((d["target"], d["code"]) for d in found["diagnoses"]) == [("exp", "not-implemented"),
                                                                           ("mul", "not-implemented")]
    assert found["targets"]["add"] == {"score": 0.0, "max_score": 0.0, "given": True}


def test_check_grades_the_cells_run_so_far_as_the_course_says(monkeypatch):
    """``check()`` in Jupyter: the cells run, in the order they ran, as a notebook: the tutorial's solution
    cells left out, Exercise 4 graded where it stands (the learner ran it twice, the last run counts), every
    place named by the cell run (``In [n]``)."""
    import sys

    from grader.student import check

    notebook = json.loads((ASSIGNMENTS / "tutorial_deep" / "kept_solutions_mul_bug.ipynb").read_text())
    code = ["".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "code"]
    exercise_4 = next(i for i, c in enumerate(code) if c.startswith("# Exercise 4"))
    history = ["", *code[:exercise_4 + 1], code[exercise_4], *code[exercise_4 + 1:],
               "from grader import check\ncheck()"]
    monkeypatch.setattr(sys.modules["__main__"], "In", history, raising=False)
    feedback = check(config=COURSES / "tutorial-deep.toml")
    ran_last = len(history) - 1 - history[::-1].index(code[exercise_4])
    assert [(d.code, d.file, d.line) for d in feedback.report.diagnoses] == [("wrong-local-grad", f"In [{ran_last}]",
                                                                               26)]
    targets = load(COURSES / "tutorial-deep.toml").targets
    assert feedback.report.submission == "check()"
    assert feedback.score == sum(t.points for t in targets if t.name != "mul")  # all but mul


def test_the_docs_adopt_recipe_and_course_example(tmp_path):
    """docs/staff.md: its example of the course's own exercise is a course micrograde grades Karpathy's notebook
    by, and its adopt command, run as written on a course's notebook and configuration."""
    import re

    from recipes import run_recipe, section

    example = re.findall(r"```toml\n(.*?)```", section("docs/staff.md", "## The course's own exercise"), re.S)[0]
    (tmp_path / "micrograde.toml").write_text(example)
    found = grade(ASSIGNMENTS / "karpathy_exercises" / "all_right.ipynb", Options(config=load(
        tmp_path / "micrograde.toml"))).to_json()
    assert (found["score"], found["max_score"], found["diagnoses"]) == (22.0, 22.0, [])
    assert found["targets"]["add"]["given"] and "f" not in {u["name"] for u in found["ungraded"]}
    (tmp_path / "course.ipynb").write_text((ASSIGNMENTS / "tutorial_deep" / "blank.ipynb").read_text())
    (tmp_path / "micrograde.toml").write_text((COURSES / "tutorial-deep.toml").read_text())
    done = run_recipe("docs/staff.md", "## The course's own notebook as the scaffold", tmp_path)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in (tmp_path / "student-files").iterdir()) == ["course.ipynb", "micrograde.toml"]


def test_the_handed_back_notebook_puts_a_steps_feedback_after_its_cell(tmp_path):
    """--feedback on the tutorial: Exercise 4's targets are told right after the learner's Exercise 4 cell, not
    after the course's solution or its full engine, which come later."""
    path = ASSIGNMENTS / "tutorial_deep" / "kept_solutions_mul_bug.ipynb"
    done = micrograde("grade", str(path), "--config", str(COURSES / "tutorial-deep.toml"), "--feedback",
                      str(tmp_path / "back.ipynb"))
    assert done.returncode == 1, done.stderr
    cells = json.loads((tmp_path / "back.ipynb").read_text())["cells"]
    mine = [c for c in cells if "micrograde-feedback" not in c.get("metadata", {}).get("tags", [])]
    feedback = [i for i, c in enumerate(cells) if c.get("id") == "micrograde-mul"]
    assert len(feedback) == 1 and "".join(cells[feedback[0] - 1]["source"]).startswith("# Exercise 4")
    assert "wrong-local-grad" in "".join(cells[feedback[0]]["source"])
    assert len(mine) == len(json.loads(path.read_text())["cells"])


def test_a_given_train_step_is_written_out_and_passes(tmp_path):
    course = tmp_path / "micrograde.toml"
    course.write_text("[targets.add]\npoints = 5\n[targets.train_step]\ngiven = true\n")
    assert micrograde("scaffold", str(tmp_path / "out"), "--config", str(course)).returncode == 0
    assert 'NotImplementedError("train_step")' not in (tmp_path / "out" / "train.py").read_text()
    found = json.loads(micrograde("grade", str(tmp_path / "out" / "train.py"), "--config", str(course), "--format",
                                  "json").stdout)
    assert found["targets"]["train_step"] == {"score": 0.0, "max_score": 0.0, "given": True}
    assert [(d["target"], d["code"]) for d in found["diagnoses"]] == [("add", "not-implemented")]


def test_the_three_assignments_are_graded_for_most_of_their_points():
    """Under one course file each, the parts micrograde grades are worth at least 85% of the three assignments'
    points together (what is left: the homework's callbacks and MNIST download, the tutorial's earlier steps of
    ops graded at a later step, Karpathy's comparison with PyTorch)."""
    graded = total = 0.0
    for assignment, (_, parts) in GRADED.items():
        points = {name: part["points"] for name, part in verdicts(assignment)["parts"].items()}
        total += sum(points.values())
        graded += sum(points[name] for name in parts)
    assert graded / total >= 0.85, (graded, total)


@pytest.mark.parametrize("assignment", list(PART_FILES))
def test_an_assignments_course_file_holds_its_parts_course_files(assignment):
    whole = tomllib.loads((COURSES / GRADED[assignment][0]).read_text())["targets"]
    for part in PART_FILES[assignment]:
        for name, table in tomllib.loads((COURSES / part).read_text())["targets"].items():
            assert whole.get(name) == table, (part, name)

