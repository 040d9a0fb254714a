"""Batch grading for staff: one report per student, a gradebook, a class summary; survives anything."""

from __future__ import annotations

import csv
import json
import os
import pty
import re
import signal
import subprocess
import sys
import time

import pytest
from helpers import ROOT, SOLUTION, micrograde, processes_with
from recipes import run_recipe

from grader.child.shipping import child_mark

OVERWRITE = SOLUTION.replace("self.grad += other.data * out.grad", "self.grad = other.data * out.grad").replace(
    "other.grad += self.data * out.grad", "other.grad = self.data * out.grad")
HANGS = SOLUTION.replace('        out = Value(self.data + other.data, (self, other), "+")',
                         "        while True:\n            pass")


@pytest.fixture
def classroom(tmp_path):
    """Submissions laid out as LMS downloads are: files, and a folder per student."""
    folder = tmp_path / "submissions"
    folder.mkdir()
    (folder / "alice.py").write_text(SOLUTION)
    (folder / "bob.py").write_text(OVERWRITE)
    (folder / "carol").mkdir()
    (folder / "carol" / "engine.py").write_text(SOLUTION.split("def train_step")[0])
    (folder / "carol" / "train.py").write_text("def train_step" + SOLUTION.split("def train_step")[1])
    (folder / "dave.ipynb").write_text("{ not a notebook")
    (folder / "erin.py").write_text("import os\nos._exit(0)\n" + SOLUTION)
    (folder / "frank.py").write_text(HANGS)
    (folder / ".DS_Store").write_text("ignored")
    return folder


def assert_staff_page(page: str) -> None:
    """The class summary: every section, charts as inline SVG, nothing fetched, who was not graded and why."""
    from test_html import Page

    parsed = Page(page)
    assert parsed.fetches() == [] and parsed.count("script") == 0 and parsed.count("svg") >= 3
    for heading in ("Score distribution", "Students with all of a target's points", "Misconceptions per target",
                    "Most common smallest counterexamples", "Not graded in full"):
        assert f"<h2>{heading}" in page, heading
    problems = page.split("Not graded in full")[1]
    assert "dave" in problems and "unreadable" in problems and "not a notebook" in problems
    assert "erin" in problems and "load-error" in problems
    assert "frank" in problems and "timeout" in problems
    assert "(a * a)" in page.split("Most common smallest counterexamples")[1]  # bob's grad-overwrite


def batch(folder, out, *extra, timeout="1"):
    return micrograde("batch", str(folder), "--out", str(out), "--timeout", timeout, *extra, timeout=600)


def rows(out) -> dict[str, dict]:
    with open(out / "grades.csv", newline="") as fh:
        return {row["id"]: row for row in csv.DictReader(fh)}


