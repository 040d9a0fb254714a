"""Engines of other shapes than micrograd's, graded as their courses describe them, against a TA's verdicts.

Each family of ``tests/engines/`` is a course whose engine micrograd's names do not fit (Function classes with a
history record, a numpy Tensor with its own gradient, (operand, local derivative) pairs, gradients a function
returns, a dataclass node with a Parameter wrapper, ops as module functions, a tape), with its ``micrograde.toml``
describing the engine (``[engine]``, ``[ops]``), its blank, its answer key and its learners. Every folder is graded
by ``micrograde batch`` with that configuration, and what it gets must be what ``expected.toml`` says a careful TA
gives: the targets with full marks, and every diagnosis with its code, file, cell and line.
"""

from __future__ import annotations

import json
import re
import shutil
import tomllib

import pytest
from helpers import ROOT, micrograde

ENGINES = ROOT / "tests" / "engines"
FAMILIES = sorted(p.parent.name for p in ENGINES.glob("*/expected.toml"))


def graded(family: str, tmp_path) -> dict[str, dict]:
    """Every folder of ``family`` (its course, blank and learners) graded in one batch: each report, by folder."""
    base = ENGINES / family
    class_ = tmp_path / "class"
    class_.mkdir()
    for folder in (base / "course", base / "blank", *sorted((base / "learners").iterdir())):
        shutil.copytree(folder, class_ / folder.name)
    done = micrograde("batch", str(class_), "--out", str(tmp_path / "out"), "--config", str(base / "micrograde.toml"),
                      "--jobs", "2", timeout=900)
    assert done.returncode in (0, 1), done.stderr[-2000:]
    return {path.stem: json.loads(path.read_text()) for path in (tmp_path / "out" / "reports").glob("*.json")}


def full_marks(report: dict) -> list[str]:
    """The targets a report gives full marks: all their points, or (a given part) every check passed."""
    checks = report["checks"]
    return sorted(name for name, t in report["targets"].items()
                  if (t["max_score"] > 0 and t["score"] == t["max_score"])
                  or (t.get("given") and all(c["status"] == "passed" for c in checks if c["target"] == name)))


def said(diagnoses: list[dict], cells: bool) -> list[tuple]:
    return sorted((d["target"], d["code"], d.get("file"), d.get("line"), *((d.get("cell"),) if cells else ()))
                  for d in diagnoses)


@pytest.mark.parametrize("family", FAMILIES)
def test_every_folder_gets_the_verdict_a_ta_gives(family, tmp_path):
    expected = tomllib.loads((ENGINES / family / "expected.toml").read_text(encoding="utf-8"))
    reports = graded(family, tmp_path)
    verdicts = {"course": expected["course"], "blank": expected["blank"], **expected["learners"]}
    assert sorted(reports) == sorted(verdicts)
    for name, verdict in verdicts.items():
        report = reports[name]
        cells = any("cell" in d for d in verdict.get("diagnoses", []))
        assert (full_marks(report), said(report["diagnoses"], cells)) == (
            sorted(verdict.get("full", [])), said(verdict.get("diagnoses", []), cells)), (name, verdict.get("why"))


def test_a_blank_engine_of_another_shape_is_not_implemented_part_by_part(tmp_path):
    """The fast loop's one family: tinydiff's blank, every part the learner writes not-implemented at its stub,
    and its answer key with full marks (Function classes, a history record, derivatives on leaves only)."""
    base = ENGINES / "function_ctx"
    expected = tomllib.loads((base / "expected.toml").read_text(encoding="utf-8"))
    for name in ("blank", "course"):
        report = tmp_path / f"{name}.json"
        done = micrograde("grade", str(base / name), "--config", str(base / "micrograde.toml"), "--format", "json",
                          "--output", str(report))
        assert done.returncode in (0, 1), done.stderr
        got = json.loads(report.read_text())
        assert full_marks(got) == sorted(expected[name]["full"])
        assert said(got["diagnoses"], False) == said(expected[name].get("diagnoses", []), False)


# What micrograde takes where a course's [engine] says nothing (a leaf ``Class(x)`` is the first constructor it tries).
UNSAID = {"value": "data", "grad": "grad", "backward": "out.backward()"}


def test_the_staff_pages_worked_examples_say_what_their_courses_say():
    """Each example of docs/staff.md's "Your course's own engine" is its family's [engine] and [ops]: every key it
    writes as the course's file has it, and every key it leaves out one micrograde takes the same without it."""
    page = (ROOT / "docs" / "staff.md").read_text(encoding="utf-8")
    shown = re.findall(r"\(`tests/engines/([a-z_]+)`[^)]*\).*?```toml\n(.*?)```", page, re.S)
    assert sorted(name for name, _ in shown) == FAMILIES
    for family, block in shown:
        said = tomllib.loads(block)
        course = tomllib.loads((ENGINES / family / "micrograde.toml").read_text(encoding="utf-8"))
        engine, theirs = said.get("engine", {}), course.get("engine", {})
        for key, value in theirs.items():
            if key == "leaf" and value == f"{course['scaffold']['class']}(x)" and key not in engine:
                continue
            assert engine.get(key, UNSAID.get(key)) == value, (family, key)
        assert set(engine) <= set(theirs), family
        for op, table in said.get("ops", {}).items():
            assert course["ops"][op] == table, (family, op)
