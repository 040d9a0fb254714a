"""Shared by the benchmarks: whole-process timings, paired against a baseline run alongside.

The machines these run on are shared and noisy, so commands are run in turn
(A B C A B C ...) after a warm-up, and a command is compared with the
baseline run by run: the ratio quoted is the median of those per-round
ratios, which holds even when the machine's speed drifts during the run.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Command:
    name: str
    argv: list[str]
    ok_codes: tuple[int, ...] = (0,)
    against: Command | None = None  # the baseline its ratio is taken to, if not the table's
    seconds: list[float] = field(default_factory=list)
    cpu_seconds: list[float] = field(default_factory=list)  # see ``run_once``
    steal_seconds: list[float] = field(default_factory=list)  # time the host gave to others (``run_once``)
    peak_mib: list[float] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)


def environment(**settings: str) -> dict[str, str]:
    """This process's environment with ``settings``, for the timed commands, and with bytecode
    caching on: an installed micrograde has its bytecode compiled when pip installs it, so a
    benchmark run from a checkout lets Python write the checkout's (``PYTHONDONTWRITEBYTECODE``
    would have every run compile the grader from source, which no installed copy does)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.pop("MICROGRADE_REPLAY", None)
    return {**env, **settings}


def machine_busy_seconds() -> tuple[float, float] | None:
    """CPU seconds every core of this machine has spent busy since boot, and the seconds a
    virtual machine's host ran something else while it wanted to run (steal) (Linux), else None."""
    try:
        with open("/proc/stat") as stat:
            fields = stat.readline().split()
    except OSError:
        return None
    user, nice, system, _idle, _iowait, irq, softirq, steal = map(int, fields[1:9])
    tick = os.sysconf("SC_CLK_TCK")
    return (user + nice + system + irq + softirq) / tick, steal / tick


def run_once(command: Command, cwd: Path | None = None,
             env: dict | None = None) -> tuple[float, float, float, float]:
    """Wall seconds, CPU seconds, peak memory (MiB, the largest process) and steal seconds of
    one run; stops the benchmark on failure.

    The CPU seconds are the whole machine's busy time during the run where Linux tells it:
    a submission's children are forked by a launcher, so the rusage of the command's
    process tree misses those it never reaped. On an idle machine that is the command's
    own; elsewhere, the rusage of its process tree. Steal is time the host of a virtual
    machine ran something else: it slows every run down, and is not counted as CPU."""
    with tempfile.TemporaryFile() as errors:
        busy = machine_busy_seconds()
        start = time.perf_counter()
        process = subprocess.Popen(command.argv, stdout=subprocess.DEVNULL, stderr=errors, cwd=cwd, env=env)
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - start
        after = machine_busy_seconds()
        process.returncode = os.waitstatus_to_exitcode(status)
        if process.returncode not in command.ok_codes:
            errors.seek(0)
            sys.exit(f"{' '.join(command.argv)} exited {process.returncode}: {errors.read().decode()[-800:]}")
    if busy is not None and after is not None:
        cpu, steal = after[0] - busy[0], after[1] - busy[1]
    else:
        cpu, steal = usage.ru_utime + usage.ru_stime, 0.0
    return seconds, cpu, usage.ru_maxrss / 1024, steal


def paired(commands: list[Command], runs: int, warmup: int = 1, cwd: Path | None = None,
           env: dict | None = None, alternate: bool = False) -> list[Command]:
    """Run the commands in turn, ``warmup`` rounds uncounted then ``runs`` counted rounds; with
    ``alternate``, every other round in the reverse order (A B, B A, A B ...), so that neither of two
    commands always runs in the wake of the other (a page cache or a core the first left warm)."""
    for round_number in range(warmup + runs):
        for command in commands[::-1] if alternate and round_number % 2 else commands:
            seconds, cpu, peak, steal = run_once(command, cwd, env)
            if round_number >= warmup:
                command.seconds.append(seconds)
                command.cpu_seconds.append(cpu)
                command.steal_seconds.append(steal)
                command.peak_mib.append(peak)
    return commands


def ratio(command: Command, baseline: Command) -> float:
    """The median of the per-round ratios of ``command`` to ``baseline``."""
    return statistics.median(a / b for a, b in zip(command.seconds, baseline.seconds))


def table(commands: list[Command], baseline: Command, width: int = 52) -> str:
    """Median seconds, min-max, peak memory and the paired ratio to the baseline (the command's own,
    ``against``, where it has one: its name is then shown beside the ratio), one row a command."""
    lines = [f"{'command':<{width}}{'median s':>10}{'min-max s':>15}{'peak MiB':>10}{'x baseline':>12}"]
    for c in commands:
        spread = f"{min(c.seconds):.3f}-{max(c.seconds):.3f}"
        against = c.against or baseline
        lines.append(f"{c.name:<{width}}{c.median:>10.3f}{spread:>15}{max(c.peak_mib):>10.1f}"
                     f"{ratio(c, against):>12.2f}" + (f"  (x {against.name})" if c.against else ""))
    return "\n".join(lines)
