"""Files as students really save them: a byte-order mark, ``sys.exit()`` at the end, a notebook of notes."""

from __future__ import annotations

import json

import nbformat
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


def test_a_file_that_does_not_parse_is_graded_alone(tmp_path):
    submission = read_as_run(folder(tmp_path, engine=ENGINE + "\ndef broken(:\n", train=TRAIN) / "engine.py")
    assert submission.directory is None


def test_a_torch_import_gets_advice_that_fits(tmp_path):
    """``import torch`` runs fine on the student's machine: the report says it may not be used, and never
    that the file fails to run on its own."""
    path = tmp_path / "engine.py"
    path.write_text("import torch\n" + SOLUTION)
    result = micrograde("grade", str(path), "--format", "json")
    report = json.loads(result.stdout)
    assert [d["code"] for d in report["diagnoses"]] == ["forbidden-import"]
    assert "python yourfile.py" not in result.stdout and "imports torch" in result.stdout
