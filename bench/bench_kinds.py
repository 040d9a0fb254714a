"""How long a grade of a module, an optimizer or a training function takes, beside the classic exercise's.

    python bench/bench_kinds.py [--runs N]

Times `micrograde grade` with the courses of tests/courses/ on real submissions: the tutorial's
`Module.parameters`, `Neuron`, `Layer` and `MLP` (a notebook), the homework's `Linear`, `ReLU` and
`CrossEntropyLoss` alone, its `SGD.step` and `SGD.zero_grad` alone, its `train_one_epoch` alone, all six
together (a folder with numpy), and a loop over epochs; each right, and each kind also with one bug (a
smallest case to find); and, as the baseline, the classic exercise's correct solution. The commands run
outside the checkout, so they grade with the installed micrograde (``pip install .``, as a course has it).
Target: every grade of a new kind under 0.3 s on 2 cores.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import tomllib
from pathlib import Path

from timing import Command, environment, paired, table

ROOT = Path(__file__).resolve().parent.parent
COURSES = ROOT / "tests" / "courses"
TUTORIAL = ROOT / "tests" / "assignments" / "tutorial_deep"
HOMEWORK = ROOT / "tests" / "assignments" / "dl_course_hw1"
COURSEWORK = ROOT / "tests" / "coursework"
TARGET = 0.3


def only(course: str, *targets: str) -> str:
    """The course's configuration with only ``targets``, as TOML (a course grading that kind alone)."""
    tables = tomllib.loads((COURSES / course).read_text())["targets"]
    return "".join(f"[targets.\"{name}\"]\n" + "".join(f"{k} = {value(v)}\n" for k, v in tables[name].items()) + "\n"
                   for name in targets)


def value(v: object) -> str:
    return str(v).lower() if isinstance(v, bool) else repr(v).replace("'", '"') if isinstance(v, str) else str(v)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    expected = tomllib.loads((COURSEWORK / "expected.toml").read_text())
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        courses = {}
        for name, course, targets in (("nn", "dl-course-nn.toml", ("Linear", "ReLU", "CrossEntropyLoss")),
                                      ("optim", "dl-course-nn.toml", ("SGD.step", "SGD.zero_grad")),
                                      ("epoch", "dl-course-nn.toml", ("train_one_epoch",))):
            courses[name] = work / f"{name}.toml"
            courses[name].write_text(only(course, *targets))
        buggy = {}
        for name in ("neuron_tanh", "hw_ce_sum", "hw_sgd_updates_grad", "loop_no_zero_grad"):
            entry = expected[name]
            source = (COURSEWORK / entry["base"]).read_text()
            for old, new in entry["replace"]:
                source = source.replace(old, new)
            buggy[name] = work / f"{name}.py"
            buggy[name].write_text(source)
        grade = [sys.executable, "-m", "grader", "grade"]
        env = environment(MICROGRADE_CACHE_DIR=str(work / "cache"))
        solution = ROOT / "tests" / "corpus" / "solution.py"
        classic = Command("classic exercise, correct (baseline)", [*grade, str(solution)])

        def graded(name: str, path: Path, course: Path, ok: tuple[int, ...] = (0,)) -> Command:
            return Command(name, [*grade, str(path), "--config", str(course)], ok, classic)

        commands = paired([
            classic,
            graded("modules: tutorial notebook (4 targets)", TUTORIAL / "deleted_solutions.ipynb",
                   COURSES / "tutorial-modules.toml"),
            graded("modules: a neuron with tanh for relu", buggy["neuron_tanh"], COURSES / "tutorial-modules.toml",
                   (1,)),
            graded("modules: Linear, ReLU, CrossEntropyLoss", HOMEWORK / "solution", courses["nn"]),
            graded("modules: a loss that sums", buggy["hw_ce_sum"], courses["nn"], (1,)),
            graded("optimizer: SGD.step, SGD.zero_grad", HOMEWORK / "solution", courses["optim"]),
            graded("optimizer: a step that updates the gradient", buggy["hw_sgd_updates_grad"], courses["optim"],
                   (1,)),
            graded("training: train_one_epoch", HOMEWORK / "solution", courses["epoch"]),
            graded("training: a loop over epochs", COURSEWORK / "loop_right.py", COURSES / "train-loop.toml"),
            graded("training: a loop without zero_grad", buggy["loop_no_zero_grad"], COURSES / "train-loop.toml",
                   (1,)),
            graded("all six of the homework's, a folder with numpy", HOMEWORK / "solution",
                   COURSES / "dl-course-nn.toml"),
        ], args.runs, cwd=work, env=env)
    print(table(commands, classic, width=52))
    slow = [c.name for c in commands[1:] if c.median >= TARGET]
    print(f"\n{args.runs} paired runs after a warm-up; target: every grade of a new kind under {TARGET} s on 2 cores: "
          + ("met" if not slow else f"not met by {', '.join(slow)}"))


if __name__ == "__main__":
    main()
