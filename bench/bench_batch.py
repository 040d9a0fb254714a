"""Batch grading throughput: --jobs 1 beside --jobs 2, and 200 beside 2,000 submissions.

    python bench/bench_batch.py [--sizes 200 2000] [--runs N]

The submissions are the mutation corpus's solution and its mutants (all but the
ones that hang), repeated up to each size, as in a course where the same
misconceptions come back. The replay cache starts empty in its own directory
and is filled by a first, separately timed batch of each distinct variant
once; the timed runs then take turns (A B A B ...). Prints submissions per
second, the speed-up of --jobs 2 over --jobs 1, seconds per submission at
each size (linear means the same), and the peak memory of the largest
process (a grading worker or the batch itself). CPU time per submission
(the machine's busy time, see ``timing.run_once``: on an idle machine every
process of the batch, the students' children included) shows the ceiling:
2 cores give at most 2000 / (CPU ms) submissions/s. Steal (a virtual machine's
host running something else) is shown apart: it slows a run down without being
its work.
What the Landlock set-up costs the batch rate is measured apart: the --jobs 2
run with Landlock and without (``MICROGRADE_LANDLOCK=0``), on the same
submissions, in pairs whose order alternates (with, without; without, with ...),
so that neither always runs in the other's wake; the ratio is the median of the
pairs' (a difference of a few percent is within what one pair varies).
Targets: >= 12 submissions/s with --jobs 2 on 2 cores, >= 1.8x from 1 to 2 jobs; Landlock costs no rate.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import tomllib
from pathlib import Path

from timing import Command, environment, paired, ratio, run_once

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


def folder(path: Path, variants: list[str], students: int) -> Path:
    path.mkdir()
    for i in range(students):
        (path / f"student{i:04d}.py").write_text(variants[i % len(variants)])
    return path


def batch(submissions: Path, jobs: int, out: Path) -> list[str]:
    """The batch command; ``out`` is emptied first so that no student is skipped as already graded."""
    return ["sh", "-c", f'rm -rf "{out}" && exec "$@"', "sh", sys.executable, "-m", "grader", "batch",
            str(submissions), "--out", str(out), "--jobs", str(jobs)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[200, 2000])
    parser.add_argument("--runs", type=int, default=3, help="timed runs of the smallest size (the others: 1)")
    parser.add_argument("--landlock-runs", type=int, default=8,
                        help="pairs of runs with and without Landlock (smallest size, --jobs 2)")
    args = parser.parse_args()
    variants = sources()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        env = environment(MICROGRADE_CACHE_DIR=str(work / "cache"))
        distinct = folder(work / "distinct", variants, len(variants))
        # Run outside the checkout: the batches grade with the installed micrograde (``pip install .``).
        filling = run_once(Command("fill", batch(distinct, 2, work / "out-fill")), cwd=work, env=env)[0]
        small, *large = sorted(args.sizes)
        commands = [Command(f"{small} submissions, --jobs {jobs}",
                            batch(folder(work / f"s{small}-{jobs}", variants, small), jobs, work / f"o{jobs}"),
                            (0, 1)) for jobs in (1, 2)]
        rows = paired(commands, args.runs, warmup=0, cwd=work, env=env)
        landlock = [Command(f"{small} submissions, --jobs 2{name}", [*prefix, *batch(work / f"s{small}-2", 2, out)],
                            (0, 1)) for name, prefix, out in ((", Landlock", [], work / "o-on"),
                                                             (", no Landlock", ["env", "MICROGRADE_LANDLOCK=0"],
                                                              work / "o-off"))]
        rows += paired(landlock, args.landlock_runs, warmup=0, cwd=work, env=env, alternate=True)
        for size in large:
            rows += paired([Command(f"{size} submissions, --jobs 2",
                                    batch(folder(work / f"s{size}", variants, size), 2, work / f"o{size}"),
                                    (0, 1))], 1, warmup=0, cwd=work, env=env)
        shutil.rmtree(work / "cache", ignore_errors=True)
    sizes = {row.name: int(row.name.split()[0]) for row in rows}
    print(f"{'run':<40}{'median s':>10}{'submissions/s':>15}{'ms/submission':>15}{'CPU ms/sub':>12}"
          f"{'steal ms/sub':>14}{'peak MiB':>10}")
    for row in rows:
        n = sizes[row.name]
        cpu = 1000 * statistics.median(row.cpu_seconds) / n
        steal = 1000 * statistics.median(row.steal_seconds) / n
        print(f"{row.name:<40}{row.median:>10.2f}{n / row.median:>15.2f}{1000 * row.median / n:>15.1f}"
              f"{cpu:>12.1f}{steal:>14.1f}{max(row.peak_mib):>10.1f}")
    one, two, confined, unconfined = rows[:4]
    print(f"\nspeed-up of --jobs 2 over --jobs 1 ({small} submissions, medians of {args.runs}): "
          f"{one.median / two.median:.2f}x")
    rates = sorted(b / a for a, b in zip(confined.seconds, unconfined.seconds))
    print(f"rate with Landlock / without ({small} submissions, --jobs 2, median of {len(rates)} pairs in "
          f"alternating order): {ratio(unconfined, confined):.3f}x (pairs {rates[0]:.2f}-{rates[-1]:.2f}x)")
    for row in rows[4:]:
        per = row.median / sizes[row.name] / (two.median / small)
        print(f"seconds per submission, {row.name} / {two.name}: {per:.2f}x (1.00 = linear)")
    print(f"filling the cache ({len(variants)} distinct submissions once, --jobs 2): {filling:.2f} s")
    print(f"on {os.cpu_count()} cores; targets: >= 12 submissions/s with --jobs 2, >= 1.8x from 1 to 2 jobs")


if __name__ == "__main__":
    main()
