"""``micrograde batch``: grade a folder of submissions, one per student, in parallel.

Each entry of the folder (a file, or a folder per student, as LMS and GitHub
Classroom downloads are laid out) is one student, named by the entry. Grading
happens in worker processes that are themselves only grading processes (the
students' code runs in their children, as always); a worker that crashes or
hangs costs only the student it was grading, and is replaced.

Every report is written atomically as soon as it is done, with the hash of
the submission's content, so an interrupted batch restarted with the same
arguments skips every student already graded whose submission has not
changed, and nothing already written is ever lost or half-written.
"""

from __future__ import annotations

import csv
import hashlib
import html
import io
import json
import os
import selectors
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from grader import __version__

SKIPPED = {"__pycache__", ".ipynb_checkpoints"}


@dataclass
class Student:
    id: str
    path: Path
    digest: str = ""
    report: dict = field(default_factory=dict)


def students_in(folder: Path) -> list[Student]:
    """One student per entry, named by the entry (a file's name without its suffix)."""
    entries = sorted(e for e in folder.iterdir() if not e.name.startswith(".") and e.name not in SKIPPED)
    stems = [e.stem if e.is_file() else e.name for e in entries]
    return [Student(stem if stems.count(stem) == 1 else entry.name, entry) for stem, entry in zip(stems, entries)]


