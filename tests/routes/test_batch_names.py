"""Batch files stay one row per student, whatever the students name their files, and a resumed batch keeps
only the reports it wrote itself."""

from __future__ import annotations

import csv
import json
import re

from helpers import SOLUTION
from test_batch import batch, rows
from test_ci_formats import BUGGY

# What must never reach a CSV cell or a progress line raw: controls (CR, LF, ESC, NEL...), line and paragraph
# separators, bidirectional controls.
RAW = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
FORMULA = ("=", "+", "-", "@", "\t", "\r", "\uff1d", "\uff0b", "\uff0d", "\uff20")
HOSTILE = ["mallory\rbob", "eve\nbob", "tab\tbob", "esc\x1b[2K\x1b[1Gbob", "csi\x9b2Kbob", "rtl\u202ebob",
           "iso\u2066bob", "ls\u2028bob", "ps\u2029bob", "nel\x85bob", "=HYPERLINK(\"x\")", "\uff1dSUM(1)",
           "back\\rslash"]


def test_hostile_ids_are_one_quoted_row_each_and_never_printed_raw(mode, tmp_path):
    folder = tmp_path / "submissions"
    folder.mkdir()
    (folder / "bob.py").write_text(SOLUTION)
    for student in HOSTILE:
        (folder / f"{student}.py").write_text("x = 1\n")  # no Value class: graded at once, 0 points
    out = tmp_path / "out"
    result = batch(folder, out, "--jobs", "2")
    assert result.returncode == 0, result.stderr
    for name, header_rows in (("grades.csv", 1), ("gradebook.csv", 2)):
        with open(out / name, newline="", encoding="utf-8") as fh:
            table = list(csv.reader(fh))
        students = table[header_rows:]
        assert len(students) == len(HOSTILE) + 1, name
        ids = [row[0] for row in students]
        assert len(set(ids)) == len(ids) and ids.count("bob") == 1, ids
        for row in table:
            assert not any(RAW.search(cell) or cell.startswith(FORMULA) for cell in row), row
    assert rows(out)["bob"]["score"] == "100"  # mallory's 0 never lands on bob
    progress = [line for line in result.stderr.split("\n") if line]
    assert len(progress) == len(HOSTILE) + 1 and not any(RAW.search(line) for line in progress), progress


def test_a_resumed_batch_grades_a_changed_report_again(mode, tmp_path):
    folder = tmp_path / "submissions"
    folder.mkdir()
    (folder / "mallory.py").write_text(BUGGY)
    out = tmp_path / "out"
    assert batch(folder, out).returncode == 0
    path = out / "reports" / "mallory.json"
    real = json.loads(path.read_text())
    assert real["score"] == 78.0
    again = batch(folder, out)
    assert "unchanged, kept" in again.stderr  # its own report is kept
    forged = {**real, "score": 100.0, "checks": [{**c, "status": "passed", "score": c["max_score"]}
                                                  for c in real["checks"]]}
    path.write_text(json.dumps(forged))  # the right hashes, version and settings: only the contents changed
    resumed = batch(folder, out)
    assert "unchanged, kept" not in resumed.stderr
    assert rows(out)["mallory"]["score"] == "78"


def test_names_no_encoding_can_read_and_names_that_differ_only_in_normalisation(mode, tmp_path):
    """A file name that is not UTF-8 (an LMS download unpacked on another system) and ``josé`` typed
    composed (NFC) and decomposed (NFD): every student gets a row of their own, whose id no other row
    shows, the same on every run; one odd name stops no one's grade."""
    import os
    import unicodedata

    folder = tmp_path / "submissions"
    folder.mkdir()
    composed, decomposed = unicodedata.normalize("NFC", "josé"), unicodedata.normalize("NFD", "josé")
    (folder / f"{composed}.py").write_text(SOLUTION)
    (folder / f"{decomposed}.py").write_text("x = 1\n")  # no Value class: 0 points, which must not land on josé
    with open(os.path.join(os.fsencode(folder), b"caf\xe9.py"), "w") as latin1:
        latin1.write(BUGGY)
    (folder / "bob.py").write_text(SOLUTION)
    out = tmp_path / "out"
    result = batch(folder, out, "--jobs", "2")
    assert result.returncode == 0, result.stderr
    first = (out / "grades.csv").read_text(encoding="utf-8")
    grades = rows(out)
    assert len(grades) == 4, grades  # four distinct ids
    assert grades[composed]["score"] == "100" and grades["bob"]["score"] == "100"
    assert [g["score"] for i, g in grades.items() if unicodedata.normalize("NFC", i) == composed] == ["100"]
    assert sorted(g["score"] for g in grades.values()) == ["0", "100", "100", "78"]
    again = batch(folder, out, "--jobs", "2", "--force")
    assert again.returncode == 0 and (out / "grades.csv").read_text(encoding="utf-8") == first  # stable ids
    gradebook = (out / "gradebook.csv").read_text(encoding="utf-8")
    assert len({row[0] for row in csv.reader(gradebook.splitlines()[2:])}) == 4
