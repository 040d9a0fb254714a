"""micrograde beside the graders a course would otherwise use, on the same 20 notebooks.

    python bench/compare_graders.py [--tools VENV]      (slow: minutes; not run in CI)

The tools come from a separate environment, never from micrograde's dependencies:

    python -m venv /tmp/graders && /tmp/graders/bin/pip install nbgrader==0.9.6 otter-grader==7.0.0 pytest
    python bench/compare_graders.py --tools /tmp/graders

Fills the exercise notebook with the corpus solution (tests/corpus/solution.py)
once as it is and once with each of 19 planted bugs from tests/corpus/mutants.toml
(a fixed selection covering every target and misconception), then grades each
notebook with each grader in turn, one process per notebook, and prints the median
wall time per notebook, its ratio to micrograde's, how many of the 19 bugs each
grader caught (a bug is caught when the grade is below full marks) and whether the
correct notebook got full marks. The other graders get the course-side setup a TA
would write for them: the same five unit tests (the classic `L = (a*b + c) * f`
example, `a + a`, `a ** 2`, the tanh neuron of the micrograd lecture and two
training steps of a small linear model), one point each, as nbgrader autograder
cells, as an otter-grader test file and as a pytest file run after `jupyter
nbconvert --execute`. The grading cell that calls micrograde's `check` is replaced
by a print in every notebook, as a course using another grader would not have it.
micrograde runs with its cache filled by one grade of the correct notebook (as on
any machine that has graded once): it holds the searches' openings, and each bug
is shrunk by micrograde's own shrinker. A grader that is not installed is
reported in one line and left out.
"""

from __future__ import annotations

import argparse
import copy
import csv
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
import tomllib
from abc import ABC, abstractmethod
from pathlib import Path

from bench_notebook import filled
from timing import environment

ROOT = Path(__file__).resolve().parent.parent
SOLUTION = (ROOT / "tests" / "corpus" / "solution.py").read_text()
EXERCISE = ROOT / "exercises" / "micrograd.ipynb"
BUGS = (  # names in tests/corpus/mutants.toml; every target, and each misconception once or more
    "add-overwrite", "add-no-wrapping", "add-other-missing-from-prev",
    "mul-overwrite", "mul-own-value", "mul-rmul-forgets-multiplying",
    "pow-overwrite", "pow-keeps-exponent", "pow-multiplies",
    "tanh-overwrite", "tanh-derivative-one-minus-t", "tanh-half-argument",
    "backward-no-seed", "backward-forgets-to-reverse", "backward-no-visited-check",
    "backward-direct-children-only",
    "train-no-zero-grad", "train-zero-grad-after-backward", "train-wrong-sign",
)
CORRECT = "correct"
TIMEOUT = 600  # seconds for one grade: none of the planted bugs hangs

# The TA's unit tests: each is the body of one test, using the student's `Value` and `train_step`.
TESTS = {
    "test_classic_expression": """
        a, b, c, f = Value(2.0), Value(-3.0), Value(10.0), Value(-2.0)
        L = (a * b + c) * f
        L.backward()
        assert L.data == -8.0
        assert (a.grad, b.grad, c.grad, f.grad) == (6.0, -4.0, -2.0, 4.0)
        """,
    "test_node_used_twice": """
        a = Value(3.0)
        b = a + a
        b.backward()
        assert b.data == 6.0
        assert a.grad == 2.0
        """,
    "test_power": """
        a = Value(3.0)
        y = a ** 2
        y.backward()
        assert y.data == 9.0
        assert a.grad == 6.0
        """,
    "test_tanh_neuron": """
        x1, x2, w1, w2 = Value(2.0), Value(0.0), Value(-3.0), Value(1.0)
        b = Value(6.8813735870195432)
        o = (x1 * w1 + x2 * w2 + b).tanh()
        o.backward()
        assert abs(o.data - 0.5 ** 0.5) < 1e-6
        for value, grad in [(x1, -1.5), (w1, 1.0), (x2, 0.5), (w2, 0.0)]:
            assert abs(value.grad - grad) < 1e-6
        """,
    "test_two_training_steps": """
        class Line:
            def __init__(self):
                self.w, self.b = Value(0.5), Value(0.0)

            def __call__(self, x):
                return self.w * x + self.b

            def parameters(self):
                return [self.w, self.b]

            def zero_grad(self):
                for p in self.parameters():
                    p.grad = 0.0

        model = Line()
        losses = [train_step(model, [1.0, 2.0], [1.0, 3.0], 0.1) for _ in range(2)]
        # by hand: loss 4.25, gradients (-9, -5); then loss 0.9, gradients (3, 2.4)
        assert abs(losses[0] - 4.25) < 1e-9 and abs(losses[1] - 0.9) < 1e-9
        assert abs(model.w.data - 1.1) < 1e-9 and abs(model.b.data - 0.26) < 1e-9
        """,
}


