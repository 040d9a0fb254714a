"""How long a full grade takes, beside the cost of merely importing Hypothesis.

    python bench/bench_grade.py [--runs N]

Times `micrograde grade` on a correct and on a buggy submission (three bugs,
each shrunk to a counterexample), in turn with `python -c "import hypothesis"`,
the baseline, and prints medians and the paired ratios to the baseline. The
buggy one is timed twice: with bugs whose searches the cache has seen (the
usual case in a course: the same misconceptions come back), and with bugs
it has not (the cache then holds only the passing paths, copied in before
each run, so Hypothesis searches and shrinks every time). Also with replay
turned off, the cost of the very first grade (when the cache is made), and
how many distinct graphs each target was checked on.
Targets: correct <= 1.5x the baseline, buggy <= 2.5x.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from timing import Command, environment, paired, run_once, table

ROOT = Path(__file__).resolve().parent.parent
SOLUTION = ROOT / "tests" / "corpus" / "solution.py"
BUGS = [  # three stubs wrong at once: every failing target shrinks a counterexample
    ("self.grad += other.data * out.grad", "self.grad = other.data * out.grad"),
    ("self.grad += (1 - t**2) * out.grad", "self.grad += (1 - t) * out.grad"),
    ("for node in reversed(topo):", "for node in topo:"),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        buggy = Path(tmp) / "buggy.py"
        source = SOLUTION.read_text()
        for old, new in BUGS:
            source = source.replace(old, new)
        buggy.write_text(source)
        cache, passing, fresh = (Path(tmp) / name for name in ("cache", "passing", "fresh"))
        env = environment(MICROGRADE_CACHE_DIR=str(cache))
        grade = [sys.executable, "-m", "grader", "grade"]
        cold, _, _ = run_once(Command("first grade", [*grade, str(SOLUTION)]), env=env)
        shutil.copytree(cache, passing)
        off = ["env", "MICROGRADE_REPLAY=0", *grade]
        unseen = ["sh", "-c", f'rm -rf "{fresh}" && cp -rp "{passing}" "{fresh}" && '
                  f'MICROGRADE_CACHE_DIR="{fresh}" exec "$@"', "sh", *grade, str(buggy)]
        baseline = Command("python -c 'import hypothesis' (baseline)", [sys.executable, "-c", "import hypothesis"])
        commands = paired([
            baseline,
            Command("micrograde grade correct.py", [*grade, str(SOLUTION)]),
            Command("micrograde grade buggy.py (3 bugs, seen before)", [*grade, str(buggy)], (1,)),
            Command("micrograde grade buggy.py (3 bugs, new)", unseen, (1,)),
            Command("correct.py, replay off (Hypothesis searches)", [*off, str(SOLUTION)]),
            Command("buggy.py, replay off (Hypothesis searches)", [*off, str(buggy)], (1,)),
        ], args.runs, env=env)
        report = json.loads(subprocess.run([*grade, str(SOLUTION), "--format", "json"], env=env,
                                           capture_output=True, text=True, check=True).stdout)
    print(table(commands, baseline))
    print(f"\nfirst grade on this machine (generates the replay cache): {cold:.3f} s")
    coverage = report["coverage"]
    print("distinct graphs (nodes) checked: " + ", ".join(
        f"{target} {c['graphs']} ({c['nodes']})" for target, c in coverage.items())
        + f"; total {sum(c['graphs'] for c in coverage.values())} graphs")
    print(f"\n{args.runs} paired runs after a warm-up; targets: correct <= 1.5x, buggy <= 2.5x the baseline")


if __name__ == "__main__":
    main()
