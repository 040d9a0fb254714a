"""Files as students really save them: a byte-order mark, ``sys.exit()`` at the end, a notebook of notes."""

from __future__ import annotations

import json

import nbformat
import pytest
from helpers import SOLUTION, micrograde

from grader.exercise.kinds import TRAIN_STEP, VALUE
from grader.submission.siblings import read_as_run


def test_a_byte_order_mark_is_not_code(tmp_path):
    path = tmp_path / "engine.py"
    path.write_bytes("\ufeff".encode() + SOLUTION.encode())
    result = micrograde("grade", str(path), "--format", "json")
    assert result.returncode == 0, result.stdout
    assert json.loads(result.stdout)["score"] == 100.0


def test_sys_exit_at_the_end_is_not_a_load_error(tmp_path):
    path = tmp_path / "engine.py"
    path.write_text(SOLUTION + "\nimport sys\nsys.exit(0)\nraise RuntimeError('never runs')\n")
    result = micrograde("grade", str(path), "--format", "json")
    report = json.loads(result.stdout)
    assert result.returncode == 0 and report["score"] == 100.0 and report["diagnoses"] == []
    exit_line = len(SOLUTION.splitlines()) + 3
    assert report["warnings"] == [f"engine.py, line {exit_line} called sys.exit(0) while loading: the code after "
                                  "it did not run, as when running the file; what was defined before it is graded"]


def test_sys_exit_before_train_step_stops_the_file_there(tmp_path):
    engine, train = SOLUTION.split("def train_step")
    path = tmp_path / "engine.py"
    path.write_text(engine + "\nraise SystemExit('done')\n\ndef train_step" + train)
    report = json.loads(micrograde("grade", str(path), "--format", "json").stdout)
    assert report["targets"]["backward"]["score"] == 20.0 and report["targets"]["train_step"]["score"] == 0.0
    assert report["diagnoses"] == [] and "called sys.exit(done)" in report["warnings"][0]
    train = [c["message"] for c in report["checks"] if c["target"] == "train_step"]
    assert set(train) == {"not run: the submission called sys.exit() before defining it"}


def test_a_notebook_without_code_cells(tmp_path):
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# Notes\nNothing yet.")])
    nbformat.write(notebook, tmp_path / "work.ipynb")
    result = micrograde("grade", str(tmp_path / "work.ipynb"))
    assert result.returncode == 2
    assert result.stderr == "micrograde: error: work.ipynb: the notebook has no code cells to grade\n"


# A single graded file takes from its folder only what belongs to the same work, and never in a batch.
ENGINE = SOLUTION.split("def train_step")[0]
TRAIN = "from engine import Value\n\n\ndef train_step" + SOLUTION.split("def train_step")[1]


def folder(tmp_path, **files: str):
    for name, text in files.items():
        (tmp_path / f"{name}.py").write_text(text)
    return tmp_path


def test_a_role_from_a_file_of_the_same_work_is_taken_and_said(tmp_path):
    submission = read_as_run(folder(tmp_path, engine=ENGINE, train=TRAIN) / "engine.py")
    assert submission.providers[VALUE].display == "engine.py"
    assert submission.providers[TRAIN_STEP].display == "train.py"
    assert any("train.py" in note and "folder" in note for note in submission.files[0].notes)


def test_a_batch_entry_never_reads_the_files_beside_it(tmp_path):
    submission = read_as_run(folder(tmp_path, engine=ENGINE, train=TRAIN) / "engine.py", siblings=False)
    assert submission.directory is None and [s.display for s in submission.files] == ["engine.py"]


def test_a_file_that_only_sits_in_the_same_folder_is_not_taken(tmp_path):
    """Another student's file in a folder of files: it neither imports the graded file nor is imported."""
    other = "def train_step" + SOLUTION.split("def train_step")[1]
    submission = read_as_run(folder(tmp_path, alice=ENGINE, bob=other) / "alice.py")
    assert submission.directory is None and submission.providers[TRAIN_STEP].display == "alice.py"


def test_a_file_that_does_not_parse_at_all_is_graded_alone(tmp_path):
    submission = read_as_run(folder(tmp_path, engine="class Value(:\n    pass\n", train=TRAIN) / "engine.py")
    assert submission.directory is None


def test_a_file_with_a_statement_that_does_not_compile_keeps_the_rest_and_its_folder(tmp_path):
    """Only the broken statement is left out: the file still imports, and is imported by, the work beside it."""
    submission = read_as_run(folder(tmp_path, engine=ENGINE + "\ndef broken(:\n", train=TRAIN) / "engine.py")
    assert submission.directory is not None and submission.providers[TRAIN_STEP].display == "train.py"
    [unit] = submission.files[0].units
    assert [(p.defines, p.line) for p in unit.left_out] == [("broken", ENGINE.count("\n") + 2)]


def test_a_torch_import_gets_advice_that_fits(tmp_path):
    """``import torch`` that graded code uses runs fine on the student's machine: the report says it may not
    be used, and never that the file fails to run on its own."""
    path = tmp_path / "engine.py"
    path.write_text("import torch\n" + SOLUTION.replace("t = (math.exp(2 * x) - 1) / (math.exp(2 * x) + 1)",
                                                        "t = float(torch.tanh(torch.tensor(x)))"))
    result = micrograde("grade", str(path), "--format", "json")
    report = json.loads(result.stdout)
    assert [d["code"] for d in report["diagnoses"]] == ["forbidden-import"]
    assert "python yourfile.py" not in result.stdout and "imports torch" in result.stdout


