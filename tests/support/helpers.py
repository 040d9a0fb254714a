"""Shared by the tests: running the real command line, and writing submissions."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
CORPUS = TESTS / "corpus"
SOLUTION = (CORPUS / "solution.py").read_text()
# The solution as a learner fills in the scaffold: without the relu the classic exercise does not grade (which a
# report lists as not graded).
SCAFFOLD_SOLUTION = SOLUTION.split("    def relu(self):")[0] + "    def backward(self):" + SOLUTION.split(
    "    def backward(self):")[1]
# The default exercise with 20 examples a search: a course of its own, whose openings are not shipped with
# micrograde, so Hypothesis generates them at its first grade on a machine and the replay cache keeps them.
OWN_COURSE = "[limits]\nexamples = 20\n"


def micrograde(*args: str, cwd: Path | None = None, timeout: float = 120,
               env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Run ``micrograde`` exactly as a user would, in a separate process (``env`` adds variables)."""
    env = {**{k: v for k, v in os.environ.items() if k != "MICROGRADE_DEBUG"}, **(env or {})}
    return subprocess.run([sys.executable, "-m", "grader", *args], capture_output=True, text=True,
                          cwd=cwd or ROOT, env=env, timeout=timeout)


def needs_root(what: str) -> None:
    """Skip a test that needs root to set itself up (``what`` it would do), saying so; under CI, which runs
    as root, fail it instead."""
    import pytest

    if os.geteuid() != 0:
        message = f"{what} needs root"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)


def parent_of(pid: str) -> int | None:
    """The parent pid of process ``pid`` (None if it is gone)."""
    try:
        return command_state_parent(pid)[2]
    except (OSError, ValueError):
        return None


def unreaped_children() -> list[str]:
    """The pids of ended children that no grader will reap: zombies named as the launcher names
    its children, whose parent is not one of micrograde's own (a child's supervisor reaps the
    program, and the launcher the supervisor, so their zombies are only waiting a moment: those
    of another grader running beside the tests too). An orphan is left to init or a subreaper."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                name, state, parent = command_state_parent(entry.name)
                parent_name = command_state_parent(str(parent))[0]
            except (OSError, ValueError):
                continue
            if name == "micrograde-run" and state == "Z" and parent_name not in ("micrograde-run", "micrograde-fork"):
                found.append(entry.name)
    return found


def command_state_parent(pid: str) -> tuple[str, str, int]:
    """A process's name, state and parent pid, from ``/proc/<pid>/stat``."""
    name, _, rest = (Path("/proc") / pid / "stat").read_text().partition(" (")[2].rpartition(") ")
    state, parent = rest.split()[:2]
    return name, state, int(parent)


def processes_with(*marks: bytes, session: int | None = None) -> list[str]:
    """The pids of running processes with any of ``marks`` as a whole command-line argument.

    Marks are made unique by the test (a pid, a random suffix), and ``session``
    narrows the search to one session (a process the test started with
    ``start_new_session=True`` and what it started): the machine may be running
    other graders' processes, which are none of the test's business.
    """
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                arguments = (entry / "cmdline").read_bytes().split(b"\0")
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            in_session = session is None or int(stat.rpartition(")")[2].split()[3]) == session
            if in_session and any(mark in arguments for mark in marks):
                found.append(entry.name)
    return found
