"""Grading a notebook beside merely executing it.

    python bench/bench_notebook.py [--runs N]      (needs micrograde[execute] for the baseline)

Fills the exercise notebook with a correct solution, then prints the median
wall time of `micrograde grade` on it and of `jupyter nbconvert --to notebook
--execute` on the same notebook (the baseline), run in turn, and the median of
the per-round ratios. Target: grading takes at most a quarter of the time of
executing.
"""

from __future__ import annotations

import argparse
import ast
import json
import shutil
import sys
import tempfile
from pathlib import Path

from timing import Command, environment, paired, table

ROOT = Path(__file__).resolve().parent.parent
SOLUTION = (ROOT / "tests" / "corpus" / "solution.py").read_text()


def definition(source: str, name: str) -> str:
    for node in ast.parse(source).body:
        if getattr(node, "name", None) == name:
            return ast.get_source_segment(source, node)
    raise LookupError(name)


def filled(notebook: dict, solution: str) -> dict:
    """The notebook with its `Value` and `train_step` cells holding ``solution``'s definitions and
    its grading cell printing instead (a notebook any grader, or plain Jupyter, can run)."""
    for cell in notebook["cells"]:
        source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        for name in ("Value", "train_step"):
            if cell["cell_type"] == "code" and source.startswith(("class " + name, "def " + name)):
                cell["source"] = definition(solution, name).splitlines(keepends=True)
        if "check(Value, train_step)" in source:
            cell["source"] = ["print('done')"]  # the baseline executes the notebook, nothing more
    return notebook


def filled_exercise(path: Path) -> None:
    notebook = json.loads((ROOT / "exercises" / "micrograd.ipynb").read_text())
    path.write_text(json.dumps(filled(notebook, SOLUTION)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    jupyter = shutil.which("jupyter", path=str(Path(sys.executable).parent)) or shutil.which("jupyter")
    if jupyter is None:
        sys.exit("the baseline needs jupyter and ipykernel: pip install 'micrograde[execute]'")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        filled_exercise(work / "micrograd.ipynb")
        env = environment(MICROGRADE_CACHE_DIR=str(work / "cache"))
        execute = Command("jupyter nbconvert --to notebook --execute (baseline)",
                          [jupyter, "nbconvert", "--to", "notebook", "--execute", "--output", "executed.ipynb",
                           "micrograd.ipynb"])
        graded = Command("micrograde grade micrograd.ipynb",
                         [sys.executable, "-m", "grader", "grade", "micrograd.ipynb"])
        paired([execute, graded], args.runs, cwd=work, env=env)
    print(table([execute, graded], execute, width=58))
    print(f"\n{args.runs} paired runs after a warm-up (which keeps the openings); "
          "target: grading <= 0.25x executing")


if __name__ == "__main__":
    main()
