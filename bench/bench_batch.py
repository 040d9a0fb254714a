"""Batch grading throughput: 200 generated submissions, --jobs 1 beside --jobs 2.

    python bench/bench_batch.py [--students N]

The submissions are the mutation corpus's solution and its mutants (all but the
ones that hang), repeated up to N. Prints submissions per second for each run
and the speed-up of --jobs 2 over --jobs 1, both measured in this run.
Targets: at least 1.7x on 2 cores, and at least 4 submissions per second.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "corpus"


def sources() -> list[str]:
    solution = (CORPUS / "solution.py").read_text()
    variants = [solution]
    for mutant in tomllib.loads((CORPUS / "mutants.toml").read_text())["mutant"]:
        if "timeout" in mutant:
            continue
        source = solution
        for old, new in mutant["replace"]:
            source = source.replace(old, new)
        variants.append(source)
    return variants


def timed_batch(submissions: Path, jobs: int, out: Path) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "grader", "batch", str(submissions), "--out", str(out),
                    "--jobs", str(jobs)], check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=200)
    args = parser.parse_args()
    variants = sources()
    with tempfile.TemporaryDirectory() as tmp:
        submissions = Path(tmp) / "submissions"
        submissions.mkdir()
        for i in range(args.students):
            (submissions / f"student{i:03d}.py").write_text(variants[i % len(variants)])
        one = timed_batch(submissions, 1, Path(tmp) / "out1")
        two = timed_batch(submissions, 2, Path(tmp) / "out2")
    n = args.students
    print(f"{'run':<22}{'seconds':>10}{'submissions/s':>16}")
    print(f"{'batch --jobs 1':<22}{one:>10.2f}{n / one:>16.2f}")
    print(f"{'batch --jobs 2':<22}{two:>10.2f}{n / two:>16.2f}")
    print(f"\nspeed-up of --jobs 2 over --jobs 1: {one / two:.2f}x ({n} submissions)")
    print("targets: >= 1.7x on 2 cores, >= 4 submissions/s")


if __name__ == "__main__":
    main()