# A .py file that does not parse keeps the top-level statements that compile, each on its own line.


def salvaged_pieces(source: str) -> tuple[str, list[tuple[str | None, int, int, int | None]]]:
    from grader.submission.salvage import salvaged

    kept, left_out = salvaged(source, "engine.py")
    return kept, [(p.defines, p.first, p.last, p.line) for p in left_out]


def test_a_statement_that_does_not_compile_is_left_out_with_its_lines_kept():
    source = "x = 1\n\ndef f(:\n    return 2\n\n\nclass Tensor:\n    pass\n"
    kept, left_out = salvaged_pieces(source)
    assert left_out == [("f", 3, 4, 3)]
    assert [line.rstrip() for line in kept.splitlines()] == ["x = 1", "", "", "", "", "", "class Tensor:", "    pass"]


def test_decorators_else_and_strings_at_the_margin_stay_with_their_statement():
    source = ('@staticmethod\ndef g():\n    return """\nnot code at the margin\n"""\n'
              "if True:\n    y = 1\nelse:\n    y = 2\n"
              "try:\n    z = 1\nexcept ValueError:\n    pass\n"
              "def broken(self)\n    pass\n")
    kept, left_out = salvaged_pieces(source)
    assert left_out == [("broken", 14, 15, 14)]
    assert kept.splitlines()[:13] == source.splitlines()[:13]


def test_a_file_where_nothing_compiles_is_not_salvaged():
    from grader.submission.salvage import salvaged

    assert salvaged("def f(:\n    pass\nclass (:\n", "engine.py") is None


def test_the_class_that_does_not_compile_costs_its_targets_alone(tmp_path):
    """A syntax error inside Value: a load-error pointing at it, the class's targets lost, train_step graded."""
    path = tmp_path / "engine.py"
    path.write_text(SOLUTION.replace("def tanh(self):", "def tanh(self)"))
    report = json.loads(micrograde("grade", str(path), "--format", "json").stdout)
    [problem] = report["diagnoses"]
    assert (problem["code"], problem["line"]) == ("load-error", SOLUTION.splitlines().index("    def tanh(self):") + 1)
    assert "the class Value" in problem["message"]
    assert {t: p["score"] for t, p in report["targets"].items()} == {
        "add": 0.0, "mul": 0.0, "pow": 0.0, "tanh": 0.0, "backward": 0.0, "train_step": 20.0}


def test_a_committed_environment_is_left_out_however_large(tmp_path):
    """Hundreds of installed modules in venv/ (and a pyvenv.cfg under another name) beside the work: graded
    without them, said once, never refused as too much to grade."""
    (tmp_path / "engine.py").write_text(SOLUTION)
    for env in ("venv", "myenv"):
        packages = tmp_path / env / "lib" / "python3.11" / "site-packages"
        for k in range(150):
            (packages / f"package_{k}").mkdir(parents=True)
            (packages / f"package_{k}" / "__init__.py").write_text("x = 1\n")
    (tmp_path / "myenv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    result = micrograde("grade", str(tmp_path), "--format", "json")
    report = json.loads(result.stdout)
    assert result.returncode == 0 and report["score"] == 100.0, result.stdout + result.stderr
    assert report["warnings"] == ["myenv/, venv/ were left out: a virtual environment, installed packages or build "
                                  "output is not the submission"]


@pytest.mark.parametrize("where", ["import torch\n", "try:\n    import torch\nexcept ImportError:\n    torch = None\n",
                                   "def check_with_torch():\n    import torch\n    return torch.tensor(2.0)\n"])
def test_a_library_that_no_graded_code_reaches_is_left_out_and_flagged(tmp_path, where):
    """Outside the graded code (at the top, in a try, in an ungraded function, and what uses them), an autograd
    library is left out before anything runs: graded in full, and the report flags it for a human."""
    path = tmp_path / "engine.py"
    path.write_text(where + SOLUTION + "\nif __name__ == '__main__':\n    print(torch.__version__)\n")
    report = json.loads(micrograde("grade", str(path), "--format", "json").stdout)
    assert report["score"] == 100.0 and report["diagnoses"] == []
    assert report["warnings"] == ["engine.py, line 1 imports torch outside the graded code: it and the lines that use "
                                  "it were left out and the rest of the file ran; no graded code uses it, so the grade "
                                  "stands, flagged for a human to look at"]


def test_a_load_stopped_by_the_child_says_the_time_it_was_given(tmp_path):
    """The child stops a load at 0.8 of the limit, to say where it was: the report says that time, not the limit."""
    from grader.child.session import Loaded
    from grader.diagnosis.submission import read_load
    from grader.submission.source import read_submission

    path = tmp_path / "engine.py"
    path.write_text(SOLUTION + "\nwhile True:\n    pass\n")
    line = len(SOLUTION.splitlines()) + 2
    stopped = {"type": "LoadTimeout", "message": "loading took too long", "phase": "load", "line": line + 1,
               "file": str(path), "unit": None, "unit_file": "engine.py"}
    found = read_load(read_submission(path), Loaded(failures=(stopped,)), 10.0)
    [timeout] = found.diagnoses
    assert timeout.code == "load-timeout" and timeout.line == line
    assert "was still running when loading was stopped, after 8 s (of the 10 s load limit" in timeout.message
