"""Attacks on the grader itself, made as a hostile student would, each asserting it failed.

Every class of issue 14 (links planted for the grader to follow, root in the
child, ways out to the host, unbounded sizes, honest files, saying when a
score is not tamper-proof) is tried through the real grader, in the strongest
sandbox this machine offers and with namespaces turned off where the mode
matters. What the kernel alone stops, without the audit hook, is in test_sandbox.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from helpers import ROOT, SOLUTION, micrograde, processes_with
from test_landlock import kernel_abi

from grader.child import launcher, sandbox, workdirs
from grader.child.session import Session
from grader.child.shipping import child_mark
from grader.child.worker import WorkerLost
from grader.errors import InputError
from grader.exercise.cases import Case
from grader.grade import Options, grade
from grader.judging.plan import plan_op
from grader.submission import folder as walked
from grader.submission import source
from grader.submission.source import read_submission

REFERENCE = ROOT / "reference" / "engine.py"


def graded(tmp_path: Path, source: str, bound: float = 30.0):
    path = tmp_path / "work.py"
    path.write_text(source)
    start = time.monotonic()
    report = grade(path, Options(timeout=10.0))
    assert time.monotonic() - start < bound
    return report


def full_marks(report) -> bool:
    return report.score == report.max_score and not report.diagnoses


def printed(report) -> dict:
    """What the submission printed as ``name: value`` lines."""
    return dict(line.split(": ", 1) for line in report.output.splitlines() if ": " in line)


def graded_with_full_marks(tmp_path: Path, source: str):
    """The report of a submission that must keep every point, and what it printed."""
    report = graded(tmp_path, source)
    assert full_marks(report), report.diagnoses
    return report, printed(report)


ATTEMPT = '''
def attempt(name, action):
    try:
        result = action()
        print(f"{name}: ok {result!r}"[:200])
    except BaseException as exc:
        print(f"{name}: refused {type(exc).__name__}")
'''


def test_the_grader_never_follows_links_in_the_working_directory(tmp_path, mode, monkeypatch):
    """Links where the grader once opened the child's output, as a bypassed audit hook would leave them, in
    every child's working directory."""
    canary = tmp_path / "text.py"  # stands for any file the grader can write: grader/report/text.py
    canary.write_text("UNTOUCHED = True\n")
    made = workdirs.new_job_folder

    def planted(prefix: str = "micrograde-") -> str:
        workdir = Path(made(prefix))
        for n in (1, 2, 3):
            for stream in ("stdout", "stderr"):
                (workdir / f"{stream}.{n}").symlink_to(canary)
        return str(workdir)

    monkeypatch.setattr(workdirs, "new_job_folder", planted)
    # a crash in __add__ makes the grader start a second child
    source = "print('hello from the child')\n" + SOLUTION.replace(
        "    def __add__(self, other):", "    def __add__(self, other):\n        import os\n        os._exit(3)")
    path = tmp_path / "work.py"
    path.write_text(source)
    session = Session(read_submission(path), Options(timeout=10.0).exercise())
    session.open()
    add = plan_op(Case(((("leaf", "a"), ("leaf", "b"), ("add", 0, 1)),), (("a", 1.0), ("b", 2.0))), "add").request
    for _ in range(2):  # the loaded child dies in __add__; the second call starts a fresh one, which dies too
        with pytest.raises(WorkerLost):
            session.call(add, time.monotonic() + 10)
    output = session.observed().output
    session.close()
    assert canary.read_text() == "UNTOUCHED = True\n"
    # loaded by the first child, the train_step child started beside it, and the fresh one
    assert output.count("hello from the child") == 3


