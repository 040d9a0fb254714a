"""The overhead of grading a class in shards: one batch beside N shards run in turn and merged, in one run.

    python bench/bench_shards.py [--students 2000] [--shards 4] [--jobs 2] [--runs 1]

The class is ``bench_batch``'s (the solution and its mutants repeated up to the size), with a notebook, a
student's folder and a file that cannot be read among them. The replay cache is filled first by a batch of
each distinct submission once; then, in each round, one ``batch`` of the whole class and the same class as
``--shard K/N`` for every K, each shard a process of its own run one after another on the same cores (what
N machines would do, added up), then ``batch-merge``. Prints the seconds of each, the shards' total against
the one batch (the overhead of sharding: every shard reads the whole class's names and starts its own
workers), the merge's share, and whether the merged gradebook, class summary and its charts are byte for
byte the one batch's (``compare``, which ``tests/routes/test_shards.py`` runs too).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_batch import sources  # noqa: E402
from timing import environment  # noqa: E402

CLASS_FILES = ("grades.csv", "gradebook.csv", "summary.md", "summary.html")


def make_class(folder: Path, students: int) -> Path:
    """``students`` submissions: a notebook, a folder of a student's files, a file that is no notebook, and
    ``bench_batch``'s engines for the rest, named so that their order is not their shards'."""
    folder.mkdir(parents=True)
    variants = sources()
    solution = variants[0]
    engine, train = solution.split("def train_step")
    notebook = {"nbformat": 4, "nbformat_minor": 5, "metadata": {},
                "cells": [{"cell_type": "code", "id": "c1", "metadata": {}, "outputs": [], "execution_count": None,
                           "source": solution}]}
    (folder / "nora.ipynb").write_text(json.dumps(notebook))
    (folder / "fred").mkdir()
    (folder / "fred" / "engine.py").write_text(engine)
    (folder / "fred" / "train.py").write_text("from engine import Value\n\n\ndef train_step" + train)
    (folder / "ursula.ipynb").write_text("{ not a notebook")
    for i in range(students - 3):
        (folder / f"s{(i * 7919) % 100_000:05d}-{i}.py").write_text(variants[i % len(variants)])
    return folder


def timed(argv: list[str], env: dict[str, str]) -> float:
    started = time.monotonic()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=7200)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)}: exit {done.returncode}: {done.stderr.strip()[-500:]}")
    return time.monotonic() - started


def compare(work: Path, students: int, shards: int = 4, jobs: int = 2, runs: int = 1,
            timeout: float | None = None) -> dict:
    """One batch and the same class in ``shards`` shards then merged, ``runs`` times in turn, in ``work``: the
    seconds of each, and which of the class's files came out byte for byte the same. ``timeout`` is every
    batch's ``--timeout``, the same for all of them (default: the course's limits)."""
    micrograde = [sys.executable, "-m", "grader"]
    limits = ["--timeout", str(timeout)] if timeout is not None else []
    env = environment(MICROGRADE_CACHE_DIR=str(work / "cache"))
    klass = make_class(work / "class", students)
    distinct = work / "distinct"
    distinct.mkdir()
    for i, source in enumerate(sources()):
        (distinct / f"v{i}.py").write_text(source)
    timed([*micrograde, "batch", str(distinct), "--out", str(work / "fill"), "--jobs", str(jobs)], env)
    found: dict = {"one": [], "shards": [], "merge": []}
    for _ in range(runs):
        for out in ("one", "shards"):
            shutil.rmtree(work / out, ignore_errors=True)
        found["one"].append(timed([*micrograde, "batch", str(klass), "--out", str(work / "one"), "--jobs", str(jobs),
                                   *limits], env))
        found["shards"].append([timed([*micrograde, "batch", str(klass), "--out", str(work / "shards" / f"{k}"),
                                       "--shard", f"{k}/{shards}", "--jobs", str(jobs), *limits], env)
                                for k in range(1, shards + 1)])
        found["merge"].append(timed([*micrograde, "batch-merge", *(str(work / "shards" / f"{k}")
                                                                   for k in range(1, shards + 1)),
                                     "--out", str(work / "merged")], env))
    found["same"] = [name for name in CLASS_FILES
                     if (work / "merged" / name).read_bytes() == (work / "one" / name).read_bytes()]
    found["students"] = len(list((work / "merged" / "reports").iterdir()))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=2000)
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        found = compare(Path(tmp), args.students, args.shards, args.jobs, args.runs)
    one = statistics.median(found["one"])
    shards = statistics.median(sum(run) for run in found["shards"])
    merge = statistics.median(found["merge"])
    print(f"{'run':<52}{'median s':>10}{'submissions/s':>15}")
    print(f"{f'one batch, --jobs {args.jobs}':<52}{one:>10.2f}{args.students / one:>15.2f}")
    for k in range(args.shards):
        each = statistics.median(run[k] for run in found["shards"])
        print(f"{f'shard {k + 1}/{args.shards}, --jobs {args.jobs}':<52}{each:>10.2f}")
    print(f"{f'{args.shards} shards in turn + batch-merge':<52}{shards + merge:>10.2f}"
          f"{args.students / (shards + merge):>15.2f}")
    print(f"{'batch-merge alone':<52}{merge:>10.2f}")
    print(f"\noverhead of sharding ({args.students} submissions, {args.shards} shards in turn and the merge, "
          f"against one batch in the same run): {(shards + merge) / one:.2f}x; the merge {merge / one:.1%} of it")
    print(f"the same as one batch, byte for byte: {', '.join(found['same']) or 'nothing'} "
          f"({found['students']} reports)")
    print(f"on {os.cpu_count()} cores, {args.runs} run(s)")


if __name__ == "__main__":
    main()
