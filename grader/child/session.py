"""The submission's child process as grading sees it: started, loaded, restarted after a loss.

Every reply passes through here, so what a reply says about the process
itself (cheating attempts, output cut short) is collected in one place.
"""

from __future__ import annotations

import importlib
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from grader.child.worker import Streams, Worker, WorkerLost, captured_output, cpu_limit
from grader.exercise.kinds import LANES, PLAIN, Lane
from grader.exercise.names import CHILDREN_NAMES
from grader.exercise.ops import OPS, reflection
from grader.exercise.targets import Exercise
from grader.submission.source import Submission

# The share of the load limit after which the child stops the submission's code where it is, so that the
# report can say which statement was running before the grading process gives the child up.
LOAD_STOP = 0.8


def load_stop(limit: float) -> float:
    """The seconds a load runs before the child stops it: the time it is given (``LOAD_STOP`` of ``limit``)."""
    return max(0.05, LOAD_STOP * limit)


@dataclass(frozen=True)
class Loaded:
    """What loading the submission said, once, in the first child that loaded it (or how it was lost)."""

    defined: dict[str, bool] = field(default_factory=dict)  # by role: whether the submission defines it
    failures: tuple[dict, ...] = ()  # a file or cell that raised as it loaded, as the child described it
    missing_modules: tuple[str, ...] = ()  # not installed here; given stand-ins so the file could load
    violations: tuple[str, ...] = ()  # what the guard refused or recorded while it loaded
    lost: WorkerLost | None = None  # loading hung or killed its process


@dataclass(frozen=True)
class Observed:
    """What the submission's children showed of themselves over the whole grade, besides its answers."""

    violations: tuple[str, ...] = ()  # cheating attempts the guard refused or recorded
    truncated: bool = False  # it printed more than the report keeps
    equality: str | None = None  # "value" or "unhashable": how the class compares (see diagnosis.equality)
    inferred: dict[str, str] = field(default_factory=dict)  # the exercise's name -> the class's own, where they differ
    confinement: dict = field(default_factory=dict)  # what held in every child (the weakest counts)
    output: str = ""  # what it printed, capped


INFERRED_ROLES = ("data", "grad", "_backward", "_prev", "step")  # what the child may say it found a class names


class Watch:
    """What every reply says about the process itself (cheating attempts, cut output) and about the
    class (how it compares nodes, what it names their parts), gathered as the replies come."""

    def __init__(self) -> None:
        self.violations: list[str] = []
        self.truncated = False
        self.equality: str | None = None
        self.inferred: dict[str, str] = {}
        self.confinement: dict = {}

    def observe(self, reply: dict) -> dict:
        violations = reply.get("violations")
        if isinstance(violations, list):
            for v in violations:
                if isinstance(v, str) and v not in self.violations and len(self.violations) < 20:
                    self.violations.append(v[:300])
        self.truncated |= reply.get("truncated") is True
        if reply.get("equality") in ("value", "unhashable"):
            self.equality = reply["equality"]
        inferred = reply.get("inferred")
        if isinstance(inferred, dict) and not self.inferred:
            self.inferred = {role: name for role, name in inferred.items() if role in INFERRED_ROLES
                             and isinstance(name, str) and len(name) <= 40
                             and all(part.isidentifier() for part in name.removesuffix("(grad)").split("."))}
        return reply

    def record_confinement(self, worker: Worker, held: object) -> None:
        """Keep what the child said held, before any submission code ran; the weakest child counts."""
        held = held if isinstance(held, dict) else {"filesystem": "unknown (the child did not say)"}
        if not self.confinement or not worker.sandbox.to_json(held)["tamper_proof"]:
            self.confinement = held

    def snapshot(self, output: str) -> Observed:
        return Observed(tuple(self.violations), self.truncated, self.equality, dict(self.inferred),
                        dict(self.confinement), output)