def test_a_child_dies_with_its_grading_process(tmp_path, mode):
    """Whatever uid the child ends up with (a change of uid clears the kernel's parent-death signal)."""
    path = tmp_path / "work.py"
    path.write_text("while True:\n    pass\n" + SOLUTION)
    grading = subprocess.Popen([sys.executable, "-m", "grader", "grade", str(path), "--timeout", "60"], cwd=ROOT,
                               start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    mark = child_mark(grading.pid).encode()
    deadline = time.monotonic() + 30
    while not processes_with(mark) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert processes_with(mark), "the child never started"
    time.sleep(0.5)  # past the child's confinement, uid change included
    grading.kill()
    grading.wait()
    deadline = time.monotonic() + 5
    while processes_with(mark) and time.monotonic() < deadline:
        time.sleep(0.1)
    leftover = processes_with(mark)
    for pid in leftover:
        os.kill(int(pid), signal.SIGKILL)
    assert leftover == []


def test_links_out_of_a_submission_are_refused(tmp_path):
    secret = tmp_path / "secret.py"
    secret.write_text("class Value:\n    TOKEN = 'do-not-grade-me'\n")
    folder = tmp_path / "student"
    folder.mkdir()
    (folder / "micrograd.py").write_text(SOLUTION)
    (folder / "helper.py").symlink_to(secret)
    result = micrograde("grade", str(folder))
    assert result.returncode == 2 and "link out of the submission" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
    (folder / "helper.py").unlink()
    (folder / "helper.py").symlink_to(folder / "micrograd.py")  # a link inside the tree is fine
    assert micrograde("grade", str(folder)).returncode == 0
    entry = tmp_path / "bob.py"
    entry.symlink_to(Path("/etc/passwd"))
    result = micrograde("grade", str(entry))
    assert result.returncode == 2 and "link out of" in result.stderr


def test_root_in_the_child_is_not_root(tmp_path, mode):
    source = SOLUTION + ATTEMPT + (
        "import os\n"
        "status = dict(line.split(':', 1) for line in open('/proc/self/status'))\n"
        "for key in ('CapEff', 'CapPrm', 'CapBnd', 'NoNewPrivs', 'Seccomp'):\n"
        "    print(f'{key}: {status[key].strip()}')\n"
        "print(f'uid: {os.getuid()}')\n"
    )
    report, seen = graded_with_full_marks(tmp_path, source)
    reading_as_root = report.sandbox["user"].startswith("nobody, reading files as root")
    assert int(seen["CapEff"], 16) == int(seen["CapPrm"], 16) == (4 if reading_as_root else 0)  # DAC_READ_SEARCH
    # Emptying the bounding set takes CAP_SETPCAP: a grader run by an ordinary user without namespaces has none,
    # nor any capability to lose, and no_new_privs keeps it from ever gaining one.
    ordinary = os.geteuid() != 0 and mode == "none"
    assert seen["CapBnd"] == "0000000000000000" or ordinary, seen
    assert (seen["NoNewPrivs"], seen["Seccomp"]) == ("1", "2")
    assert report.sandbox["seccomp"] is True
    assert report.sandbox["capabilities"] == ("none" if not reading_as_root else "kept" if report.sandbox[
        "landlock"].startswith("not applied") else "reading files as root, within Landlock's rules")
    assert not reading_as_root or mode == "none"
    if os.geteuid() == 0:
        assert seen["uid"] == "65534" and report.sandbox["user"].startswith("nobody")


def test_no_way_out_to_the_host(tmp_path, mode, monkeypatch):
    secret = uuid.uuid4().hex
    monkeypatch.setenv("MICROGRADE_TOKEN", secret)
    canary = tmp_path / "canary"
    canary.write_text("x")
    canary.chmod(0o600)
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(tmp_path / "grader.sock"))
    listener.listen(1)
    listener.setblocking(False)
    source = SOLUTION + ATTEMPT + (
        "import os, signal, socket\n"
        "parent = os.getppid()\n"
        "attempt('environ', lambda: open(f'/proc/{parent}/environ', 'rb').read().decode('latin-1'))\n"
        "attempt('environ of pid 1', lambda: open('/proc/1/environ', 'rb').read().decode('latin-1'))\n"
        "attempt('cmdline', lambda: open(f'/proc/{parent}/cmdline', 'rb').read())\n"
        f"attempt('socket', lambda: socket.socket(socket.AF_UNIX).connect({str(tmp_path / 'grader.sock')!r}))\n"
        "attempt('kill', lambda: os.kill(parent, signal.SIGKILL))\n"
        "attempt('kill all', lambda: os.kill(-1, signal.SIGKILL))\n"
        f"attempt('chmod', lambda: os.chmod({str(canary)!r}, 0o777))\n"
        f"attempt('chown', lambda: os.chown({str(canary)!r}, 1, 1))\n"
        f"attempt('setxattr', lambda: os.setxattr({str(canary)!r}, 'user.x', b'1'))\n"
        f"attempt('mkfifo', lambda: os.mkfifo({str(tmp_path / 'fifo')!r}))\n"
        f"attempt('mknod', lambda: os.mknod({str(tmp_path / 'node')!r}))\n"
    )
    report, seen = graded_with_full_marks(tmp_path, source)
    assert set(seen) >= {"environ", "socket", "kill", "chmod", "chown", "setxattr", "mkfifo", "mknod"}
    assert secret not in json.dumps(report.to_json())
    for name in ("socket", "kill", "kill all", "chmod", "chown", "setxattr", "mkfifo", "mknod"):
        assert seen[name].startswith("refused"), (name, seen[name])
    with pytest.raises(BlockingIOError):
        listener.accept()
    assert stat.S_IMODE(canary.stat().st_mode) == 0o600 and not os.listxattr(canary)
    assert not (tmp_path / "fifo").exists() and not (tmp_path / "node").exists()


