"""How long a grade of a course whose engine is its own takes, beside the classic exercise's.

    python bench/bench_engines.py [--runs N]

Times `micrograde grade` on the answer key of each engine family of tests/engines/ (Function classes with a
history record, a numpy Tensor notebook, (operand, local derivative) pairs, gradients a function returns, a
dataclass node with modules, an optimizer and a training loop, ops as module functions, a tape), each graded on
its whole course (several kinds of target), and on each family's op targets alone (one kind); and, as the
baseline, the classic exercise's correct solution, in the same run. The commands run outside the checkout, so
they grade with the installed micrograde (``pip install .``).
Targets: one kind <= 0.3 s, a whole course of several kinds <= 0.4 s, on 2 cores.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import tomllib
from pathlib import Path

from timing import Command, environment, paired, table

from grader.exercise.toml import as_toml

ROOT = Path(__file__).resolve().parent.parent
ENGINES = ROOT / "tests" / "engines"
KIND, COURSE = 0.3, 0.4


def ops_only(family: Path, folder: Path) -> Path:
    """The family's course file with its op targets (and ``backward``) alone, every table describing its engine
    kept."""
    tables = tomllib.loads((family / "micrograde.toml").read_text(encoding="utf-8"))
    tables["targets"] = {name: t for name, t in tables["targets"].items() if "kind" not in t}
    path = folder / f"{family.name}-ops.toml"
    path.write_text(as_toml(tables, f"{family.name}: its ops alone"), encoding="utf-8")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    grade = [sys.executable, "-m", "grader", "grade"]
    families = sorted(p.parent for p in ENGINES.glob("*/micrograde.toml"))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        env = environment(MICROGRADE_CACHE_DIR=str(folder / "cache"))
        classic = Command("micrograde grade correct.py (the classic exercise)",
                          [*grade, str(ROOT / "tests" / "corpus" / "solution.py")])
        courses = [Command(f"{f.name}: the whole course", [*grade, str(f / "course"), "--config",
                                                           str(f / "micrograde.toml")], (0, 1)) for f in families]
        kinds = [Command(f"{f.name}: its ops alone", [*grade, str(f / "course"), "--config",
                                                      str(ops_only(f, folder))], (0, 1)) for f in families]
        commands = paired([classic, *courses, *kinds], args.runs, cwd=folder, env=env, alternate=True)
    print(table(commands, classic, width=60))
    slow = [c.name for c in kinds if c.median > KIND] + [c.name for c in courses if c.median > COURSE]
    print(f"targets: one kind <= {KIND} s, a whole course <= {COURSE} s: "
          + ("met" if not slow else f"not met ({', '.join(slow)})"))


if __name__ == "__main__":
    main()
