"""A single graded file takes from its folder only what belongs to the same work, and never in a batch."""

from __future__ import annotations

from helpers import SOLUTION

from grader.submission.siblings import read_as_run

ENGINE = SOLUTION.split("def train_step")[0]
TRAIN = "from engine import Value\n\n\ndef train_step" + SOLUTION.split("def train_step")[1]


def folder(tmp_path, **files: str):
    for name, text in files.items():
        (tmp_path / f"{name}.py").write_text(text)
    return tmp_path


def test_a_role_from_a_file_of_the_same_work_is_taken_and_said(tmp_path):
    submission = read_as_run(folder(tmp_path, engine=ENGINE, train=TRAIN) / "engine.py")
    assert submission.providers["Value"].display == "engine.py"
    assert submission.providers["train_step"].display == "train.py"
    assert any("train.py" in note and "folder" in note for note in submission.files[0].notes)


def test_a_batch_entry_never_reads_the_files_beside_it(tmp_path):
    submission = read_as_run(folder(tmp_path, engine=ENGINE, train=TRAIN) / "engine.py", siblings=False)
    assert submission.directory is None and [s.display for s in submission.files] == ["engine.py"]


def test_a_file_that_only_sits_in_the_same_folder_is_not_taken(tmp_path):
    """Another student's file in a folder of files: it neither imports the graded file nor is imported."""
    other = "def train_step" + SOLUTION.split("def train_step")[1]
    submission = read_as_run(folder(tmp_path, alice=ENGINE, bob=other) / "alice.py")
    assert submission.directory is None and submission.providers["train_step"].display == "alice.py"


def test_a_file_that_does_not_parse_is_graded_alone(tmp_path):
    submission = read_as_run(folder(tmp_path, engine=ENGINE + "\ndef broken(:\n", train=TRAIN) / "engine.py")
    assert submission.directory is None