def test_other_files_on_the_machine_are_not_there(tmp_path, mode):
    """Other students' work, batch output and copies of the reference engine: not in the child's view."""
    marker = uuid.uuid4().hex
    other = tmp_path / "submissions" / "alice" / "engine.py"
    other.parent.mkdir(parents=True)
    other.write_text(REFERENCE.read_text() + f"\n# {marker}\n")
    grades = tmp_path / "out" / "grades.csv"
    grades.parent.mkdir()
    grades.write_text(f"student,score\nalice,{marker}\n")
    source = SOLUTION + ATTEMPT + (
        f"attempt('copy', lambda: open({str(other)!r}).read())\n"
        f"attempt('grades', lambda: open({str(grades)!r}, 'a').write('bob,100\\n'))\n"
        f"attempt('checkout', lambda: open({str(ROOT / 'README.md')!r}).read())\n"
    )
    report = graded(tmp_path, source)
    seen = printed(report)
    assert seen["grades"].startswith("refused")
    assert grades.read_text() == f"student,score\nalice,{marker}\n"
    if mode == "auto":  # not there at all
        assert seen["copy"].startswith("refused FileNotFoundError")
    elif kernel_abi()[0]:  # there, and closed by Landlock (the audit hook knows only the grader's own paths)
        assert seen["copy"].startswith("refused PermissionError")
    if mode == "auto" or kernel_abi()[0]:
        assert marker not in report.output and seen["checkout"].startswith("refused")
        assert full_marks(report), report.diagnoses


def test_the_working_directory_is_bounded(tmp_path, mode):
    if mode == "none":
        pytest.skip("without namespaces the grader ends the child instead: see the next test")
    source = SOLUTION + (
        "written = files = 0\n"
        "try:\n"
        "    for i in range(40):\n"
        "        with open(f'big-{i}', 'wb') as out:\n"
        "            written += out.write(b'\\0' * (15 * 1024 * 1024))\n"
        "except OSError as exc:\n"
        "    print(f'size: {written} {exc.errno}')\n"
        "import os\n"
        "for i in range(40):\n"
        "    os.remove(f'big-{i}') if os.path.exists(f'big-{i}') else None\n"
        "try:\n"
        "    for files in range(10000):\n"
        "        open(f'f{files}', 'w').close()\n"
        "except OSError as exc:\n"
        "    print(f'files: {files} {exc.errno}')\n"
    )
    report, seen = graded_with_full_marks(tmp_path, source)
    size, size_errno = map(int, seen["size"].split())
    files, files_errno = map(int, seen["files"].split())
    assert size <= sandbox.WORK_BYTES and size_errno == 28  # ENOSPC
    assert files <= sandbox.WORK_FILES and files_errno == 28


def test_a_child_that_fills_its_working_directory_without_namespaces_is_ended(tmp_path, monkeypatch):
    """2 GiB in 16 MiB files: the grading process ends the child soon after it passes the tmpfs's bound."""
    monkeypatch.setenv("MICROGRADE_SANDBOX", "none")
    launcher.detect.cache_clear()
    chunk = sandbox.FILE_BYTES
    source = SOLUTION + (
        "import os\n"
        f"for i in range({(2 << 30) // chunk}):\n"
        "    with open(f'big-{i}', 'wb') as out:\n"
        f"        out.write(b'\\1' * {chunk})\n"
        "    print(f'written: {i + 1}', flush=True)\n"
    )
    start = time.monotonic()
    report = graded(tmp_path, source)
    launcher.detect.cache_clear()
    assert time.monotonic() - start < 20
    written = int(printed(report)["written"]) * chunk
    assert written <= sandbox.WORK_BYTES + 256 * 1024 * 1024, written >> 20
    assert report.score == 0 and [d.code for d in report.diagnoses] == ["load-error"]  # it filled it at import
    assert "left more than 256 MiB or 4096 files in its working directory" in report.diagnoses[0].message