def test_batch_grades_everyone_and_survives_the_bad_ones(classroom, tmp_path):
    out = tmp_path / "results"
    result = batch(classroom, out, "--jobs", "2")
    assert result.returncode == 0, result.stderr
    grades = rows(out)
    assert sorted(grades) == ["alice", "bob", "carol", "dave", "erin", "frank"]
    assert grades["alice"]["score"] == "100" and grades["carol"]["score"] == "100"
    assert grades["bob"]["mul"] == "9" and grades["bob"]["diagnoses"] == "mul:grad-overwrite"
    assert grades["dave"]["status"] == "unreadable" and grades["dave"]["score"] == ""
    assert grades["erin"]["diagnoses"] == "submission:load-error"
    assert "add:timeout" in grades["frank"]["diagnoses"] and grades["frank"]["add"] == "0"
    assert list(next(csv.reader(open(out / "grades.csv")))) == [
        "id", "score", "max_score", "add", "mul", "pow", "tanh", "backward", "train_step", "status", "diagnoses",
        "reason"]
    assert "not a notebook" in grades["dave"]["reason"] and grades["dave"]["max_score"] == "100"
    assert "load" in grades["erin"]["reason"]
    report = json.loads((out / "reports" / "bob.json").read_text())
    assert report["student"] == "bob" and report["schema_version"] == 1 and len(report["content_sha256"]) == 64
    summary = (out / "summary.md").read_text()
    assert "| `mul:grad-overwrite` | 1 | bob |" in summary and "| `submission:unreadable` | 1 | dave |" in summary
    page = (out / "summary.html").read_text()
    assert "<svg" in page and "mul:grad-overwrite" in page
    assert_staff_page(page)
    with open(out / "gradebook.csv", newline="") as fh:
        lms = list(csv.reader(fh))
    assert lms[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "micrograde"]
    assert lms[1] == ["Points Possible", "", "", "", "", "100"]
    assert ["bob", "", "", "bob", "", grades["bob"]["score"]] in lms
    assert ["dave", "", "", "dave", "", ""] in lms  # not graded: blank, which Canvas and Moodle leave ungraded
    assert "6/6" in result.stderr  # plain progress lines when not on a terminal
    assert "dave: not graded (unreadable)" in result.stderr
    # dave is a blank in the summary too: in neither the mean nor the histogram.
    scores = [float(grades[s]["score"]) for s in grades if s != "dave"]
    assert summary.splitlines()[2] == (f"6 submissions, 5 graded; mean score {sum(scores) / 5:.1f}; 2 with full marks; "
                                       "1 not graded (blank in the gradebooks, listed below).")
    histogram = summary.split("## Score distribution")[1].split("## Targets")[0]
    assert sum(int(row.split("|")[2]) for row in histogram.splitlines() if row.startswith("| ") and "–" in row) == 5
    assert json.loads((out / "reports" / "dave.json").read_text())["score"] is None


