"""``check(Value, train_step)``, as a student calls it: from a plain script, and from notebook cells."""

from __future__ import annotations

import subprocess
import sys

from helpers import ROOT, SCAFFOLD_SOLUTION

from grader.student import check

ENGINE, TRAIN = SCAFFOLD_SOLUTION.split("def train_step")
TRAIN = "from engine import Value\n\n\ndef train_step" + TRAIN
OVERWRITE = ENGINE.replace("self.grad += other.data * out.grad", "self.grad = other.data * out.grad")
WRONG_UPDATE = TRAIN.replace("p.data += -lr * p.grad", "p.data += lr * p.grad")


def line_of(source: str, text: str) -> int:
    return source.splitlines().index(text) + 1


def test_check_from_a_plain_script_names_each_file_and_line(tmp_path):
    (tmp_path / "engine.py").write_text("\ufeff" + OVERWRITE)  # saved with a byte-order mark
    (tmp_path / "train.py").write_text(WRONG_UPDATE)
    (tmp_path / "run.py").write_text("from engine import Value\nfrom train import train_step\n"
                                     "from grader import check\n\ncheck(Value, train_step)\n")
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)}
    result = subprocess.run([sys.executable, "run.py"], cwd=tmp_path, capture_output=True, text=True, env=env,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    mul = line_of(OVERWRITE, "            self.grad = other.data * out.grad")  # the statement at fault
    train = line_of(WRONG_UPDATE, "        p.data += lr * p.grad")
    assert f"[grad-overwrite] mul (engine.py, line {mul})" in result.stdout
    assert f"[wrong-update] train_step (train.py, line {train})" in result.stdout
    assert "total           74 / 100" in result.stdout


def test_check_from_notebook_cells_gives_the_line_in_the_cell(monkeypatch):
    main = sys.modules["__main__"]
    head, body = OVERWRITE.split("class Value", 1)
    cells = ["", head, "x = 1", "class Value" + body, "from grader import check\ncheck(Value)"]
    monkeypatch.setattr(main, "In", cells, raising=False)
    namespace: dict = {}
    exec(head + "class Value" + body, namespace)
    feedback = check(namespace["Value"])
    [diagnosis] = [d for d in feedback.report.diagnoses if d.code == "grad-overwrite"]
    assert diagnosis.file == "In [3]"
    assert diagnosis.line == line_of("class Value" + body, "            self.grad = other.data * out.grad")


def test_the_self_check_is_left_out_without_moving_a_line(tmp_path):
    """Lines are counted as Python counts them: a form feed (a page break some editors keep) does
    not end a line, so blanking the self-check leaves the bug on its own line number."""
    source = ("from grader import check\n\x0c# --- the engine ---\n" + OVERWRITE.replace("\n", "\r\n", 3)
              + "\n\ncheck(\n    Value,\n)\n")
    path = tmp_path / "engine.py"
    path.write_bytes(source.encode())
    from grader.grade import grade

    report = grade(path)
    [found] = [d for d in report.diagnoses if d.target == "mul"]
    lines = source.replace("\r\n", "\n").split("\n")
    assert found.code == "grad-overwrite"
    assert lines[found.line - 1].strip() == "self.grad = other.data * out.grad"


def test_check_in_a_real_kernel_grades_the_course_its_scaffold_wrote(tmp_path):
    """The docs' course (relu and division, no tanh, a hidden check), scaffolded by the docs' command; its
    notebook with the stubs written, run top to bottom in a real kernel from its folder: the check() cell
    grades that course (no tanh asked for), with full marks for a right solution, the hidden check counted."""
    import json
    import re

    import nbclient
    import nbformat
    from opmutants import engine
    from recipes import run_recipe, section

    example = re.findall(r"```toml\n(.*?)```", section("docs/staff.md", "## The course configuration"), re.S)[0]
    (tmp_path / "micrograde.toml").write_text(example, encoding="utf-8")
    assert run_recipe("docs/staff.md", "## The course configuration", tmp_path).returncode == 0
    folder = tmp_path / "student-files"
    assert (folder / "micrograde.toml").is_file()
    book = nbformat.read(folder / "micrograd.ipynb", as_version=4)
    solution = engine()
    value, train = solution.split("\n\ndef train_step")
    for cell in book.cells:
        if cell.cell_type == "code" and cell.source.startswith("class Value"):
            cell.source = value.split("\n\n\n", 1)[1]
        elif cell.cell_type == "code" and cell.source.startswith("def train_step"):
            cell.source = "def train_step" + train
    nbclient.NotebookClient(book, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(folder)}}).execute()
    shown = book.cells[-1].outputs[-1]["data"]["text/markdown"]
    assert shown.startswith("## micrograde: 100 / 100"), shown
    graded = shown.split("Not graded")[0]  # the table's ops own ungraded by this course are listed after it
    assert "tanh" not in graded and "relu" in graded and "__truediv__" in graded
    assert "Value.tanh (a method" in shown
    report = json.loads(subprocess.run([sys.executable, "-m", "grader", "grade", "engine.py", "--format", "json"],
                                       cwd=folder, capture_output=True, text=True, timeout=300).stdout)
    assert list(report["targets"]) == ["add", "mul", "pow", "relu", "truediv", "backward", "train_step"]


def test_check_grades_by_the_course_its_notebook_carries_and_only_as_its_course_wrote_it(tmp_path):
    """``check()``'s choice of course (``grader.course.course_for(learner=True)``) from notebooks that carry one:
    the course as its scaffold embedded it; refused, in one line naming config=, when its text was changed since
    (its hash no longer what the cell names), or when the notebooks around were made for different courses."""
    import json

    import pytest

    from grader.course import course_for
    from grader.errors import UsageError
    from grader.exercise.config import load
    from grader.exercise.targets import Exercise
    from grader.staff.scaffold import notebook

    course = tmp_path / "course.toml"
    course.write_text("[targets.relu]\npoints = 5\n[targets.backward]\npoints = 5\n")
    book = json.loads(notebook(Exercise(load(course))))
    (tmp_path / "a.ipynb").write_text(json.dumps(book))
    chosen = course_for(None, [tmp_path / "elsewhere"], [tmp_path / "a.ipynb"], flag="config", learner=True)
    assert chosen.config.sha256 == load(course).sha256 and chosen.path is None
    assert chosen.config.source == "the course configuration a.ipynb carries"
    book["metadata"]["micrograde"]["course"]["toml"] = book["metadata"]["micrograde"]["course"]["toml"].replace(
        "points = 5.0", "points = 50.0", 1)
    (tmp_path / "a.ipynb").write_text(json.dumps(book))
    with pytest.raises(UsageError, match="changed since the course wrote it.*pass config"):
        course_for(None, [], [tmp_path / "a.ipynb"], flag="config", learner=True)
    (tmp_path / "b.ipynb").write_text(notebook(Exercise(load(course.parent / "course.toml").with_time_limit(3))))
    with pytest.raises(UsageError, match="were made for different courses"):
        course_for(None, [], [tmp_path / "a.ipynb", tmp_path / "b.ipynb"], flag="config", learner=True)
    with pytest.raises(UsageError, match="a.ipynb was made for a course .* pass --config FILE"):
        course_for(None, [], [tmp_path / "a.ipynb"], flag="--config")  # a staff route: never by the notebook's
