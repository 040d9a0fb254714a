"""The command line: exit statuses, the JSON shape, one-line errors, no traces left behind."""

from __future__ import annotations

import json

import pytest
from helpers import CORPUS, ROOT, SOLUTION, micrograde

from grader.errors import MachineError


def test_reference_gets_full_marks_and_exit_0():
    result = micrograde("grade", "reference")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "100 / 100" in result.stdout


def test_exercises_are_not_implemented_everywhere():
    result = micrograde("grade", "exercises", "--format", "json")
    assert result.returncode == 1
    report = json.loads(result.stdout)
    assert report["score"] == 0.0
    assert sorted((d["target"], d["code"]) for d in report["diagnoses"]) == sorted(
        (t, "not-implemented") for t in ("add", "mul", "pow", "tanh", "backward", "train_step"))


def test_json_shape(tmp_path):
    path = tmp_path / "work.py"
    path.write_text(SOLUTION.replace("self.grad += other.data * out.grad", "self.grad = other.data * out.grad")
                    .replace("other.grad += self.data * out.grad", "other.grad = self.data * out.grad"))
    result = micrograde("grade", str(path), "--format", "json")
    assert result.returncode == 1
    report = json.loads(result.stdout)
    assert report["schema_version"] == 1
    assert report["submission"] == str(path)
    assert report["max_score"] == 100.0
    assert report["score"] == sum(c["score"] for c in report["checks"])
    check = next(c for c in report["checks"] if c["id"] == "mul.reused-node")
    assert check["status"] == "failed" and check["score"] == 0.0 and check["max_score"] == 3.0
    example = check["counterexample"]
    assert example["expression"] == "(a * a)"
    assert example["inputs"] == {"a": 2.0}
    assert example["expected"] == {"a": 4.0} and example["actual"] == {"a": 2.0}
    assert example["oracle"] == "both"
    [diagnosis] = report["diagnoses"]
    assert diagnosis["code"] == "grad-overwrite" and diagnosis["target"] == "mul"
    assert path.read_text().splitlines()[diagnosis["line"] - 1].strip() == "self.grad = other.data * out.grad"
    assert "(a * a)" in diagnosis["message"] and "+=" in diagnosis["message"]


def test_output_file(tmp_path):
    out = tmp_path / "report.json"
    result = micrograde("grade", "reference", "--format", "json", "--output", str(out))
    assert result.returncode == 0 and result.stdout == ""
    assert json.loads(out.read_text())["score"] == 100.0


def test_text_report_names_the_bug(tmp_path):
    path = tmp_path / "work.py"
    path.write_text(SOLUTION.replace("for node in reversed(topo):", "for node in topo:"))
    result = micrograde("grade", str(path))
    assert result.returncode == 1
    assert "[wrong-order] backward" in result.stdout
    assert "\033[" not in result.stdout  # no colour when not on a terminal


