"""``micrograde batch``: grade a folder of submissions, one per student, in parallel.

Each entry of the folder (a file, or a folder per student, as LMS and GitHub
Classroom downloads are laid out) is one student, named by the entry. Grading
happens in worker processes that are themselves only grading processes (the
students' code runs in their children, as always); a worker that crashes or
hangs costs only the student it was grading, and is replaced.

When there are at least as many cores as workers, each worker runs on a core
of its own, and the children it starts (the students' code) on the same core:
a worker and its children hand requests and replies back and forth hundreds of
times a submission, and waking a process on another core costs far more than
the work of a reply, most of all in a virtual machine. Spread over the cores
they would also crowd the other workers. For the same reason workers and their
children are scheduled as batch work (``SCHED_BATCH``): a reply wakes the worker
without taking the core from the child, which goes on to the next request, and
the worker then judges the replies that came meanwhile together.

Every report is written atomically as soon as it is done, with the hash of
the submission's content and the settings it was graded with, so an
interrupted batch restarted with the same arguments skips every student
already graded whose submission has not changed, and nothing already written
is ever lost or half-written. A report is kept only if it is the one the batch
wrote: each carries an HMAC under a secret of the grader's (``batch.key``, see
``grader.keyfile``), so a report changed or forged since (with the right
hashes, by anyone who can write to the output folder) is graded again. A student whose grading process failed is
graded again on the next run; ``--force`` grades everyone again.
"""

from __future__ import annotations

import hashlib
import json
import os
import selectors
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import grader.keyfile as keyfile
from grader.child.worker import STARTUP_SECONDS
from grader.exercise.config import load
from grader.exercise.targets import Exercise
from grader.report.model import name
from grader.search.replay import usable_directory
from grader.staff.gradebook import grades_csv, lms_csv, score_of
from grader.staff.summary import summarise, summary_html, summary_markdown
from grader.version import __version__

SKIPPED = {"__pycache__", ".ipynb_checkpoints"}


@dataclass
class Student:
    id: str
    path: Path
    digest: str = ""
    report: dict = field(default_factory=dict)


def students_in(folder: Path) -> list[Student]:
    """One student per entry, named by the entry: a file's name without its suffix, unless another entry
    takes that name too (``bob.py``, ``bob.py.ipynb`` and ``bob/``), which then keep their full names."""
    entries = sorted(e for e in folder.iterdir() if not e.name.startswith(".") and e.name not in SKIPPED)
    ids = [e.stem if e.is_file() else e.name for e in entries]
    while len(set(ids)) < len(ids):  # entry names are unique, so this ends
        taken = Counter(ids)
        ids = [entry.name if taken[i] > 1 else i for i, entry in zip(ids, entries)]
    return [Student(i, entry) for i, entry in zip(ids, entries)]


def content_hash(path: Path) -> str:
    """A hash of everything in the submission (names and bytes); links are hashed, never followed."""
    digest = hashlib.sha256()
    paths = [path] if not path.is_dir() or path.is_symlink() else sorted(
        p for p in path.rglob("*") if not any(part in SKIPPED for part in p.relative_to(path).parts))
    for p in paths:
        digest.update(os.fsencode(p.relative_to(path) if p != path else p.name) + b"\0")  # any bytes a name has
        if p.is_symlink():
            digest.update(b"link:" + os.fsencode(os.readlink(p)))
        elif p.is_file():
            with open(p, "rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    digest.update(block)
        digest.update(b"\0")
    return digest.hexdigest()


def umask() -> int:
    """The process's umask (read by setting it and putting it back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_atomically(path: Path, text: str) -> None:
    """Write ``text`` to a temporary file beside ``path``, then rename it into place.

    The file gets the permissions any new file would (``mkstemp`` makes it private)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, 0o666 & ~umask())
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


SECRET_NAME = "batch.key"


def signed(report: dict) -> bytes:
    """What a report's HMAC covers: all of it but the HMAC, in one canonical form."""
    return json.dumps({k: v for k, v in report.items() if k != "batch_mac"}, sort_keys=True).encode()


def cached(student: Student, reports: Path, settings: dict, secret: bytes | None) -> dict | None:
    """The student's earlier report, if it still holds: written by a batch under ``secret`` and unchanged
    since, for the same student, submission, micrograde and settings, and graded (a grading process that
    failed is tried again). Without a secret nothing is kept."""
    try:
        report = json.loads((reports / f"{student.id}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if (secret is not None and isinstance(report, dict) and keyfile.holds(secret, signed(report),
                                                                          report.get("batch_mac"))
            and report.get("student") == student.id and report.get("content_sha256") == student.digest
            and report.get("micrograde_version") == __version__ and report.get("batch_settings") == settings
            and report.get("status") != "grader-failed"):
        return report
    return None


