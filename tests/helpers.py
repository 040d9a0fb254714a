"""Shared by the tests: running the real command line, and writing submissions."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path(__file__).parent / "corpus"
SOLUTION = (CORPUS / "solution.py").read_text()


def micrograde(*args: str, cwd: Path | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run ``micrograde`` exactly as a user would, in a separate process."""
    env = {k: v for k, v in os.environ.items() if k != "MICROGRADE_DEBUG"}
    return subprocess.run([sys.executable, "-m", "grader", *args], capture_output=True, text=True,
                          cwd=cwd or ROOT, env=env, timeout=timeout)


def processes_with(*marks: bytes) -> list[str]:
    """The pids of running processes whose command line holds any of ``marks``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if any(mark in cmdline for mark in marks):
                found.append(entry.name)
    return found