def content_hash(path: Path) -> str:
    """A hash of everything in the submission (names and bytes); links are hashed, never followed."""
    digest = hashlib.sha256()
    paths = [path] if not path.is_dir() or path.is_symlink() else sorted(
        p for p in path.rglob("*") if not any(part in SKIPPED for part in p.relative_to(path).parts))
    for p in paths:
        digest.update(str(p.relative_to(path) if p != path else p.name).encode() + b"\0")
        if p.is_symlink():
            digest.update(b"link:" + os.readlink(p).encode())
        elif p.is_file():
            with open(p, "rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    digest.update(block)
        digest.update(b"\0")
    return digest.hexdigest()


def write_atomically(path: Path, text: str) -> None:
    """Write ``text`` to a temporary file beside ``path``, then rename it into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def cached(student: Student, reports: Path) -> dict | None:
    try:
        report = json.loads((reports / f"{student.id}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if report.get("content_sha256") == student.digest and report.get("micrograde_version") == __version__:
        return report
    return None


class Worker:
    """A grading process that takes one submission at a time (see ``grader.staff.batch_process``)."""

    def __init__(self):
        self.process = subprocess.Popen([sys.executable, "-m", "grader.staff.batch_process"], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.student: Student | None = None
        self.deadline = 0.0
        self.buffer = b""

    def give(self, student: Student, task: Task) -> None:
        self.student = student
        self.deadline = time.monotonic() + task.deadline
        self.process.stdin.write((json.dumps({"path": str(student.path), **task.to_json()}) + "\n").encode())
        self.process.stdin.flush()

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()


@dataclass(frozen=True)
class Task:
    """How every student of the batch is graded: the course configuration and ``--timeout``."""

    timeout: float | None
    config: Path | None

    def to_json(self) -> dict:
        return {"timeout": self.timeout, "config": None if self.config is None else str(self.config.resolve())}

    @property
    def deadline(self) -> float:
        """Seconds one student may take before the grading process is presumed lost: all the
        work's time limits, plus starting a child for loading and after each target."""
        from grader.child.session import STARTUP_SECONDS
        from grader.grade import Options
        from grader.spec.config import load

        exercise = Options(load(self.config), self.timeout).exercise()
        return exercise.time_budget() + STARTUP_SECONDS * (len(exercise.targets) + 2)


def failure(status: str, error: str) -> dict:
    """The report of a student who could not be graded: why, and no points."""
    return {"status": status, "error": error, "score": 0.0, "max_score": 100.0, "diagnoses": [], "checks": []}


class Pool:
    """``jobs`` workers grading a queue of students; ``done(student)`` is called as each finishes."""

    def __init__(self, jobs: int, task: Task, done):
        self.jobs, self.task, self.done = jobs, task, done
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
        worker = Worker()
        self.selector.register(worker.process.stdout, selectors.EVENT_READ, worker)
        self.workers.append(worker)
        return worker

    def retire(self, worker: Worker) -> None:
        self.selector.unregister(worker.process.stdout)
        worker.stop()
        self.workers.remove(worker)

    def finish(self, worker: Worker, report: dict) -> None:
        """Record the student's report and give the worker the next student."""
        student, worker.student = worker.student, None
        student.report = report
        self.done(student)
        if self.queue:
            worker.give(self.queue.pop(0), self.task)

    def replace(self, worker: Worker, why: str) -> None:
        """A worker died or overran: its student fails with ``why``, a fresh worker takes over."""
        student = worker.student
        self.retire(worker)
        if student is not None:
            replacement = self.start()
            replacement.student = student
            self.finish(replacement, failure("grader-failed", why))

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
                try:
                    reply = json.loads(line)
                except ValueError:
                    reply = failure("grader-failed", "the grading process answered garbage")
                self.finish(worker, reply)
        for worker in [w for w in self.workers if w.student is not None and time.monotonic() > w.deadline]:
            self.replace(worker, "grading took far longer than its time limits allow")


def gradebook(students: list[Student]) -> str:
    """``grades.csv``: one row per student, one column per target, and the diagnosis codes."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    columns = list(dict.fromkeys(t for s in students for t in s.report.get("targets", {})))
    writer.writerow(["id", "score", "max_score", *columns, "status", "diagnoses"])
    for student in students:
        report = student.report
        targets = report.get("targets", {})
        writer.writerow([
            student.id, f"{report.get('score', 0.0):g}", f"{report.get('max_score', 100.0):g}",
            *[f"{targets.get(t, {}).get('score', 0.0):g}" for t in columns],
            report.get("status", "graded"),
            " ".join(f"{d['target']}:{d['code']}" for d in report.get("diagnoses", [])),
        ])
    return out.getvalue()


def diagnosis_counts(students: list[Student]) -> list[tuple[str, int]]:
    """How many students hit each diagnosis, most common first."""
    counts: dict[str, int] = {}
    for student in students:
        keys = [f"{d['target']}:{d['code']}" for d in student.report.get("diagnoses", [])]
        if student.report.get("status", "graded") != "graded":
            keys.append(f"submission:{student.report['status']}")
        for key in dict.fromkeys(keys):
            counts[key] = counts.get(key, 0) + 1
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))


def summary_markdown(students: list[Student], counts: list[tuple[str, int]]) -> str:
    scores = [s.report.get("score", 0.0) for s in students]
    mean = sum(scores) / len(scores) if scores else 0.0
    full = sum(1 for s in students if s.report.get("score") == s.report.get("max_score", 100.0))
    lines = ["# micrograde: class summary", "",
             f"{len(students)} submissions; mean score {mean:.1f}; {full} with full marks.", "",
             "| diagnosis | students |", "|---|---|"]
    lines += [f"| `{key}` | {n} |" for key, n in counts]
    return "\n".join(lines) + "\n"


def summary_html(students: list[Student], counts: list[tuple[str, int]]) -> str:
    """The same summary as a page with a bar chart (inline SVG, nothing to load)."""
    width, bar, gap, label = 640, 22, 8, 260
    most = max((n for _, n in counts), default=1)
    rows = []
    for i, (key, n) in enumerate(counts):
        y = i * (bar + gap)
        length = max(2, int((width - label - 60) * n / most))
        rows.append(f'<text x="{label - 8}" y="{y + 16}" text-anchor="end">{html.escape(key)}</text>'
                    f'<rect x="{label}" y="{y}" width="{length}" height="{bar}" fill="#c0392b"/>'
                    f'<text x="{label + length + 6}" y="{y + 16}">{n}</text>')
    height = max(1, len(counts)) * (bar + gap)
    chart = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'font-family="sans-serif" font-size="13">{"".join(rows)}</svg>') if counts else "<p>No diagnoses.</p>"
    table = "".join(f"<tr><td><code>{html.escape(k)}</code></td><td>{n}</td></tr>" for k, n in counts)
    scores = [s.report.get("score", 0.0) for s in students]
    mean = sum(scores) / len(scores) if scores else 0.0
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>micrograde: class summary</title>"
            f"<style>body{{font-family:sans-serif;margin:2em}}td{{padding:2px 12px}}</style></head><body>"
            f"<h1>micrograde: class summary</h1><p>{len(students)} submissions; mean score {mean:.1f}.</p>"
            f"<h2>Students per diagnosis</h2>{chart}<table><tr><th>diagnosis</th><th>students</th></tr>{table}"
            f"</table></body></html>\n")


class Progress:
    """A bar on a terminal; a plain line per student elsewhere (CI logs)."""

    def __init__(self, total: int, stream=sys.stderr):
        self.total, self.count, self.stream = total, 0, stream
        self.tty = stream.isatty()

    def update(self, student: Student, cached: bool = False) -> None:
        self.count += 1
        score = student.report.get("score", 0.0)
        status = "unchanged, kept" if cached else student.report.get("status", "graded")
        if self.tty:
            bar = "#" * int(30 * self.count / self.total)
            self.stream.write(f"\r[{bar:.<30}] {self.count}/{self.total} {student.id[:30]:<30}")
            if self.count == self.total:
                self.stream.write("\n")
        else:
            self.stream.write(f"{self.count}/{self.total} {student.id}: {score:g} ({status})\n")
        self.stream.flush()


def run_batch(submissions: Path, out: Path, jobs: int, timeout: float | None, config: Path | None = None) -> int:
    students = students_in(submissions)
    reports = out / "reports"
    reports.mkdir(parents=True, exist_ok=True)
    progress = Progress(len(students))
    pending = []
    for student in students:
        student.digest = content_hash(student.path)
        report = cached(student, reports)
        if report is not None:
            student.report = report
            progress.update(student, cached=True)
        else:
            pending.append(student)

    def done(student: Student) -> None:
        student.report.update({"student": student.id, "content_sha256": student.digest,
                               "micrograde_version": __version__})
        student.report.setdefault("status", "graded")
        write_atomically(reports / f"{student.id}.json", json.dumps(student.report, indent=2) + "\n")
        progress.update(student)

    Pool(jobs, Task(timeout, config), done).run(pending)
    counts = diagnosis_counts(students)
    write_atomically(out / "grades.csv", gradebook(students))
    write_atomically(out / "summary.md", summary_markdown(students, counts))
    write_atomically(out / "summary.html", summary_html(students, counts))
    return 0
