"""Shared by the benchmarks: the median wall time of a command, run several times."""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path


def median_seconds(command: list[str], runs: int, ok_codes: tuple[int, ...] = (0,), cwd: Path | None = None) -> float:
    """Median seconds over ``runs`` runs; stops the benchmark if the command fails."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        result = subprocess.run(command, capture_output=True, cwd=cwd)
        times.append(time.perf_counter() - start)
        if result.returncode not in ok_codes:
            sys.exit(f"{' '.join(command)} exited {result.returncode}: {result.stderr.decode()[-800:]}")
    return statistics.median(times)
