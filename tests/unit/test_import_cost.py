"""What grading does not import on its usual paths: Hypothesis for the default course (its openings ship
with micrograde), nbformat for a version-4 notebook, ``tomllib`` where no course configuration is
around (the default is data), and what the notebook then reads as."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import nbformat
from helpers import CORPUS, ROOT, SOLUTION
from test_notebook import as_notebook

from grader.submission.notebook import plain_v4, read, student_cells

PROGRAM = ("import json, sys; from grader.cli import main; code = main(['grade', sys.argv[1], '--format', 'json',"
           " '--output', sys.argv[2]]); print(code, sorted({'hypothesis', 'nbformat', 'tomllib'} & set(sys.modules)))")


def grade_twice(path, tmp_path) -> list[tuple[str, dict]]:
    """Grade ``path`` twice, from an empty replay cache, in a folder without a course configuration: what
    each run imported, and its report."""
    env = {**os.environ, "MICROGRADE_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("MICROGRADE_REPLAY", None)
    runs = []
    for i in range(2):
        out = tmp_path / f"{i}.json"
        result = subprocess.run([sys.executable, "-c", PROGRAM, str(path), str(out)], capture_output=True, text=True,
                                cwd=tmp_path, env=env, timeout=120)
        assert result.returncode == 0, result.stderr
        runs.append((result.stdout.strip(), json.loads(out.read_text())))
    return runs


def test_a_passing_grade_imports_neither_hypothesis_nor_nbformat(tmp_path):
    (first, report), (second, again) = grade_twice(CORPUS / "solution.py", tmp_path)
    assert (first, second) == ("0 []", "0 []")  # not even on a machine that never graded
    assert report == again
    assert set(again["coverage"]) == {"add", "mul", "pow", "tanh", "backward"}
    assert all(c["graphs"] >= 10 and c["nodes"] > c["graphs"] for c in again["coverage"].values())


def test_a_version_4_notebook_is_graded_without_nbformat(tmp_path):
    path = tmp_path / "work.ipynb"
    path.write_text(json.dumps(as_notebook(SOLUTION), indent=1))
    (_, report), (imported, again) = grade_twice(path, tmp_path)
    assert imported == "0 []" and report == again and again["score"] == 100.0


def test_a_notebook_reads_as_nbformat_reads_it():
    """Cell by cell the same type, tags and source, the source given as Jupyter saves it (a list of lines)."""
    saved = [as_notebook(SOLUTION), json.loads((ROOT / "exercises" / "micrograd.ipynb").read_text())]
    saved[0]["cells"][1]["metadata"]["tags"] = ["skip-grading"]
    for notebook in saved:
        for cell in notebook["cells"]:
            if isinstance(cell["source"], str):
                cell["source"] = cell["source"].splitlines(keepends=True)
        raw = json.dumps(notebook, indent=1).encode()
        ours = [(n, c["cell_type"], c["metadata"].get("tags"), c["source"]) for n, c in student_cells(plain_v4(raw))]
        theirs = [(n, c["cell_type"], c["metadata"].get("tags"), c["source"])
                  for n, c in student_cells(nbformat.reads(raw.decode(), as_version=4))]
        assert ours == theirs and len(ours) == len(notebook["cells"])
        assert any("\n" in source for *_, source in ours)


def test_anything_but_a_plain_version_4_notebook_goes_to_nbformat():
    v3 = {"nbformat": 3, "nbformat_minor": 0, "metadata": {}, "worksheets": [{"cells": []}]}
    for raw in (b"\xff\xfe", b"{ not json", json.dumps(v3).encode(), b'{"nbformat": 4, "cells": [{"source": 3}]}'):
        assert plain_v4(raw) is None
    assert read(json.dumps(v3).encode(), "old.ipynb")["nbformat"] == 4  # upgraded, as before
