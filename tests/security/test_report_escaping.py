"""Every report format stays valid for its consumer, whatever the submission prints, raises or is named.

A submission controls its exception messages, its printed output, its file
name and its notebook cells' source. Each format is checked with the program
that reads it: xmlschema with Jenkins' junit-10.xsd, the JSON schemas of
Gradescope and Classroom 50, a Markdown renderer (mistune), and a search for
every character a terminal, an editor or a bidi-aware view would act on.
"""

from __future__ import annotations

import json
import os
import re

import jsonschema
import mistune
import pytest
from helpers import SOLUTION
from test_ci_formats import GRADESCOPE, JUNIT_XSD
from test_classroom import RESULT_V1, RUNNER_ENV

from grader.grade import grade
from grader.report.formats import FORMATS

# XML-illegal code points, C0 and C1 controls, terminal escapes, line separators, bidi overrides and isolates.
EVIL = "\x00\x08\x0b\x0c\r\x1b[2J\x1b]0;x\x07\x9b31m\x85\u2028\u2029\u202a\u202b\u202c\u202d\u202e\u2066\u2067" \
       "\u2068\u2069\ufeff\ufffe\uffff"
# What may appear in no rendered report (raw): every character of EVIL but the newline-free text around it, and
# lone surrogates (a file name that is not UTF-8).
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff\ud800-\udfff\ufffe\uffff]")
SHOUTING = SOLUTION.replace("    def __mul__(self, other):\n",
                            f"    def __mul__(self, other):\n        raise ValueError({EVIL!r} * 2)\n", 1)
IN_SOURCE = EVIL.replace("\x00", "").replace("\r", "")  # Python source holds no NUL, and CR ends a line
SHOUTING = f"# {IN_SOURCE}\nprint({EVIL!r})\n" + SHOUTING


def strings(data: object):
    if isinstance(data, str):
        yield data
    elif isinstance(data, dict):
        for key, value in data.items():
            yield key
            yield from strings(value)
    elif isinstance(data, list):
        for value in data:
            yield from strings(value)


def assert_clean(rendered: dict[str, str]) -> None:
    for name, text in rendered.items():
        assert not RAW.search(text), (name, RAW.search(text))
        text.encode("utf-8")  # no lone surrogate either
    for name in ("json", "gradescope", "classroom50"):
        assert not any(RAW.search(s) for s in strings(json.loads(rendered[name]))), name
    jsonschema.validate(json.loads(rendered["gradescope"]), GRADESCOPE)
    jsonschema.validate(json.loads(rendered["classroom50"]), RESULT_V1)
    JUNIT_XSD.validate(rendered["junit"])
    html = mistune.html(rendered["markdown"])
    assert not RAW.search(html) and "\\u2028" in html  # shown as an escape, not acted on


def render_all(report, monkeypatch) -> dict[str, str]:
    for name, value in RUNNER_ENV.items():
        monkeypatch.setenv(name, value)
    return {name: fmt.render(report) for name, fmt in FORMATS.items()}


def test_a_python_file_that_prints_raises_and_is_named_anything(mode, tmp_path, monkeypatch):
    folder = tmp_path / os.fsdecode(b"sub\xff")  # a name that is not UTF-8: a lone surrogate in Python
    folder.mkdir()
    path = folder / f"engine{EVIL.replace(chr(0), '')}.py"  # every character but NUL may be in a file name
    path.write_text(SHOUTING)
    report = grade(path)
    assert report.codes("mul") and EVIL in report.output + " ".join(c.message for c in report.checks)
    assert_clean(render_all(report, monkeypatch))


@pytest.mark.parametrize("minor", [4])
def test_a_notebook_whose_cells_say_anything(mode, tmp_path, monkeypatch, minor):
    notebook = {"nbformat": 4, "nbformat_minor": minor, "metadata": {}, "cells": [
        {"cell_type": "markdown", "metadata": {}, "source": f"# {EVIL}"},
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": SHOUTING},
    ]}
    path = tmp_path / f"micrograd{EVIL[4:]}.ipynb"
    path.write_text(json.dumps(notebook))
    report = grade(path)
    assert report.codes("mul"), [(d.code, d.message) for d in report.diagnoses]
    assert_clean(render_all(report, monkeypatch))