def test_honest_files_work_in_every_mode(tmp_path, mode):
    source = SOLUTION.replace("    return loss.data", "    with open('loss.txt', 'a') as log:\n"
                                                       "        log.write(f'{loss.data}\\n')\n"
                                                       "    return loss.data") + (
        "import os, tempfile\n"
        "os.makedirs('figures', exist_ok=True)\n"
        "with open('figures/graph.svg', 'w') as out:\n"
        "    out.write('<svg/>')\n"
        "with tempfile.NamedTemporaryFile('w', suffix='.png') as tmp:\n"
        "    tmp.write('png')\n"
        "assert open(os.path.join(os.path.expanduser('~'), 'figures', 'graph.svg')).read() == '<svg/>'\n"
    )
    report = graded(tmp_path, source)
    assert full_marks(report), report.diagnoses


def test_a_submission_that_uses_a_file_as_it_loads_never_meets_its_other_self(tmp_path, mode):
    """Two children load the submission (the ops', ``train_step``'s); without namespaces they share a
    working directory, so they load one after the other, never at once."""
    source = ("import os, time\n"
              "with open('loading', 'x'):\n"  # taken while this copy loads: another copy then defines nothing
              "    time.sleep(0.3)\n"
              "os.remove('loading')\n") + SOLUTION
    report = graded(tmp_path, source)
    assert full_marks(report), report.diagnoses


@pytest.mark.parametrize("fmt", ["text", "json", "markdown", "junit", "gradescope"])
def test_every_format_says_when_the_score_is_not_tamper_proof(tmp_path, fmt, monkeypatch):
    """A machine without namespaces whose kernel has no Landlock (pretended, as the benchmark turns it off)."""
    monkeypatch.setenv("MICROGRADE_SANDBOX", "none")
    monkeypatch.setenv("MICROGRADE_LANDLOCK", "0")
    path = tmp_path / "work.py"
    path.write_text(SOLUTION)
    result = micrograde("grade", str(path), "--format", fmt)
    assert result.returncode == 0, result.stderr
    assert "not tamper-proof" in result.stdout and "Landlock not applied" in result.stdout
    if fmt == "json":
        report = json.loads(result.stdout)
        assert report["sandbox"]["tamper_proof"] is False and report["score"] == report["max_score"]
        assert report["sandbox"]["landlock"] == "not applied: turned off (MICROGRADE_LANDLOCK=0)"


def test_a_fully_confined_score_says_so(tmp_path, mode):
    """With namespaces, or without them where the kernel has Landlock (a container, a restricted runner)."""
    report = graded(tmp_path, SOLUTION)
    kernel = kernel_abi()[0]
    assert report.sandbox["tamper_proof"] is (mode == "auto" or kernel > 0)
    assert any("not tamper-proof" in w for w in report.warnings) is not report.sandbox["tamper_proof"]
    assert report.sandbox["landlock"] == (f"ABI {kernel}" if kernel else f"not applied: {kernel_abi()[1]}")


@pytest.mark.parametrize(("name", "content", "why"), [
    ("huge.py", "x = 1\n" * 3_300_000, "MB is too large"),  # 18.9 MB
    ("big.py", "x = 1\n" * 200_000, "MB is too large"),  # 1.2 MB
    ("cells.ipynb", None, "of code is too much"),
    ("many.ipynb", [{"cell_type": "markdown", "metadata": {}, "source": "x", "id": f"m{i}"} for i in range(100_000)],
     "too many to grade"),
])
def test_oversized_submissions_are_refused_before_parsing(tmp_path, name, content, why):
    path = tmp_path / name
    if content is None:  # a notebook under the file limit whose code is over the code limit
        cell = {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                "source": ["x = 1\n"] * 80_000}
        content = [dict(cell, id=f"c{i}") for i in range(6)]
    if isinstance(content, list):
        path.write_text(json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": content}))
    else:
        path.write_text(content)
    start = time.monotonic()
    result = micrograde("grade", str(path))
    assert time.monotonic() - start < 15
    assert result.returncode == 2 and why in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_a_folder_with_too_many_entries_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(walked, "MAX_ENTRIES", 50)  # the real limit is 5000: the same walk, made quick
    folder = tmp_path / "student"
    (folder / "data").mkdir(parents=True)
    (folder / "micrograd.py").write_text(SOLUTION)
    for i in range(60):
        (folder / "data" / f"{i}.txt").touch()
    with pytest.raises(InputError, match="more than 50 files and folders"):
        source.read_submission(folder)
