"""Children started ahead of the grade (``grader.child.ahead``): adopted only where the grade would have started
the same ones, the same grade either way, and nothing left behind whatever the command does."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
import time

import pytest
from helpers import CORPUS, ROOT, SOLUTION, processes_with

from grader import cli
from grader.child import ahead, launcher, sandbox, worker
from grader.child.shipping import child_mark
from grader.errors import MachineError
from grader.grade import Options, grade_submission
from grader.submission.siblings import read_as_run


@pytest.fixture
def started(monkeypatch):
    """Every child a grade starts, by whether its lane trains and in which working directory, in order."""
    starts: list[tuple[bool, str]] = []
    real = worker.Worker.start

    def start(self):
        real(self)
        starts.append((self.lane.training_engine, str(self.workdir)))

    monkeypatch.setattr(worker.Worker, "start", start)
    yield starts
    ahead.discard()  # a test that stopped before grading


def graded(path, options: Options) -> dict:
    report = grade_submission(read_as_run(path, options.config), options).to_json()
    report.pop("seconds", None)
    return report


def test_a_default_grade_adopts_both_children_started_ahead(started, tmp_path):
    path = tmp_path / "work.py"
    path.write_text(SOLUTION)
    expected = graded(path, Options())
    assert [training for training, _ in started] == [False, True]  # without ahead: the ops', train_step's
    started.clear()
    ahead.start()
    report = graded(path, Options())
    assert report == expected and report["score"] == 100.0
    assert [training for training, _ in started] == [False, True]  # the two started ahead, and no more
    # each in a working directory of its own, gone with it
    assert len({workdir for _, workdir in started}) == 2 and not any(os.path.exists(w) for _, w in started)


@pytest.mark.parametrize("other", ["other time limits", "a folder"])
def test_children_started_ahead_that_the_grade_would_not_start_are_ended(started, tmp_path, other):
    """Another course's limits (a child's CPU limit follows them) or a folder submission (its files are copied
    in before a child confines itself): the grade starts its own, and the same grade as without them."""
    options = Options(timeout=5.0) if other == "other time limits" else Options()
    path = CORPUS / "correct_dir" if other == "a folder" else tmp_path / "work.py"
    if other != "a folder":
        path.write_text(SOLUTION)
    expected = graded(path, options)
    started.clear()
    ahead.start()
    report = graded(path, options)
    assert report == expected and report["score"] == 100.0
    assert [training for training, _ in started] == [False, True, False, True]  # started ahead, then its own
    assert not any(os.path.exists(workdir) for _, workdir in started)


@pytest.mark.parametrize("argv", [["grade", "missing.py"], ["grade", "work.py", "--format", "no-such-format"],
                                  ["grade", "work.py"]])
def test_the_command_leaves_no_working_directory_and_no_child(tmp_path, argv):
    """Whether it grades, refuses its input or its command line: what was started ahead is gone when it ends."""
    (tmp_path / "work.py").write_text(SOLUTION)
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    env = {**os.environ, "TMPDIR": str(temporary), "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen([sys.executable, "-m", "grader", *argv], cwd=tmp_path, env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    _, errors = process.communicate(timeout=120)
    assert process.returncode == (0 if argv == ["grade", "work.py"] else 2), errors
    assert list(temporary.iterdir()) == []
    mark = child_mark(process.pid).encode()  # the launcher's and every child's
    deadline = time.monotonic() + 10  # a killed child's supervisor may take a moment to go
    while processes_with(mark) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes_with(mark) == []


def test_a_command_run_in_process_ends_what_it_started_ahead_when_it_stops_before_grading(tmp_path, monkeypatch):
    """``grader.cli.main`` in a process that goes on (a test, a script): the children started ahead for a
    grade that never came are ended, and their working directory removed, when it returns."""
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temporary))
    monkeypatch.chdir(tmp_path)
    workers: list[worker.Worker] = []
    real = worker.Worker.start

    def start(self):
        workers.append(self)
        return real(self)

    monkeypatch.setattr(worker.Worker, "start", start)
    assert cli.main(["grade", "missing.py"]) == 2
    assert [w.lane.training_engine for w in workers] == [False, True] and not any(w.alive for w in workers)
    assert ahead._STARTED == [] and list(temporary.iterdir()) == []


def test_two_threads_asking_the_launcher_at_once_each_get_their_own_replies():
    """The children started ahead are asked for in a thread while the command goes on in another: whatever the
    interleaving, each reply reaches the request it answers (a child's pid, its end, the namespace probe)."""
    wrong: list[str] = []

    def ask(children: int) -> None:
        with open(os.devnull, "wb") as sink:
            for _ in range(children):
                child = launcher.Child("pass", ["-c"], (sink.fileno(), sink.fileno()), cwd="/",
                                       env=sandbox.environment("/"), limits=[], isolated=False)
                try:
                    pid = child.started()
                    ended = child.launcher.reply(child.launcher.send({"kind": "end", "pid": pid}))[0]
                    if ended != {"ended": pid}:
                        wrong.append(f"child {pid} ended as {ended}")
                except (KeyError, MachineError) as exc:
                    wrong.append(repr(exc))
                finally:
                    child.ended = True
                    if child.pidfd is not None:
                        os.close(child.pidfd)
                probe = child.launcher.reply(child.launcher.send({"kind": "probe"}))[0]
                if set(probe) - {"error"}:
                    wrong.append(f"the probe answered {probe}")

    threads = [threading.Thread(target=ask, args=(25,)) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert wrong == []
