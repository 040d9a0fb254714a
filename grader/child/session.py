"""The submission's child process as grading sees it: started, loaded, restarted after a loss.

Every reply passes through here, so what a reply says about the process
itself (cheating attempts, output cut short) is collected in one place.
"""

from __future__ import annotations

import importlib
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from grader.child.process import Worker, WorkerLost, captured_output
from grader.submission.source import Submission


@dataclass(frozen=True)
class Options:
    timeout: float = 10.0  # seconds of wall clock for each target, and for loading
    max_examples: int = 30  # generated expressions per target (each one a round trip to the child)


class Session:
    """The submission's child process: started, loaded, and restarted after it is lost."""

    def __init__(self, submission: Submission, workdir: Path, options: Options):
        self.submission = submission
        self.workdir = workdir
        self.options = options
        self.worker: Worker | None = None
        self.defined: dict[str, bool] = {}
        self.failures: list[dict] = []
        self.load_lost: WorkerLost | None = None
        self.violations: list[str] = []
        self.truncated = False
        self.children = 0
        self.filesystem = ""

    def load_request(self) -> dict:
        modules = []
        unique = []
        for name in ("Value", "train_step"):
            source = self.submission.providers.get(name)
            if source is None or source.read_error:
                continue
            if any(u.syntax_error for u in source.units) and source.kind == "py":
                continue
            if source in unique:
                modules[unique.index(source)]["provides"].append(name)
                continue
            unique.append(source)
            directory = None
            if self.submission.directory is not None:
                directory = str(self.workdir / "submission" / source.path.relative_to(
                    self.submission.directory).parent)
            modules.append({
                "name": source.path.stem if source.path.stem.isidentifier() else "submission",
                "directory": directory,
                "provides": [name],
                "units": [{"filename": u.filename, "source": u.source, "label": u.cell,
                           "isolated": source.kind == "ipynb"}
                          for u in source.units if not u.syntax_error],
            })
        return {"kind": "load", "modules": modules}

    def start(self, meanwhile=None) -> None:
        """Start a process and load the submission; ``meanwhile`` runs while it loads."""
        self.children += 1
        self.worker = Worker(self.workdir, cpu_seconds=int(self.options.timeout * 8) + 10, number=self.children)
        load_id = self.worker.send(self.load_request())
        if meanwhile is not None:
            meanwhile()
        reply = self.observe(self.worker.receive(load_id, self.options.timeout))
        if not self.filesystem:
            self.filesystem = str(self.worker.init_reply.get("filesystem", ""))
        if not self.defined:
            self.defined = reply.get("defined", {}) if isinstance(reply.get("defined"), dict) else {}
            failures = reply.get("failures", [])
            self.failures = [f for f in failures if isinstance(f, dict)] if isinstance(failures, list) else []

    def open(self) -> None:
        """Start the first process; a load that hangs or dies is recorded, not raised."""
        if self.submission.directory is not None:
            copy_sources(self.submission, self.workdir / "submission")
        try:
            # The search loads while the child starts (Hypothesis itself only if a search needs it).
            self.start(meanwhile=lambda: importlib.import_module("grader.search.engine"))
        except WorkerLost as lost:
            self.load_lost = lost
            self.close()

    def call(self, request: dict, deadline: float) -> dict:
        if self.load_lost is not None:
            raise self.load_lost
        if self.worker is None or not self.worker.alive:
            self.start()
        return self.observe(self.worker.call(request, max(0.05, deadline - time.monotonic())))

    def observe(self, reply: dict) -> dict:
        """Keep what every reply says about the process itself: cheating attempts, cut output."""
        violations = reply.get("violations")
        if isinstance(violations, list):
            for v in violations:
                if isinstance(v, str) and v not in self.violations and len(self.violations) < 20:
                    self.violations.append(v[:300])
        self.truncated |= reply.get("truncated") is True
        return reply

    def output(self) -> str:
        return captured_output(self.workdir, self.children)

    def close(self) -> None:
        """End the current child (a later call starts a fresh one)."""
        if self.worker is not None:
            self.worker.close()
            self.worker = None


def copy_sources(submission: Submission, destination: Path) -> None:
    """Copy the submission's source files (never following links) for local imports."""
    for source in submission.files:
        target = destination / source.path.relative_to(submission.directory)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source.path, target, follow_symlinks=False)


