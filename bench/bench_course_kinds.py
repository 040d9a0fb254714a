"""How long a grade of each course-configured kind of target takes, beside the classic exercise's.

    python bench/bench_course_kinds.py [--runs N]

Times `micrograde grade` on a submission of each kind, graded on that target alone (its course
file written from `tests/courses/`), in turn with the classic exercise's correct grade (the
baseline): a numerical gradient a notebook cell computes (Karpathy's `numerical_grad`: the
notebook's cells run again with the course's function and with a variant), a numerical
derivative function (the tutorial's `numerical_derivative`), and a whole expression (softmax +
negative log likelihood on the learner's Value, with the graph read back). Each right (notebooks
that import no numpy: importing it in the child costs a grade about 0.1 s, whatever is graded) and
with a bug to diagnose. Prints medians and paired ratios.
The commands run outside the checkout, so they grade with the installed micrograde.
Target: every grade <= 0.3 s on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import tomllib
from pathlib import Path

from timing import Command, environment, paired, table

ROOT = Path(__file__).resolve().parent.parent
KARPATHY = ROOT / "tests" / "assignments" / "karpathy_exercises"
TUTORIAL = ROOT / "tests" / "assignments" / "tutorial_deep"
COURSES = ROOT / "tests" / "courses"
TARGET = 0.3
# (what, the course file, its target graded alone, the submission)
GRADES = [
    ("numerical gradient, right", "karpathy-exercises.toml", "numerical_grad", KARPATHY / "solution.ipynb"),
    ("numerical gradient, pasted", "karpathy-exercises.toml", "numerical_grad", KARPATHY / "pasted_literals.ipynb"),
    ("symmetric gradient, one-sided", "karpathy-exercises.toml", "numerical_grad2", KARPATHY / "forward_twice.ipynb"),
    ("numerical derivative, right", "tutorial-numerical-derivative.toml", "numerical_derivative",
     TUTORIAL / "deleted_solutions.ipynb"),
    ("whole expression, right", "karpathy-exercises.toml", "softmax_nll", KARPATHY / "solution.ipynb"),
    ("whole expression, detached .data", "karpathy-exercises.toml", "softmax_nll", KARPATHY / "micrograd_import.ipynb"),
]


def alone(course: str, target: str, folder: Path) -> Path:
    """A course file of ``course``'s target ``target`` only."""
    table = tomllib.loads((COURSES / course).read_text())["targets"][target]
    path = folder / f"{target}.toml"
    path.write_text(f"[targets.{target}]\n" + "".join(f"{key} = {json.dumps(value)}\n" for key, value in table.items()))
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    grade = [sys.executable, "-m", "grader", "grade"]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        env = environment(MICROGRADE_CACHE_DIR=str(folder / "cache"))
        classic = Command("micrograde grade correct.py (the classic exercise)",
                          [*grade, str(ROOT / "tests" / "corpus" / "solution.py")])
        kinds = [Command(what, [*grade, str(submission), "--config", str(alone(course, target, folder))], (0, 1))
                 for what, course, target, submission in GRADES]
        commands = paired([classic, *kinds], args.runs, cwd=folder, env=env, alternate=True)
    print(table(commands, classic, width=56))
    slow = [c.name for c in kinds if c.median > TARGET]
    print(f"target: every grade <= {TARGET} s: " + ("met" if not slow else f"not met ({', '.join(slow)})"))


if __name__ == "__main__":
    main()