class Session:
    """The submission's child processes: started, loaded, and restarted after a loss.

    One child for each lane the exercise's targets run in (``grader.exercise.kinds``): the ops and
    ``backward`` in the plain one, ``train_step`` in the one given the training engine. Each child works
    in a folder of its own, the submission's files copied into it (``Worker``). What the first load said
    is ``loaded``; what the children showed of themselves, ``observed()``.
    """

    def __init__(self, submission: Submission, exercise: Exercise, ahead: dict[Lane, Worker] | None = None):
        self.submission = submission
        self.exercise = exercise
        self.ahead = {} if ahead is None else ahead  # children started ahead (``grader.child.ahead``)
        self.workers: dict[Lane, Worker | None] = {lane: None for lane in LANES}
        self.loaded: Loaded | None = None  # what the first load said, once it has
        self.watch = Watch()
        self.streams: list[Streams] = []  # one per child started, in order

    def load_request(self, workdir: Path) -> dict:
        """What the child working in ``workdir`` is sent to load the submission."""
        modules = []
        unique = []
        for role in self.submission.names:
            source = self.submission.providers.get(role)
            if source is None or source.read_error:
                continue
            if any(u.syntax_error for u in source.units) and source.kind == "py":
                continue
            if source in unique:
                modules[unique.index(source)]["provides"].append(role.key)
                continue
            unique.append(source)
            directory, package = None, None
            if self.submission.directory is not None:
                relative = source.path.relative_to(self.submission.directory)
                directory = str(workdir / "submission" / relative.parent)
                package = self.package_of(relative, workdir)
            modules.append({
                "name": source.path.stem if source.path.stem.isidentifier() else "submission",
                "directory": directory,
                "package": package,
                "provides": [role.key],
                "units": [{"filename": u.filename, "source": u.source, "label": u.cell,
                           "isolated": source.kind == "ipynb"}
                          for u in source.units if not u.syntax_error],
            })
        return {"kind": "load", "modules": modules, "stop_after": load_stop(self.exercise.config.load_time_limit),
                "isolation": isolation(self.exercise),
                "children_names": CHILDREN_NAMES, "engine": self.exercise.config.engine.request(),
                "roles": {role.key: {"name": name, "what": role.what} for role, name in self.submission.names.items()}}

    def package_of(self, relative: Path, workdir: Path) -> dict | None:
        """The package a file of the submission belongs to (``src/micrograd/engine.py`` with an
        ``__init__.py`` beside it: ``micrograd``), and the folder it is imported from, as an installed
        package is: its own absolute imports (``from micrograd.topo import topo``) and relative ones work."""
        own = {s.path.relative_to(self.submission.directory) for s in self.submission.files}
        parts, folder = [], relative.parent
        while folder != folder.parent and folder / "__init__.py" in own and folder.name.isidentifier():
            parts.insert(0, folder.name)
            folder = folder.parent
        if not parts:
            return None
        return {"name": ".".join(parts), "root": str(workdir / "submission" / folder)}

    def launch(self, lane: Lane = PLAIN) -> int:
        """Start the child of ``lane`` (or adopt the one started ahead for it) and send it the submission to
        load; returns the load request's id."""
        worker = self.started_ahead(lane) or Worker(Streams(), cpu_seconds=self.cpu_seconds(), lane=lane,
                                                    fill=self.fill)
        self.streams.append(worker.streams)
        self.workers[lane] = worker
        if worker.process is None:
            worker.start()
        return worker.send(self.load_request(worker.workdir))

    def fill(self, workdir: Path) -> None:
        """Put a folder submission's files in a child's working directory, before the child confines itself."""
        if self.submission.directory is not None:
            copy_sources(self.submission, workdir / "submission")

    def cpu_seconds(self) -> int:
        """Each child's CPU limit: no more than the wall-clock time all its work is given."""
        return cpu_limit(self.exercise.time_budget())

    def started_ahead(self, lane: Lane) -> Worker | None:
        """The child started ahead for ``lane``, if it is the one ``launch`` would start: with this CPU
        limit, alive, and for a submission that is a file (a folder's files must be in the working
        directory before a child confines itself). Taken once: a later launch starts a fresh one."""
        worker = self.ahead.get(lane)
        if (worker is None or self.submission.directory is not None or worker.cpu_seconds != self.cpu_seconds()
                or not worker.alive):
            return None
        return self.ahead.pop(lane)

    def settle(self, lane: Lane, load_id: int) -> dict:
        """Wait for a launched process to load the submission; its load's reply."""
        worker = self.workers[lane]
        try:
            return self.watch.observe(worker.receive(load_id, self.exercise.config.load_time_limit))
        finally:
            self.watch.record_confinement(worker, worker.init_reply.get("confinement"))

    def open(self) -> None:
        """Start the processes; a load that hangs or dies is recorded, not raised.

        The child of the exercise's first lane (the plain one, for the ops, where it grades any) loads
        first; the other lanes' children (``train_step``'s, the modules') start and load alongside it (each
        has a core of its own on most machines); if such an early load is lost, the child is started
        again when its target is graded, as if it had never been tried. A lane no target grades in starts
        no child. The children share nothing, not even a folder, in every sandbox mode.
        """
        lane = self.exercise.lanes[0]
        try:
            first = self.launch(lane)
            early = self.launch_early()
            # The search loads while the children start (Hypothesis itself only if a search needs it).
            importlib.import_module("grader.search.engine")
            said = self.settle(lane, first)
        except WorkerLost as lost:
            self.loaded = Loaded(violations=tuple(self.watch.violations), lost=lost)
            self.close()
            return
        for lane, load_id in early.items():
            try:
                again = self.settle(lane, load_id)
                said = said if isinstance(said.get("defined"), dict) and said["defined"] else again
                if stopped_for_time(again):
                    self.forget(lane)  # loaded beside the first: it is tried again alone, when its target is graded
            except WorkerLost:
                self.forget(lane)
        self.loaded = loaded_from(said, self.watch.violations)

    def launch_early(self) -> dict[Lane, int]:
        """Launch the child of every other lane the exercise grades in; the load request of each (not of a
        child lost as it started)."""
        launched = {}
        for lane in self.exercise.lanes[1:]:
            try:
                launched[lane] = self.launch(lane)
            except WorkerLost:
                self.forget(lane)
        return launched

    def forget(self, lane: Lane) -> None:
        """End one child; the next call for its lane starts a fresh one."""
        if self.workers[lane] is not None:
            self.workers[lane].close()
            self.workers[lane] = None

    def call(self, request: dict, deadline: float, lane: Lane = PLAIN) -> dict:
        return next(self.call_many([request], deadline, lane))

    def call_many(self, requests: list[dict], deadline: float, lane: Lane = PLAIN) -> Iterator[dict]:
        """The replies to ``requests`` in order, sent ahead of their replies (``Worker.call_many``)."""
        if self.loaded is not None and self.loaded.lost is not None:
            raise self.loaded.lost
        worker = self.workers[lane]
        if worker is None or not worker.alive:
            if stopped_for_time(self.settle(lane, self.launch(lane))):
                self.forget(lane)
                raise WorkerLost("timeout", f"loading the submission again, in the process that grades this target, "
                                            f"ran past {self.exercise.config.load_time_limit:g} s, the load limit "
                                            "(the code at its top level runs in every process that grades it)")
            worker = self.workers[lane]
        for reply in worker.call_many(requests, max(0.05, deadline - time.monotonic())):
            yield self.watch.observe(reply)

    def observed(self) -> Observed:
        """What the children showed of themselves so far, with what the submission printed."""
        return self.watch.snapshot(captured_output(self.streams))

    def close(self) -> None:
        """End the children (a later call starts a fresh one)."""
        for lane in self.workers:
            self.forget(lane)


