"""What a grading route installs: a fresh venv and micrograde, beside a fresh venv and Hypothesis alone.

    python bench/bench_install.py WHEELHOUSE [--runs N] [--python PYTHON]

Every CI job of every student (GitHub Classroom, Classroom 50, a course's own workflow) makes a
fresh environment and installs micrograde into it before it grades, so what micrograde depends on
is paid once per submission. This times, from a local wheelhouse (no network: ``python
tests/support/platforms.py WHEELHOUSE`` builds one), ``PYTHON -m venv`` then ``pip install --no-index`` of
micrograde's wheel, built from this checkout, and the same for ``hypothesis`` alone (the one library
grading cannot do without), in turn, and prints the median of the paired ratios. Target: at most
1.4x. The ``html`` extra (the ``--html`` page's nbconvert and its tree) is timed too, for scale.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from timing import Command, environment, paired, ratio, table

ROOT = Path(__file__).resolve().parent.parent
TARGET = 1.4


def fresh_install(python: str, folder: Path, wheelhouses: list[Path], *requirements: str) -> list[str]:
    """A shell command: a new venv in ``folder`` (the last one removed first), and the requirements
    installed into it offline from the ``wheelhouses``."""
    venv = folder / "venv"
    links = " ".join(f"--find-links '{house}'" for house in wheelhouses)
    script = (f"rm -rf '{venv}' && '{python}' -m venv '{venv}' && '{venv}/bin/python' -m pip install --quiet "
              f"--disable-pip-version-check --no-index {links} " + " ".join(f"'{r}'" for r in requirements))
    return ["bash", "-c", script]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("wheelhouse", type=Path,
                        help="wheels of micrograde's dependencies (tests/support/platforms.py)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--python", default=sys.executable, help="the Python whose venv is made")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="micrograde-bench-install-") as scratch:
        work = Path(scratch)
        built = subprocess.run([args.python, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-index",
                                "--find-links", str(args.wheelhouse), "--wheel-dir", str(work / "wheel"), str(ROOT)],
                               capture_output=True, text=True)
        if built.returncode != 0:
            sys.exit(f"could not build micrograde's wheel: {built.stderr[-800:]}")
        wheel = next((work / "wheel").glob("micrograde-*.whl"))
        houses = [args.wheelhouse, work / "wheel"]
        baseline = Command("fresh venv + pip install hypothesis (baseline)",
                           fresh_install(args.python, work / "a", houses, "hypothesis"))
        grading = Command("fresh venv + pip install micrograde",
                          fresh_install(args.python, work / "b", houses, str(wheel)))
        page = Command("fresh venv + pip install micrograde[html]",
                       fresh_install(args.python, work / "c", houses, f"{wheel}[html]"))
        commands = paired([baseline, grading, page], args.runs, env=environment(PIP_NO_CACHE_DIR="1"))
        print(table(commands, baseline))
        measured = ratio(grading, baseline)
        print(f"\nmicrograde's install: {measured:.2f}x hypothesis's; target {TARGET}x: "
              f"{'met' if measured <= TARGET else 'not met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