def test_reports_do_not_depend_on_jobs_or_order(classroom, tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    batch(classroom, one, "--jobs", "1")
    batch(classroom, two, "--jobs", "2")
    for report in sorted((one / "reports").iterdir()):
        assert report.read_text() == (two / "reports" / report.name).read_text(), report.name
    assert (one / "grades.csv").read_text() == (two / "grades.csv").read_text()


def test_restart_skips_unchanged_and_regrades_changed(classroom, tmp_path):
    out = tmp_path / "results"
    batch(classroom, out, "--jobs", "2")
    before = {p.name: p.stat().st_mtime_ns for p in (out / "reports").iterdir()}
    (classroom / "bob.py").write_text(SOLUTION)
    again = batch(classroom, out, "--jobs", "2")
    after = {p.name: p.stat().st_mtime_ns for p in (out / "reports").iterdir()}
    assert [name for name in before if before[name] != after[name]] == ["bob.json"]
    assert again.stderr.count("unchanged, kept") == 5
    assert rows(out)["bob"]["score"] == "100"


def test_an_interrupted_batch_loses_nothing(classroom, tmp_path):
    for i in range(12):
        (classroom / f"extra{i:02d}.py").write_text(OVERWRITE if i % 2 else SOLUTION)
    out = tmp_path / "results"
    process = subprocess.Popen([sys.executable, "-m", "grader", "batch", str(classroom), "--out", str(out),
                                "--jobs", "2", "--timeout", "1"], cwd=ROOT, stderr=subprocess.PIPE, text=True)
    for line in process.stderr:
        if line.startswith("4/"):
            break
    process.send_signal(signal.SIGKILL)
    process.wait()
    time.sleep(0.2)
    written = list((out / "reports").iterdir())
    assert written, "some reports were written before the interruption"
    for path in written:
        assert path.suffix == ".json", path  # no temporary file is left in place of a report
        json.loads(path.read_text())
    kept = {p.name: p.read_text() for p in written}
    result = batch(classroom, out, "--jobs", "2")
    assert result.returncode == 0
    assert result.stderr.count("unchanged, kept") >= len(kept)
    assert len(rows(out)) == 18
    for name, text in kept.items():
        assert (out / "reports" / name).read_text() == text


def test_batch_bad_invocation(tmp_path):
    result = micrograde("batch", str(tmp_path / "missing"), "--out", str(tmp_path / "o"))
    assert result.returncode == 2 and "not a directory" in result.stderr
    result = micrograde("batch", str(tmp_path), "--out", str(tmp_path / "o"), "--jobs", "0")
    assert result.returncode == 2 and "--jobs" in result.stderr


def test_a_dying_grading_process_costs_only_its_student(tmp_path):
    folder = tmp_path / "submissions"
    folder.mkdir()
    (folder / "alice.py").write_text(SOLUTION)
    (folder / "zed.py").write_text(HANGS)  # graded last; its worker is killed while it waits
    out = tmp_path / "results"
    process = subprocess.Popen([sys.executable, "-m", "grader", "batch", str(folder), "--out", str(out),
                                "--jobs", "1", "--timeout", "20"], cwd=ROOT, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
    assert process.stderr.readline().startswith("1/2 alice")
    time.sleep(1.0)
    workers = processes_with(b"grader.staff.batch_process", session=process.pid)
    assert workers
    for worker in workers:
        os.kill(int(worker), signal.SIGKILL)
    assert process.wait(timeout=60) == 0
    grades = rows(out)
    assert grades["alice"]["score"] == "100"
    assert grades["zed"]["status"] == "grader-failed"
    assert "died" in json.loads((out / "reports" / "zed.json").read_text())["error"]
    # the dead worker's own child, stuck in zed's loop, died with it
    deadline = time.monotonic() + 5
    children = [child_mark(int(worker)).encode() for worker in workers]
    while time.monotonic() < deadline and processes_with(*children):
        time.sleep(0.1)
    assert processes_with(*children) == []



@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="only Linux lets a process choose its cores")
@pytest.mark.parametrize("more_jobs_than_cores", [False, True])
def test_each_worker_and_its_children_keep_to_a_core_of_their_own_as_batch_work(tmp_path, more_jobs_than_cores):
    cores = sorted(os.sched_getaffinity(0))
    jobs = len(cores) + 1 if more_jobs_than_cores else min(len(cores), 2)
    folder = tmp_path / "submissions"
    folder.mkdir()
    for i in range(jobs):
        (folder / f"s{i}.py").write_text(HANGS)  # every worker stays in a child until the test ends it
    process = subprocess.Popen([sys.executable, "-m", "grader", "batch", str(folder), "--out", str(tmp_path / "out"),
                                "--jobs", str(jobs), "--timeout", "30"], cwd=ROOT, stderr=subprocess.DEVNULL,
                               start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            workers = processes_with(b"grader.staff.batch_process", session=process.pid)
            children = {worker: processes_with(child_mark(int(worker)).encode()) for worker in workers}
            if len(workers) == jobs and all(len(found) >= 2 for found in children.values()):  # launcher and child
                break
            time.sleep(0.1)
        assert len(workers) == jobs, "not every worker started"
        placed = {worker: {frozenset(os.sched_getaffinity(int(pid))) for pid in [worker, *children[worker]]}
                  for worker in workers}
        policies = {os.sched_getscheduler(int(pid)) for worker in workers for pid in [worker, *children[worker]]}
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    assert policies == {os.SCHED_BATCH}  # a reply wakes the worker without taking the core from its child
    if more_jobs_than_cores:  # more workers than cores: the system places them
        assert all(found == {frozenset(cores)} for found in placed.values()), placed
    else:
        assert all(len(found) == 1 for found in placed.values()), placed  # the children with their worker
        assert sorted(core for found in placed.values() for cpus in found for core in cpus) == cores[:jobs], placed


def test_student_ids_never_collide_and_cells_are_never_formulas(tmp_path):
    folder = tmp_path / "submissions"
    (folder / "bob").mkdir(parents=True)
    (folder / "bob" / "engine.py").write_text(SOLUTION)
    (folder / "bob.py").write_text(OVERWRITE)
    (folder / "bob.py.ipynb").write_text("{ not a notebook")
    (folder / "=HYPERLINK(1).py").write_text("@SUM(1)")
    out = tmp_path / "results"
    recipe = run_recipe("docs/staff.md", "## Batch grading", tmp_path)  # the docs' own command
    assert recipe.returncode == 0, recipe.stderr
    grades = rows(out)
    assert sorted(grades) == ["'=HYPERLINK(1)", "bob", "bob.py", "bob.py.ipynb"]
    assert grades["bob"]["score"] == "100" and grades["bob.py"]["mul"] == "9"
    assert grades["bob.py.ipynb"]["status"] == "unreadable"
    assert sorted(p.name for p in (out / "reports").iterdir()) == [
        "=HYPERLINK(1).json", "bob.json", "bob.py.ipynb.json", "bob.py.json"]
    with open(out / "grades.csv", newline="") as fh:
        cells = [c for row in csv.reader(fh) for c in row]
    assert not any(c.startswith(("=", "+", "-", "@", "\t", "\r")) for c in cells)


def test_what_a_rerun_grades_again(tmp_path):
    folder = tmp_path / "submissions"
    folder.mkdir()
    (folder / "alice.py").write_text(SOLUTION)
    (folder / "bob.py").write_text(OVERWRITE)
    out = tmp_path / "results"
    old = os.umask(0o022)
    try:
        batch(folder, out)
    finally:
        os.umask(old)
    assert {oct(p.stat().st_mode & 0o777) for p in [*(out / "reports").iterdir(), out / "grades.csv"]} == {"0o644"}
    # a grading process that failed is never kept
    report = out / "reports" / "bob.json"
    failed = {**json.loads(report.read_text()), "status": "grader-failed", "error": "the grading process died"}
    report.write_text(json.dumps(failed))
    again = batch(folder, out)
    assert again.stderr.count("unchanged, kept") == 1 and rows(out)["bob"]["status"] == "graded"
    # another --timeout, or --force: everyone again
    assert batch(folder, out, timeout="2").stderr.count("unchanged, kept") == 0
    assert batch(folder, out, timeout="2").stderr.count("unchanged, kept") == 2
    assert batch(folder, out, "--force", timeout="2").stderr.count("unchanged, kept") == 0


def test_batch_on_an_empty_folder(tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / ".DS_Store").write_text("")
    result = micrograde("batch", str(tmp_path / "empty"), "--out", str(tmp_path / "o"))
    assert result.returncode == 2 and "no submissions" in result.stderr and result.stderr.count("\n") == 1


def test_progress_bar_on_a_terminal(tmp_path):
    folder = tmp_path / "submissions"
    folder.mkdir()
    for name in ("alice", "bob"):
        (folder / f"{name}.py").write_text(SOLUTION)
    leader, follower = pty.openpty()
    process = subprocess.Popen([sys.executable, "-m", "grader", "batch", str(folder), "--out", str(tmp_path / "o"),
                                "--jobs", "1"], cwd=ROOT, stderr=follower, stdout=subprocess.DEVNULL)
    os.close(follower)
    shown = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the terminal closed with the process
            break
        if not chunk:
            break
        shown += chunk
    assert process.wait(timeout=120) == 0
    os.close(leader)
    lines = shown.decode().split("\r")
    assert re.search(r"\[#{15}\.{15}\] 1/2 \d+\.\d/s \d+ s left", lines[1]), lines
    assert re.search(r"\[#{30}\] 2/2 \d+\.\d/s", lines[2]), lines


def test_the_summary_lists_reports_flagged_for_a_human():
    """An autograd library left out of ungraded code keeps the grade, and the summary lists it to look at."""
    from grader.staff.summary import summarise

    flagged = ("work.py, line 3 imports torch outside the graded code: it and the lines that use it were left "
               "out and the rest of the file ran; no graded code uses it, so the grade stands, flagged for a human "
               "to look at")
    report = {"status": "graded", "score": 100.0, "max_score": 100.0, "targets": {}, "diagnoses": [],
              "warnings": [flagged]}
    summary = summarise([("gina", report)])
    assert summary.problems == [("gina", "flagged", flagged)] and summary.mean == 100.0
