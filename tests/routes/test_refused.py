"""Input micrograde refuses still gets a report where a platform shows the student one, and a notebook is
never refused for its outputs, which are not graded."""

from __future__ import annotations

import base64
import json

import jsonschema
import pytest
from helpers import SOLUTION, micrograde
from test_ci_formats import GRADESCOPE
from test_classroom import RESULT_V1, RUNNER_ENV

from grader.submission import folder as walked


def test_a_notebook_heavy_with_plots_is_graded_on_its_code(mode, tmp_path):
    image = base64.b64encode(bytes(range(256)) * (12 * 1024 * 1024 // 256)).decode()  # a 16 MB "plot"
    cell = {"cell_type": "code", "metadata": {}, "execution_count": 1, "source": SOLUTION,
            "outputs": [{"output_type": "display_data", "metadata": {}, "data": {"image/png": image}}]}
    notebook = tmp_path / "micrograd.ipynb"
    notebook.write_text(json.dumps({"nbformat": 4, "nbformat_minor": 4, "metadata": {}, "cells": [cell]}))
    assert notebook.stat().st_size > walked.MAX_FILE_BYTES[".ipynb"]
    result = micrograde("grade", str(notebook), "--format", "json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["score"] == report["max_score"] == 100.0


def test_a_notebook_too_large_even_without_outputs_is_refused(tmp_path):
    code = {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": SOLUTION}
    padding = {"cell_type": "markdown", "metadata": {}, "source": "x" * (9 * 1024 * 1024)}
    notebook = tmp_path / "micrograd.ipynb"
    notebook.write_text(json.dumps({"nbformat": 4, "nbformat_minor": 4, "metadata": {}, "cells": [code, padding]}))
    result = micrograde("grade", str(notebook))
    assert result.returncode == 2 and "without its outputs is too large" in result.stderr


@pytest.mark.parametrize("kind", ["json", "gradescope", "classroom50"])
def test_a_folder_of_thousands_of_files_gets_a_load_error_report(tmp_path, kind):
    folder = tmp_path / "student"
    (folder / "data").mkdir(parents=True)
    (folder / "engine.py").write_text(SOLUTION)
    for i in range(walked.MAX_ENTRIES + 1):
        (folder / "data" / f"{i}.txt").touch()
    out = tmp_path / "report.json"
    result = micrograde("grade", str(folder), "--format", kind, "--output", str(out),
                        env=RUNNER_ENV if kind == "classroom50" else None)
    assert result.returncode == 1, result.stderr
    assert f"more than {walked.MAX_ENTRIES} files and folders" in result.stderr
    report = json.loads(out.read_text())
    if kind == "json":
        [diagnosis] = report["diagnoses"]
        assert diagnosis["code"] == "load-error" and "more than" in diagnosis["message"]
        assert report["score"] == 0.0 and report["max_score"] == 100.0
        assert {c["status"] for c in report["checks"]} == {"error"}
    elif kind == "gradescope":
        jsonschema.validate(report, GRADESCOPE)
        assert report["score"] == 0.0 and "more than" in report["output"] and "load-error" in report["output"]
    else:
        jsonschema.validate(report, RESULT_V1)
        assert report["score"] == 0 and report["max-score"] == 100
        assert any("more than" in json.dumps(test) for test in report["tests"])
