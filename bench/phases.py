"""Where the time of one grade goes, phase by phase.

    python bench/phases.py [--runs N] [SUBMISSION]

Grades SUBMISSION (the corpus's correct solution by default) N times, each in
a fresh process as ``micrograde grade`` runs, with the grading process's main
steps timed from the inside (their functions wrapped, nothing else changed),
and prints the median of each phase's wall-clock milliseconds. The first
phase is Python's own start-up: from just before the process is started to
the first line of the grading program. The children's work shows where the
grading process waits for it (starting and loading them, and the targets,
whose cases the child runs while the grading process judges the last).
It runs outside the checkout, so it times the installed micrograde (``pip install .``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from timing import environment

ROOT = Path(__file__).resolve().parent.parent
SOLUTION = ROOT / "tests" / "corpus" / "solution.py"
# Runs as ``micrograde grade PATH --format json`` does, with the phases' functions wrapped.
PROGRAM = """
import atexit, json, os, sys, time
marks = [("start", time.time())]

def timed(owner, name, label):
    function = getattr(owner, name)
    def wrapper(*args, **kwargs):
        marks.append((label, time.time()))
        try:
            return function(*args, **kwargs)
        finally:
            marks.append((label + " done", time.time()))
    setattr(owner, name, wrapper)

from grader.child import launcher
launcher.warm_up()
from grader.child import ahead
ahead.start()  # as ``micrograde grade`` does for the default course (``grader.cli.main``)
marks.append(("launcher asked for", time.time()))
from grader import cli, grade
from grader.child.session import Session
from grader.commands import grade as grade_command
from grader.search import engine
from grader.submission import siblings
marks.append(("imported", time.time()))
timed(siblings, "read_as_run", "read")
timed(Session, "close", "close")
timed(cli, "build_parser", "parser")
timed(grade_command, "finish", "report written")
timed(Session, "open", "children started and loaded")
timed(grade.TargetRun, "run", "target")
code = cli.main(["grade", sys.argv[1], "--format", "json", "--output", sys.argv[2]])
marks.append(("end", time.time()))
print(json.dumps(marks))
atexit._run_exitfuncs()  # and out, as grader.cli.entry ends the command
sys.stdout.flush()
os._exit(code)
"""


STEPS = {"read": "submission read", "parser": "command line parsed",
         "children started and loaded": "children started, confined, submission loaded",
         "close": "children ended", "report written": "report rendered and written"}


def phases(marks: list[tuple[str, float]], started: float) -> dict[str, float]:
    """Milliseconds per phase: the gaps between consecutive marks, named by what happened in them."""
    named: dict[str, float] = {"Python starts": (marks[0][1] - started) * 1000}
    targets = 0
    for (label, at), (next_label, then) in zip(marks, marks[1:]):
        if next_label == "launcher asked for":
            name = "launcher started (its probe sent ahead), children asked for"
        elif next_label == "imported":
            name = "micrograde imported"
        elif next_label == label + " done" and label in STEPS:
            name = STEPS[label]
        elif label == "target" and next_label == "target done":
            targets += 1
            name = f"target {targets} graded"
        else:
            name = "other (options, workdir, diagnoses, clean-up)"
        named[name] = named.get(name, 0.0) + (then - at) * 1000
    return named


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("submission", nargs="?", type=Path, default=SOLUTION)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    env = environment()
    runs: list[dict[str, float]] = []
    totals: list[float] = []
    for run in range(args.runs + 1):  # the first is a warm-up
        started = time.time()
        result = subprocess.run([sys.executable, "-c", PROGRAM, str(args.submission.resolve()), "/dev/null"],
                                capture_output=True, text=True, cwd="/", env=env)
        ended = time.time()
        if result.returncode not in (0, 1):  # 1: the submission lost points
            sys.exit(f"the grade failed (exit {result.returncode}): {result.stderr[-800:]}")
        if run:
            runs.append(phases(json.loads(result.stdout.splitlines()[-1]), started))
            totals.append((ended - started) * 1000)
    print(f"{'phase':<52}{'median ms':>10}")
    for name in runs[0]:
        print(f"{name:<52}{statistics.median(r.get(name, 0.0) for r in runs):>10.1f}")
    print(f"{'exit (after the last phase)':<52}"
          f"{statistics.median(t - sum(r.values()) for t, r in zip(totals, runs)):>10.1f}")
    print(f"{'whole process, start to exit':<52}{statistics.median(totals):>10.1f}")
    print(f"\n{args.runs} runs of {args.submission.name}")


if __name__ == "__main__":
    main()
