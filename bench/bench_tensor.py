"""How long a grade of a course's tensor ops takes, beside importing numpy, which the learner's Tensor does.

    python bench/bench_tensor.py [--runs N]

Times `micrograde grade` on the university homework's correct folder under its Tensor configuration
(`tests/courses/dl-course-tensor.toml`: eight targets, 77 cases), on a learner's Tensor with a bug
(a broadcast operand copied: one diagnosis), and on a Matrix over lists of a course that names its own
methods (no numpy imported), each in turn with `python -c "import numpy"` (the floor of any grade whose
submission imports numpy) and with a grade of the classic exercise's correct solution (the yardstick of
`bench/bench_grade.py`, whose time docs/speed.md gives: a ratio to it holds on a machine others load).
The commands run outside the checkout, so they grade with the installed micrograde. Target: each grade
under 0.3 s on 2 cores.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import tomllib
from pathlib import Path

from timing import Command, environment, paired, ratio, table

ROOT = Path(__file__).resolve().parent.parent
HOMEWORK = ROOT / "tests" / "assignments" / "dl_course_hw1" / "solution"
COURSES = ROOT / "tests" / "courses"
LEARNERS = ROOT / "tests" / "tensors"
TARGET = 0.3


def learner(name: str, folder: Path) -> Path:
    """The learner-style file ``name`` of ``tests/tensors/expected.toml``, its bug made, written in ``folder``."""
    entry = tomllib.loads((LEARNERS / "expected.toml").read_text())[name]
    source = (LEARNERS / entry["path"]).read_text()
    for old, new in entry.get("replace", []):
        source = source.replace(old, new)
    path = folder / f"{name}.py"
    path.write_text(source)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        outside = Path(tmp)
        grade = [sys.executable, "-m", "grader", "grade"]
        tensor, matrix = ["--config", str(COURSES / "dl-course-tensor.toml")], [
            "--config", str(COURSES / "matrix-of-values.toml")]
        numpy = Command("python -c 'import numpy' (baseline)", [sys.executable, "-c", "import numpy"])
        classic = Command("micrograde grade correct.py (classic exercise)",
                          [*grade, str(ROOT / "tests" / "corpus" / "solution.py")])
        commands = paired([
            numpy,
            classic,
            Command("homework solution/, 8 tensor targets", [*grade, str(HOMEWORK), *tensor]),
            Command("ndarray Tensor, a broadcast copied (1 diagnosis)",
                    [*grade, str(learner("nd_mul_deepcopy", outside)), *tensor], (1,)),
            Command("Matrix over lists, 7 targets (no numpy)",
                    [*grade, str(learner("matrix_lists", outside)), *matrix]),
        ], args.runs, cwd=outside, env=environment())
    print(table(commands, numpy, width=52))
    print("\n" + "\n".join(f"{c.name}: {ratio(c, classic):.2f}x the classic grade" for c in commands[2:]))
    slowest = max(c.median for c in commands[2:])
    print(f"\n{args.runs} paired runs after a warm-up; target: every grade under {TARGET} s on 2 cores "
          f"({'met' if slowest < TARGET else 'not met'}: the slowest median {slowest:.3f} s)")


if __name__ == "__main__":
    main()