def mutant(name: str) -> str:
    """The corpus solution with the named mutant's replacements applied."""
    entries = tomllib.loads((ROOT / "tests" / "corpus" / "mutants.toml").read_text())["mutant"]
    (entry,) = [entry for entry in entries if entry["name"] == name]
    source = SOLUTION
    for old, new in entry["replace"]:
        assert source.count(old) == 1, f"{name}: {old!r} must occur once"
        source = source.replace(old, new)
    return source


def submissions() -> dict[str, str]:
    return {CORRECT: SOLUTION} | {name: mutant(name) for name in BUGS}


def body(name: str) -> str:
    return textwrap.dedent(TESTS[name]).strip() + "\n"


def function(name: str, parameters: str = "") -> str:
    return f"def {name}({parameters}):\n" + textwrap.indent(body(name), "    ")


def code_cell(source: str, metadata: dict | None = None) -> dict:
    return {"cell_type": "code", "execution_count": None, "metadata": metadata or {}, "outputs": [],
            "source": source.splitlines(keepends=True)}


def write_notebook(path: Path, notebook: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(notebook, indent=1))


def exercise() -> dict:
    return json.loads(EXERCISE.read_text())


def run(argv: list[str], cwd: Path, env: dict) -> int:
    """Run one grading command; its exit status."""
    result = subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            timeout=TIMEOUT)
    return result.returncode


class Grader(ABC):
    """One grader, set up as a course would set it up, grading one notebook per call."""

    name: str
    tools: tuple[str, ...] = ()

    def __init__(self, work: Path, path: str, env: dict) -> None:
        self.work, self.path, self.env = work, path, env
        self.seconds: dict[str, float] = {}
        self.codes: dict[str, int] = {}  # exit status of each grade, for graders that say it that way

    def missing(self) -> list[str]:
        return [tool for tool in self.tools if shutil.which(tool, path=self.path) is None]

    def tool(self, name: str) -> str:
        return shutil.which(name, path=self.path)

    @abstractmethod
    def prepare(self, notebooks: dict[str, str]) -> None:
        """Write the course's setup and the submissions (untimed)."""

    def write_filled(self, notebooks: dict[str, str]) -> None:
        """Each submission as the exercise notebook filled in, alone in its own directory."""
        for label, source in notebooks.items():
            write_notebook(self.work / label / "micrograd.ipynb", filled(exercise(), source))

    @abstractmethod
    def grade(self, label: str) -> None:
        """Grade one submission (timed)."""

    def full_marks(self) -> dict[str, bool]:
        """For each graded submission, whether it got full marks (after every grade)."""
        return {label: code == 0 for label, code in self.codes.items()}


class Micrograde(Grader):
    name = "micrograde grade"

    def prepare(self, notebooks: dict[str, str]) -> None:
        self.write_filled(notebooks)

    def grade(self, label: str) -> None:
        self.codes[label] = run([sys.executable, "-m", "grader", "grade", "micrograd.ipynb"],
                                self.work / label, self.env)
        if self.codes[label] not in (0, 1):
            sys.exit(f"micrograde grade exited {self.codes[label]} on {label}")


class Pytest(Grader):
    name = "nbconvert --execute + pytest"
    tools = ("jupyter", "pytest")

    def prepare(self, notebooks: dict[str, str]) -> None:
        self.write_filled(notebooks)
        tests = "from submission import Value, train_step\n\n\n" + "\n\n".join(function(n) for n in TESTS)
        for label in notebooks:
            (self.work / label / "test_micrograd.py").write_text(tests)

    def grade(self, label: str) -> None:
        """Execute the notebook into a script (a cell that raises fails the grade), then test it."""
        cwd = self.work / label
        code = run([self.tool("jupyter"), "nbconvert", "--to", "python", "--execute", "--output", "submission",
                    "micrograd.ipynb"], cwd, self.env)
        if code == 0:
            code = run([self.tool("pytest"), "-q", "-p", "no:cacheprovider", "test_micrograd.py"], cwd, self.env)
        self.codes[label] = code