def cores() -> list[int]:
    """The cores this process may run on: the machine's, less any that ``taskset`` or a
    container's cpuset took away (Linux tells; elsewhere, every core counts)."""
    if hasattr(os, "sched_getaffinity"):
        return sorted(os.sched_getaffinity(0))
    return list(range(os.cpu_count() or 1))


class Worker:
    """A grading process that takes one submission at a time (see ``grader.staff.batch_process``),
    on ``core`` alone if one is given, with every process it starts."""

    def __init__(self, core: int | None = None):
        self.process = subprocess.Popen([sys.executable, "-m", "grader.staff.batch_process"], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.core = core
        # Before its first submission, so that everything it starts inherits both.
        if hasattr(os, "SCHED_BATCH"):
            try:
                os.sched_setscheduler(self.process.pid, os.SCHED_BATCH, os.sched_param(0))
            except OSError:  # the process is already gone: its student fails as it would anyway
                pass
        if core is not None:
            try:
                os.sched_setaffinity(self.process.pid, {core})
            except OSError:  # the core went offline, or the process is already gone: it runs unpinned
                self.core = None
        self.student: Student | None = None
        self.deadline = 0.0
        self.buffer = b""

    def give(self, student: Student, task: Task) -> None:
        self.student = student
        self.deadline = time.monotonic() + task.deadline
        self.process.stdin.write((json.dumps({"path": str(student.path), **task.to_json()}) + "\n").encode())
        self.process.stdin.flush()

    def stop(self) -> None:
        """End the worker: one between two students is told to finish (it then removes its folder of
        working directories, ``workdirs.working_directories``), one still grading is killed."""
        if self.student is None:
            try:
                self.process.stdin.close()
                self.process.wait(timeout=STARTUP_SECONDS)
                return
            except (OSError, subprocess.TimeoutExpired):
                pass
        self.process.kill()
        self.process.wait()


@dataclass(frozen=True)
class Task:
    """How every student of the batch is graded: the course configuration and ``--timeout``."""

    timeout: float | None
    config: Path | None

    def to_json(self) -> dict:
        return {"timeout": self.timeout, "config": None if self.config is None else str(self.config.resolve())}

    def exercise(self) -> Exercise:
        from grader.grade import Options

        return Options(load(self.config), self.timeout).exercise()

    @property
    def deadline(self) -> float:
        """Seconds one student may take before the grading process is presumed lost: all the
        work's time limits, plus starting a child for loading and after each target."""
        exercise = self.exercise()
        return exercise.time_budget() + STARTUP_SECONDS * (len(exercise.targets) + 2)


def failure(status: str, error: str) -> dict:
    """The report of a student who could not be graded: why, and no score (a blank for a human, never a 0)."""
    return {"status": status, "error": error, "score": None, "diagnoses": [], "checks": []}


class Pool:
    """``jobs`` workers grading a queue of students; ``done(student)`` is called as each finishes."""

    def __init__(self, jobs: int, task: Task, done):
        self.jobs, self.task, self.done = jobs, task, done
        available = cores()
        # one core per worker, when there are enough, and the system lets a process choose
        self.cores = available if hasattr(os, "sched_setaffinity") and jobs <= len(available) else []
        self.queue: list[Student] = []
        self.workers: list[Worker] = []
        self.selector = selectors.DefaultSelector()

    def run(self, students: list[Student]) -> None:
        self.queue = list(students)
        try:
            for _ in range(min(self.jobs, len(self.queue))):
                self.start().give(self.queue.pop(0), self.task)
            while any(w.student is not None for w in self.workers):
                self.poll()
        finally:  # interrupted or done: no worker outlives the batch
            for worker in list(self.workers):
                self.retire(worker)

    def start(self) -> Worker:
        taken = {w.core for w in self.workers}
        worker = Worker(next((core for core in self.cores if core not in taken), None))
        self.selector.register(worker.process.stdout, selectors.EVENT_READ, worker)
        self.workers.append(worker)
        return worker

    def retire(self, worker: Worker) -> None:
        self.selector.unregister(worker.process.stdout)
        worker.stop()
        self.workers.remove(worker)

    def handed_back(self, worker: Worker) -> Student:
        """The student ``worker`` is done with; the worker already has the next one, if any, so that
        it grades while the report is read and written (``write_atomically`` waits for the disk)."""
        student, worker.student = worker.student, None
        if self.queue:
            worker.give(self.queue.pop(0), self.task)
        return student

    def record(self, student: Student, report: dict) -> None:
        student.report = report
        self.done(student)

    def replace(self, worker: Worker, why: str) -> None:
        """A worker died or overran: its student fails with ``why``, a fresh worker takes over."""
        student = worker.student
        self.retire(worker)
        if student is not None:
            replacement = self.start()
            replacement.student = student
            self.record(self.handed_back(replacement), failure("grader-failed", why))

    def poll(self) -> None:
        for key, _ in self.selector.select(timeout=0.5):
            worker: Worker = key.data
            chunk = os.read(worker.process.stdout.fileno(), 1 << 20)
            if not chunk:
                self.replace(worker, "the grading process died")
                continue
            worker.buffer += chunk
            while b"\n" in worker.buffer and worker.student is not None:
                line, _, worker.buffer = worker.buffer.partition(b"\n")
                student = self.handed_back(worker)
                try:
                    reply = json.loads(line)
                except ValueError:
                    reply = failure("grader-failed", "the grading process answered garbage")
                self.record(student, reply)
        for worker in [w for w in self.workers if w.student is not None and time.monotonic() > w.deadline]:
            self.replace(worker, "grading took far longer than its time limits allow")


class Progress:
    """A bar with the count, the rate and the time left on a terminal; a plain line per student elsewhere
    (CI logs)."""

    def __init__(self, total: int, stream=sys.stderr):
        self.total, self.count, self.stream = total, 0, stream
        self.tty = stream.isatty()
        self.started = time.monotonic()
        self.graded = 0

    def update(self, student: Student, cached: bool = False) -> None:
        self.count += 1
        self.graded += not cached
        score = score_of(student.report)
        status = "unchanged, kept" if cached else student.report.get("status", "graded")
        if self.tty:
            elapsed = time.monotonic() - self.started
            rate = self.graded / elapsed if elapsed > 0 and self.graded else 0.0
            eta = f"{(self.total - self.count) / rate:.0f} s left" if rate else "--"
            bar = "#" * int(30 * self.count / self.total)
            self.stream.write(f"\r[{bar:.<30}] {self.count}/{self.total} {rate:.1f}/s {eta:<12} "
                              f"{name(student.id)[:24]:<24}")
            if self.count == self.total:
                self.stream.write("\n")
        else:
            shown = "not graded" if score is None else f"{score:g}"
            self.stream.write(f"{self.count}/{self.total} {name(student.id)}: {shown} ({status})\n")
        self.stream.flush()


def run_batch(submissions: Path, out: Path, jobs: int, timeout: float | None, force: bool = False,
              assignment: str = "micrograde", config: Path | None = None,
              shard: tuple[int, int] | None = None) -> int:
    """Grade every student not graded already with these settings; write the reports and the summaries. With
    ``shard`` (K, N), only the students of shard K of N, and its manifest instead of the class's files
    (``grader.staff.shards``: ``batch-merge`` writes them from every shard's)."""
    from grader.staff.shards import MANIFEST, manifest, shard_of

    everyone = students_in(submissions)
    students = everyone if shard is None else [s for s in everyone if shard_of(s.id, shard[1]) == shard[0]]
    task = Task(timeout, config)
    settings = {"timeout": timeout, "config_sha256": task.exercise().config.sha256}
    reports = out / "reports"
    reports.mkdir(parents=True, exist_ok=True)
    progress = Progress(len(students))
    directory = usable_directory()
    secret = keyfile.secret(directory, SECRET_NAME) if directory is not None else None
    pending, written = [], {}
    for student in students:
        try:
            student.digest = content_hash(student.path)
        except OSError as exc:  # one student's unreadable files stop no one else's grade
            student.digest = f"unreadable: {exc.strerror}"
        report = None if force else cached(student, reports, settings, secret)
        if report is not None:
            student.report = report
            written[student.id] = (reports / f"{student.id}.json").read_text(encoding="utf-8")
            progress.update(student, cached=True)
        else:
            pending.append(student)

    def done(student: Student) -> None:
        student.report.update({"student": student.id, "content_sha256": student.digest,
                               "micrograde_version": __version__, "batch_settings": settings})
        student.report.setdefault("status", "graded")
        if secret is not None:
            student.report["batch_mac"] = keyfile.mac(secret, signed(student.report))
        written[student.id] = json.dumps(student.report, indent=2) + "\n"
        write_atomically(reports / f"{student.id}.json", written[student.id])
        progress.update(student)

    Pool(jobs, task, done).run(pending)
    if shard is not None:
        write_atomically(out / MANIFEST.format(k=shard[0], n=shard[1]),
                         json.dumps(manifest(shard, [s.id for s in everyone], settings, written), indent=1) + "\n")
        return 0
    write_class(out, [(s.id, s.report) for s in students], assignment)
    return 0


def write_class(out: Path, rows: list[tuple[str, dict]], assignment: str) -> None:
    """The class's files from every student's report, in the batch's order: the gradebooks, the summaries."""
    summary = summarise(rows)
    write_atomically(out / "grades.csv", grades_csv(rows))
    write_atomically(out / "gradebook.csv", lms_csv(rows, assignment))
    write_atomically(out / "summary.md", summary_markdown(summary))
    write_atomically(out / "summary.html", summary_html(summary))
