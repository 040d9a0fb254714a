"""How long a full grade takes, beside the cost of merely importing Hypothesis.

    python bench/bench_grade.py [--runs N]

Prints the median wall time of `micrograde grade` on a correct and on a buggy
submission, and of `python -c "import hypothesis"` as the baseline, all
measured in this run on this machine, with the ratios to the baseline.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from timing import median_seconds

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
        grade = [sys.executable, "-m", "grader", "grade"]
        rows = [
            ("python -c 'import hypothesis' (baseline)",
             median_seconds([sys.executable, "-c", "import hypothesis"], args.runs, (0,))),
            ("micrograde grade correct.py", median_seconds([*grade, str(SOLUTION)], args.runs, (0,))),
            ("micrograde grade buggy.py (3 bugs)", median_seconds([*grade, str(buggy)], args.runs, (1,))),
        ]
    baseline = rows[0][1]
    print(f"{'command':<44}{'median s':>10}{'x baseline':>12}")
    for name, seconds in rows:
        print(f"{name:<44}{seconds:>10.3f}{seconds / baseline:>12.2f}")
    print(f"\n{args.runs} runs each; targets: a full grade <= 1.0 s and <= 4x the baseline")


if __name__ == "__main__":
    main()