class Nbgrader(Grader):
    """A course directory: the source notebook with one autograder cell per test, released with
    `nbgrader generate_assignment`; each student fills in the released notebook."""

    name = "nbgrader autograde"
    tools = ("nbgrader",)

    def prepare(self, notebooks: dict[str, str]) -> None:
        (self.work / "nbgrader_config.py").write_text("c = get_config()\nc.CourseDirectory.course_id = 'micrograd'\n"
                                                      f"c.CourseDirectory.root = {str(self.work)!r}\n")
        source = exercise()
        source["cells"] = [cell for cell in source["cells"]  # this course has no micrograde grading cell
                           if "check(Value, train_step)" not in "".join(cell["source"])]
        for name in TESTS:
            source["cells"].append(code_cell(body(name), {"nbgrader": {
                "grade": True, "grade_id": name, "locked": True, "points": 1, "schema_version": 3,
                "solution": False, "task": False}}))
        write_notebook(self.work / "source" / "ps1" / "micrograd.ipynb", source)
        self.check([self.tool("nbgrader"), "generate_assignment", "ps1", "--force"])
        released = json.loads((self.work / "release" / "ps1" / "micrograd.ipynb").read_text())
        for label, code in notebooks.items():
            write_notebook(self.work / "submitted" / label / "ps1" / "micrograd.ipynb",
                           filled(copy.deepcopy(released), code))

    def check(self, argv: list[str]) -> None:
        if run(argv, self.work, self.env) != 0:
            sys.exit(f"{' '.join(argv)} failed")

    def grade(self, label: str) -> None:
        self.check([self.tool("nbgrader"), "autograde", "ps1", "--student", label, "--create", "--force"])

    def full_marks(self) -> dict[str, bool]:
        self.check([self.tool("nbgrader"), "export", "--to", "grades.csv"])
        with open(self.work / "grades.csv", newline="") as grades:
            return {row["student_id"]: float(row["raw_score"]) == float(row["max_score"])
                    for row in csv.DictReader(grades)}


class Otter(Grader):
    """An autograder zip made by `otter generate` from one exception-based test file."""

    name = "otter run"
    tools = ("otter",)

    def prepare(self, notebooks: dict[str, str]) -> None:
        tests = self.work / "tests" / "micrograd.py"
        tests.parent.mkdir(parents=True)
        tests.write_text("from otter.test_files import test_case\n\nOK_FORMAT = False\nname = 'micrograd'\n\n\n"
                         + "\n\n".join("@test_case(points=1)\n" + function(n, "Value, train_step") for n in TESTS))
        if run([self.tool("otter"), "generate", "-t", "tests", "-o", "autograder.zip", "--no-config",
                "--no-requirements", "--no-environment"], self.work, self.env) != 0:
            sys.exit("otter generate failed")
        self.write_filled(notebooks)

    def grade(self, label: str) -> None:
        cwd = self.work / label
        if run([self.tool("otter"), "run", "-a", str(self.work / "autograder.zip"), "-o", ".", "--no-logo",
                "micrograd.ipynb"], cwd, self.env) != 0:
            sys.exit(f"otter run failed on {label}")

    def full_marks(self) -> dict[str, bool]:
        marks = {}
        for label in self.seconds:
            results = json.loads((self.work / label / "results.json").read_text())
            scored = [test for test in results["tests"] if "max_score" in test]  # not the summary of public tests
            marks[label] = sum(test["score"] for test in scored) == sum(test["max_score"] for test in scored)
        return marks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tools", type=Path, help="the virtual environment holding nbgrader, otter-grader, "
                        "jupyter and pytest (default: look on PATH)")
    args = parser.parse_args()
    path = str(args.tools.resolve() / "bin") if args.tools else os.environ.get("PATH", "")
    notebooks = submissions()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        env = environment(PATH=path + os.pathsep + os.environ.get("PATH", ""), MICROGRADE_CACHE_DIR=str(work / "cache"))
        graders = []
        for kind in (Micrograde, Pytest, Nbgrader, Otter):
            (work / kind.__name__).mkdir()
            grader = kind(work / kind.__name__, path, env)
            if missing := grader.missing():
                print(f"{grader.name}: skipped, {', '.join(missing)} not found")
                continue
            grader.prepare(notebooks)
            grader.grade(CORRECT)  # warm-up, uncounted: fills micrograde's cache and the OS's file cache
            graders.append(grader)
        for label in notebooks:  # every grader on one notebook, then the next: drift hits them alike
            for grader in graders:
                start = time.perf_counter()
                grader.grade(label)
                grader.seconds[label] = time.perf_counter() - start
                print(f"  {grader.name:<30}{label:<34}{grader.seconds[label]:7.2f} s", file=sys.stderr)
        print(table(graders))


def table(graders: list[Grader]) -> str:
    baseline = statistics.median(graders[0].seconds.values())
    marks = {grader.name: grader.full_marks() for grader in graders}
    lines = [f"{'grader':<32}{'median s':>10}{'x micrograde':>14}{'bugs caught':>13}{'correct: full marks':>21}"]
    for grader in graders:
        median = statistics.median(grader.seconds.values())
        caught = sum(not marks[grader.name][name] for name in BUGS)
        lines.append(f"{grader.name:<32}{median:>10.2f}{median / baseline:>14.2f}{f'{caught} / {len(BUGS)}':>13}"
                     f"{'yes' if marks[grader.name][CORRECT] else 'no':>21}")
    lines.append("\nmissed: " + "; ".join(
        f"{g.name}: {', '.join(n for n in BUGS if marks[g.name][n]) or 'none'}" for g in graders))
    return "\n".join(lines)


if __name__ == "__main__":
    main()