def stopped_for_time(reply: dict) -> bool:
    """Whether a child's load reply says it stopped the submission's top-level code for time."""
    failures = reply.get("failures")
    return isinstance(failures, list) and any(isinstance(f, dict) and f.get("type") == "LoadTimeout" for f in failures)


def isolation(exercise: Exercise) -> dict[str, dict]:
    """Every method of the exercise's op targets, with the target that grades it and its result's label:
    while one target's cases run, the child has the others stand aside (``grader.child.inside.isolation``).
    A reflected method (``__radd__``) is its op's, unless a target of its own grades it."""
    graded = {t.op_name for t in exercise.op_targets}  # by op: targets grading one op at several cells share it
    table = {}
    for name in graded:
        table[OPS[name].method] = {"target": name, "label": OPS[name].label}
        reflected = reflection(name)
        if reflected is not None and reflected not in graded:
            table[OPS[reflected].method] = {"target": name, "label": OPS[reflected].label}
    return table


def loaded_from(reply: dict, violations: list[str]) -> Loaded:
    """A load's reply as a value; nothing in it is trusted to be of the type it claims."""
    defined = reply.get("defined", {}) if isinstance(reply.get("defined"), dict) else {}
    failures = reply.get("failures", [])
    missing = reply.get("missing_modules", [])
    return Loaded(defined, tuple(f for f in failures if isinstance(f, dict)) if isinstance(failures, list) else (),
                  tuple([m for m in missing if isinstance(m, str)][:20]) if isinstance(missing, list) else (),
                  tuple(violations))


def copy_sources(submission: Submission, destination: Path) -> None:
    """Copy the submission's source files for local imports, before any child runs.

    ``read_submission`` has already refused links that leave the submission, so
    the files are read through links inside it; every copy is a new file
    (``O_EXCL``, never through a link), readable by the unprivileged child.
    """
    for source in submission.files:
        target = destination / source.path.relative_to(submission.directory)
        target.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
        data = source.path.read_bytes()
        with open(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644), "wb") as out:
            os.fchmod(out.fileno(), 0o644)
            out.write(data)
    for directory in (destination, *destination.rglob("*")) if destination.is_dir() else ():
        if directory.is_dir():
            directory.chmod(0o755)
