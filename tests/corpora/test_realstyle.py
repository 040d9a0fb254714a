"""Submissions written the way real learners write them get the verdict a careful human grader gives.

Each submission in ``tests/realstyle/`` is graded as ``micrograde grade --format json`` grades it (in
this process, once a session: ``golden.report``), and its report is compared with
``tests/realstyle/expected.toml``: per target full marks, or exactly the expected diagnosis codes
pointing at the statement at fault; the submission-level diagnoses; the warnings.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import nbformat
import pytest
from golden import REALSTYLE, REALSTYLE_EXPECTED, report_of

EXPECTED = REALSTYLE_EXPECTED
DEFAULT_TARGETS = ("add", "mul", "pow", "tanh", "backward", "train_step")
RELU_TARGETS = ("add", "mul", "pow", "relu", "backward", "train_step")
OPS_TARGETS = ("add", "mul", "pow", "tanh", "neg", "sub", "truediv", "backward", "train_step")
NOT_SUBMISSIONS = {"expected.toml", "relu-course.toml", "ops-course.toml", "numpy-course.toml", "short-load.toml",
                   "ruff.toml"}


def mentions(text: str, phrase: str) -> bool:
    """``phrase`` occurs in ``text`` as whole words, so that ``value`` is not found in ``Value``."""
    before = r"(?<!\w)" if re.match(r"\w", phrase) else ""
    after = r"(?!\w)" if re.search(r"\w$", phrase) else ""
    return re.search(before + re.escape(phrase) + after, text) is not None


def assert_diagnoses(found: list[dict], expected: dict, where: str) -> None:
    """Exactly the expected codes, each at the expected file, cell and line, saying what it must."""
    assert sorted(d["code"] for d in found) == sorted(expected["codes"]), f"{where}: {found}"
    for diagnosis in found:
        if "line" in expected:
            assert diagnosis["line"] == expected["line"], f"{where}: line of {diagnosis}"
        if "cell" in expected:
            assert diagnosis.get("cell") == expected["cell"], f"{where}: cell of {diagnosis}"
        if "file" in expected:
            assert Path(diagnosis["file"] or "").name == expected["file"], f"{where}: file of {diagnosis}"
        for phrase in expected.get("says", []):
            assert mentions(diagnosis["message"], phrase), f"{where}: {phrase!r} not in {diagnosis['message']!r}"


def assert_verdict(report: dict, expected: dict, targets: tuple[str, ...]) -> None:
    """The report gives every target, and the submission as a whole, exactly the expected verdict."""
    assert list(report["targets"]) == list(targets)
    for target in targets:
        verdict = expected[target]
        score, max_score = report["targets"][target]["score"], report["targets"][target]["max_score"]
        found = [d for d in report["diagnoses"] if d["target"] == target]
        if verdict == "full":
            assert (score, found) == (max_score, []), f"{target} should keep full marks: {score}/{max_score} {found}"
        elif verdict == "lost":
            assert (score, found) == (0.0, []), f"{target} should lose every point, undiagnosed: {score} {found}"
        elif isinstance(verdict, list):  # two bugs: each its own diagnosis, at its own line
            assert score < max_score, f"{target} should lose points"
            assert sorted(d["code"] for d in found) == sorted(c for bug in verdict for c in bug["codes"]), found
            for bug in verdict:
                assert_diagnoses([d for d in found if d["code"] in bug["codes"]], bug, target)
        else:
            assert score < max_score, f"{target} should lose points"
            assert_diagnoses(found, verdict, target)
    assert_diagnoses([d for d in report["diagnoses"] if d["target"] == "submission"],
                     expected.get("submission") or {"codes": []}, "submission")
    if "ungraded" in expected:  # what no target read, as the report lists it, exactly
        assert [u["name"] for u in report["ungraded"]] == expected["ungraded"], report["ungraded"]
    for phrases in expected.get("warnings", []):
        assert any(all(mentions(w, p) for p in phrases) for w in report["warnings"]), \
            f"no warning says {phrases}: {report['warnings']}"
    everything_full = all(expected[t] == "full" for t in targets) and not expected.get("submission")
    assert (report["score"] == report["max_score"]) == everything_full


def for_this_python(name: str) -> dict:
    """The expectations of ``name``, with those that change on the running Python applied."""
    expected = dict(EXPECTED[name])
    if sys.version_info >= (3, 12):
        expected.update(expected.get("python_3_12", {}))
    return expected


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_default_course(name):
    expected = for_this_python(name)
    assert_verdict(report_of(f"realstyle/{name}"), expected, DEFAULT_TARGETS)


RELU_CASES = sorted(name for name in EXPECTED if "relu_course" in EXPECTED[name])


@pytest.mark.parametrize("name", RELU_CASES)
def test_relu_course(name):
    assert_verdict(report_of(f"realstyle/{name}@relu"), EXPECTED[name]["relu_course"], RELU_TARGETS)


OPS_CASES = sorted(name for name in EXPECTED if "ops_course" in EXPECTED[name])


@pytest.mark.parametrize("name", OPS_CASES)
def test_ops_course(name):
    """Graded with ``ops-course.toml``, which makes ``__neg__``, ``__sub__`` and ``__truediv__`` targets of their own:
    an op written through another is right in itself when the ops it calls are, and each bug is charged once."""
    assert_verdict(report_of(f"realstyle/{name}@ops"), EXPECTED[name]["ops_course"], OPS_TARGETS)


def test_every_submission_has_an_expected_verdict():
    """Every file of the folder has its verdict; a verdict may name a learner's file of the assignments'
    corpus (tests/assignments/) rather than keep a copy of it here."""
    submissions = {p.name for p in REALSTYLE.iterdir() if not p.name.startswith((".", "__"))} - NOT_SUBMISSIONS
    paths = [Path(EXPECTED[name]["path"]) for name in EXPECTED]
    assert submissions == {p.parts[0] for p in paths if p.parts[0] != ".."}
    assert all((REALSTYLE / p).exists() for p in paths if p.parts[0] == "..")
    assert len(submissions) >= 30
    assert RELU_CASES, "karpathy-style relu engines need relu-course expectations"
    assert OPS_CASES, "engines with delegating operators need ops-course expectations"


NOTEBOOKS = sorted({*REALSTYLE.rglob("*.ipynb"), *((REALSTYLE / e["path"]).resolve() for e in EXPECTED.values()
                                                    if e["path"].endswith(".ipynb"))})


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebooks_are_saved_as_jupyter_saves_them(path):
    """nbformat 4.5, sources as lists of lines, outputs and counts present: byte for byte what nbformat writes."""
    text = path.read_text()
    notebook = nbformat.reads(text, as_version=nbformat.NO_CONVERT)
    nbformat.validate(notebook)
    assert (notebook.nbformat, notebook.nbformat_minor) == (4, 5)
    assert nbformat.writes(notebook) + "\n" == text
    raw = json.loads(text)
    code = [cell for cell in raw["cells"] if cell["cell_type"] == "code"]
    assert all(isinstance(cell["source"], list) and "outputs" in cell and "execution_count" in cell for cell in code)
    assert any(len(cell["source"]) > 1 for cell in code)
