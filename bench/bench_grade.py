"""How long a grade takes, beside running the submission and importing Hypothesis.

    python bench/bench_grade.py [--runs N]

Times `micrograde grade` on a correct and on a buggy submission (three bugs,
each shrunk to a counterexample) in turn with two baselines: `python
submission.py` (running the student's file, the floor a grader cannot go
under) and `python -c "import hypothesis"`. Prints medians and the paired
ratios (run by run, then the median). The correct one is timed as on a
machine that has graded before; the buggy one also on a machine that never
has (an empty cache each run): for the default course, whose openings ship
with micrograde, and for a course of its own (20 examples a search), whose
openings Hypothesis generates on that first grade. Also both with the cache
and shipped openings turned off, and how many distinct graphs each target was
checked on.
The commands run outside the checkout, so they grade with the installed
micrograde (``pip install .``, as a course has it).
Targets: correct <= 8x `python submission.py`; buggy, its bugs new to the cache,
<= 2.5x `import hypothesis`.
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
        course = Path(tmp) / "course.toml"
        course.write_text("[limits]\nexamples = 20\n")  # a course of its own: no shipped openings
        cache, fresh = Path(tmp) / "cache", Path(tmp) / "fresh"
        env = environment(MICROGRADE_CACHE_DIR=str(cache))
        grade = [sys.executable, "-m", "grader", "grade"]
        outside = Path(tmp)  # not the checkout: the commands grade with the installed micrograde
        run_once(Command("first grade", [*grade, str(SOLUTION)]), cwd=outside, env=env)
        off = ["env", "MICROGRADE_REPLAY=0", *grade]

        def never_graded(*argv: str) -> list[str]:
            return ["sh", "-c", f'rm -rf "{fresh}" && MICROGRADE_CACHE_DIR="{fresh}" exec "$@"', "sh", *grade, *argv]

        running = Command("python submission.py (baseline)", [sys.executable, str(SOLUTION)])
        hypothesis = Command("python -c 'import hypothesis' (baseline)", [sys.executable, "-c", "import hypothesis"])
        commands = paired([
            running,
            hypothesis,
            Command("micrograde grade correct.py", [*grade, str(SOLUTION)], against=running),
            Command("micrograde grade buggy.py (3 bugs, shrunk)", [*grade, str(buggy)], (1,), hypothesis),
            Command("buggy.py, a machine that never graded", never_graded(str(buggy)), (1,), hypothesis),
            Command("buggy.py, own course, a machine that never graded",
                    never_graded(str(buggy), "--config", str(course)), (1,), hypothesis),
            Command("correct.py, cache and shipped openings off", [*off, str(SOLUTION)], against=hypothesis),
            Command("buggy.py, cache and shipped openings off", [*off, str(buggy)], (1,), hypothesis),
        ], args.runs, cwd=outside, env=env)
        report = json.loads(subprocess.run([*grade, str(SOLUTION), "--format", "json"], env=env, cwd=outside,
                                           capture_output=True, text=True, check=True).stdout)
    print(table(commands, running, width=56))
    coverage = report["coverage"]
    print("distinct graphs (nodes) checked: " + ", ".join(
        f"{target} {c['graphs']} ({c['nodes']})" for target, c in coverage.items())
        + f"; total {sum(c['graphs'] for c in coverage.values())} graphs")
    print(f"\n{args.runs} paired runs after a warm-up; targets: correct <= 8x python submission.py, "
          "buggy with bugs new to the cache <= 2.5x import hypothesis")


if __name__ == "__main__":
    main()