@pytest.mark.parametrize(("args", "fragment"), [
    (["grade", "no/such/file.py"], "no such file or directory"),
    (["grade", "pyproject.toml"], "unsupported file type"),
    (["grade", "{empty}"], "empty"),
    (["grade", "{binary}"], "binary"),
    (["grade", "{bad_json}"], "invalid JSON"),
    (["grade", "{truncated}"], "not a notebook"),
    (["grade", "{nothing}"], "no .py or .ipynb"),
    (["grade", "{huge}"], "too large"),
    (["grade", "reference", "--format", "yaml"], "invalid choice"),
    (["frobnicate"], "invalid choice"),
    (["grade", "reference", "--timeout", "0"], "--timeout"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, args, fragment):
    (tmp_path / "empty.py").write_text("")
    (tmp_path / "binary.py").write_bytes(b"\x00\x01\x02 not python")
    (tmp_path / "bad.ipynb").write_text("{not json")
    (tmp_path / "truncated.ipynb").write_text('{"cells": [{"cell_type": "code", "source": "x = 1"')
    (tmp_path / "nothing").mkdir()
    (tmp_path / "nothing" / "notes.txt").write_text("hello")
    cell = {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": "x = 1"}
    padding = {"cell_type": "markdown", "metadata": {}, "source": "x" * (50 * 1024 * 1024)}
    (tmp_path / "huge.ipynb").write_text(json.dumps({"nbformat": 4, "nbformat_minor": 4, "metadata": {},
                                                     "cells": [cell, padding]}))
    names = {"empty": "empty.py", "binary": "binary.py", "bad_json": "bad.ipynb",
             "truncated": "truncated.ipynb", "nothing": "nothing", "huge": "huge.ipynb"}
    args = [str(tmp_path / names[a[1:-1]]) if a.startswith("{") else a for a in args]
    result = micrograde(*args)
    assert result.returncode == 2
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and fragment in lines[0], result.stderr
    assert "Traceback" not in result.stderr


def test_exit_at_import_never_gives_exit_0(tmp_path):
    path = tmp_path / "work.py"
    path.write_text("import sys\nsys.exit(0)\n" + SOLUTION)
    result = micrograde("grade", str(path), "--format", "json")
    assert result.returncode == 1
    report = json.loads(result.stdout)
    assert report["score"] == 0.0  # the file stopped before defining anything, as running it would
    assert report["diagnoses"] == []
    assert "work.py, line 2 called sys.exit(0) while loading" in report["warnings"][0]
    assert {c["message"] for c in report["checks"]} == {"not run: the submission called sys.exit() before defining it"}


def test_non_utf8_source_is_a_load_error(tmp_path):
    path = tmp_path / "work.py"
    path.write_bytes(SOLUTION.encode() + "\n# caf\xe9\n".encode("latin-1"))
    result = micrograde("grade", str(path), "--format", "json")
    assert result.returncode == 1
    report = json.loads(result.stdout)
    assert [d["code"] for d in report["diagnoses"]] == ["load-error"]
    assert "UTF-8" in report["diagnoses"][0]["message"] and report["score"] == 0.0


def test_syntax_error_is_a_load_error_with_its_line(tmp_path):
    path = tmp_path / "work.py"
    path.write_text(SOLUTION.replace("def __add__(self, other):", "def __add__(self, other)"))
    report = json.loads(micrograde("grade", str(path), "--format", "json").stdout)
    [diagnosis] = report["diagnoses"]
    assert diagnosis["code"] == "load-error" and diagnosis["target"] == "submission"
    assert SOLUTION.splitlines()[diagnosis["line"] - 1].strip() == "def __add__(self, other):"
    assert "SyntaxError" in diagnosis["message"]


def test_grading_is_deterministic_and_leaves_nothing_behind(tmp_path):
    path = tmp_path / "work.py"
    path.write_text(SOLUTION.replace("for node in reversed(topo):", "for node in topo:")
                    .replace("self.grad += (1 - t**2) * out.grad", "self.grad += (1 - t) * out.grad"))
    work = tmp_path / "work"
    work.mkdir()
    path = path.rename(work / "work.py")
    temporary = tmp_path / "tmp"  # the grader's own temporary directory, watched
    temporary.mkdir()
    first = micrograde("grade", str(path), "--format", "json", cwd=work, env={"TMPDIR": str(temporary)})
    second = micrograde("grade", str(path), "--format", "json", cwd=work,
                        env={"TMPDIR": str(temporary), "MICROGRADE_REPLAY": "0"})
    assert first.returncode == second.returncode == 1
    assert first.stdout == second.stdout
    assert sorted(p.name for p in work.iterdir()) == ["work.py"]
    assert list(temporary.iterdir()) == []  # nothing left in the temporary directory either


def test_a_missing_name_is_not_implemented_not_a_crash(tmp_path):
    path = tmp_path / "engine_only.py"
    path.write_text(SOLUTION.split("def train_step")[0])
    result = micrograde("grade", str(path), "--format", "json")
    assert result.returncode == 1
    report = json.loads(result.stdout)
    assert [(d["target"], d["code"]) for d in report["diagnoses"]] == [("train_step", "not-implemented")]
    assert report["score"] == 80.0


def test_directory_submission_with_local_imports():
    report = json.loads(micrograde("grade", str(CORPUS / "correct_dir"), "--format", "json").stdout)
    assert report["score"] == 100.0 and report["diagnoses"] == []


def test_copy_of_exercises_with_the_notebook_filled_in(tmp_path):
    work = tmp_path / "exercises"
    work.mkdir()
    for name in ("engine.py", "train.py"):
        (work / name).write_text((ROOT / "exercises" / name).read_text())
    notebook = json.loads((ROOT / "exercises" / "micrograd.ipynb").read_text())
    head, rest = SOLUTION.split("class Value", 1)
    for cell in notebook["cells"]:
        source = "".join(cell["source"])
        if source.startswith("class Value"):
            cell["source"] = "class Value" + rest.split("def train_step")[0]
        elif source.startswith("def train_step"):
            cell["source"] = "def train_step" + rest.split("def train_step")[1]
    (work / "micrograd.ipynb").write_text(json.dumps(notebook))
    report = json.loads(micrograde("grade", str(work), "--format", "json").stdout)
    assert report["score"] == 100.0 and report["diagnoses"] == []


def test_copy_of_exercises_with_edited_py_files(tmp_path):
    work = tmp_path / "exercises"
    work.mkdir()
    for name in ("train.py", "micrograd.ipynb"):
        (work / name).write_text((ROOT / "exercises" / name).read_text())
    (work / "engine.py").write_text(SOLUTION.split("def train_step")[0])
    report = json.loads(micrograde("grade", str(work), "--format", "json").stdout)
    assert [(d["target"], d["code"]) for d in report["diagnoses"]] == [("train_step", "not-implemented")]


def test_a_machine_that_cannot_start_the_child_is_said_so_in_one_line(monkeypatch, capsys):
    """The launcher dying or refusing a child is neither the submission's fault nor bad input."""
    from grader import cli
    from grader.child import launcher

    def refuse(child, *args, **kwargs):  # as asking a dead launcher for a child does
        raise MachineError("the launcher is gone")

    monkeypatch.delenv("MICROGRADE_DEBUG", raising=False)
    monkeypatch.setattr(launcher.Child, "__init__", refuse)
    assert cli.main(["grade", str(CORPUS / "solution.py")]) == 3
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "could not run the submission's process: the launcher is gone" in err and "not at fault" in err


def test_every_argument_says_what_it_is():
    """``--help`` of every command explains each of its arguments, paths included."""
    from grader.cli import build_parser

    commands = next(a for a in build_parser()._actions if a.dest == "command").choices
    for name, command in commands.items():
        for action in command._actions:
            assert action.help, f"micrograde {name}: {action.dest} has no help"
