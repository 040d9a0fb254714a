"""How long a full grade takes, beside the cost of merely importing Hypothesis.

    python bench/bench_grade.py [--runs N]

Times `micrograde grade` on a correct and on a buggy submission (three bugs,
each shrunk to a counterexample), in turn with `python -c "import hypothesis"`,
the baseline, and prints medians and the paired ratios to the baseline. Both
are timed as on a machine that has graded before (the searches' openings
kept), the buggy one also on a machine that never has (an empty cache each
run, so Hypothesis generates every opening), and both with the cache turned
off. Also how many distinct graphs each target was checked on.
Targets: correct <= 1.5x the baseline, buggy <= 2.5x.
"""

from __future__ import annotations

import argparse
import json
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
        cache, fresh = Path(tmp) / "cache", Path(tmp) / "fresh"
        env = environment(MICROGRADE_CACHE_DIR=str(cache))
        grade = [sys.executable, "-m", "grader", "grade"]
        run_once(Command("first grade", [*grade, str(SOLUTION)]), env=env)  # keeps the openings
        off = ["env", "MICROGRADE_REPLAY=0", *grade]
        never = ["sh", "-c", f'rm -rf "{fresh}" && MICROGRADE_CACHE_DIR="{fresh}" exec "$@"', "sh", *grade,
                 str(buggy)]
        baseline = Command("python -c 'import hypothesis' (baseline)", [sys.executable, "-c", "import hypothesis"])
        commands = paired([
            baseline,
            Command("micrograde grade correct.py", [*grade, str(SOLUTION)]),
            Command("micrograde grade buggy.py (3 bugs, shrunk)", [*grade, str(buggy)], (1,)),
            Command("buggy.py on a machine that never graded (generates the openings)", never, (1,)),
            Command("correct.py, cache off (Hypothesis generates)", [*off, str(SOLUTION)]),
            Command("buggy.py, cache off (Hypothesis generates)", [*off, str(buggy)], (1,)),
        ], args.runs, env=env)
        report = json.loads(subprocess.run([*grade, str(SOLUTION), "--format", "json"], env=env,
                                           capture_output=True, text=True, check=True).stdout)
    print(table(commands, baseline))
    coverage = report["coverage"]
    print("distinct graphs (nodes) checked: " + ", ".join(
        f"{target} {c['graphs']} ({c['nodes']})" for target, c in coverage.items())
        + f"; total {sum(c['graphs'] for c in coverage.values())} graphs")
    print(f"\n{args.runs} paired runs after a warm-up; targets: correct <= 1.5x, buggy <= 2.5x the baseline")


if __name__ == "__main__":
    main()
