"""The benchmark that reaches into micrograde's grading process (``bench/phases.py`` wraps its steps'
functions by name) still finds what it wraps, and prints every phase: a rename in the grader would
otherwise leave the README's figures with no way to reproduce them."""

from __future__ import annotations

import subprocess
import sys

from helpers import ROOT


def test_the_phases_benchmark_runs_and_names_every_phase():
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "phases.py"), "--runs", "1"], capture_output=True,
                          text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    for phase in ("micrograde imported", "command line parsed", "children started, confined, submission loaded",
                  "target 6 graded", "children ended", "report rendered and written", "whole process, start to exit"):
        assert phase in done.stdout, (phase, done.stdout)
