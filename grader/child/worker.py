"""The grading process's handle on a child process that runs submission code.

A ``Worker`` has the launcher (``grader.child.launcher``) start
the child's modules (``grader/child/inside/``) in a process and session of its own, talks to it
over a private pair of pipes, and enforces a deadline on every reply. A child
that hangs, dies or answers garbage is killed and reported as ``WorkerLost``;
the caller decides what that costs and starts a fresh one.

The grading process never opens a path the child could have touched: the
child's stdout and stderr are unnamed files (``Streams``), created before it
starts and read back through their descriptors, so no link planted in the
working directory can make the grader read or write anything else.
"""

from __future__ import annotations

import functools
import json
import math
import os
import re
import select
import tempfile
import time
from collections import deque
from collections.abc import Callable, Iterator
from pathlib import Path

from grader.child import launcher, sandbox, workdirs
from grader.child.shipping import BOOTSTRAP, blob, child_mark, code_file, shipment, training_engine
from grader.exercise.kinds import PLAIN, Lane
from grader.submission.nesting import too_deep

TYPE_CHECKING = False  # as in grader/__init__.py
if TYPE_CHECKING:
    import typing
MAX_REPLY_BYTES = 4 * 1024 * 1024
WINDOW_BYTES = 16 * 1024  # requests sent ahead of their replies (a pipe holds at least this much)
REFILL_BYTES = WINDOW_BYTES // 2  # more are sent once no more than this awaits its replies
MAX_REPLY_DEPTH = 32  # a real reply nests four deep; a recursive parser must never see more
OUTPUT_CAP_BYTES = 64 * 1024
STARTUP_SECONDS = 5.0  # what starting one child may take on a loaded machine, beyond its time limits
WATCH_SECONDS = 0.025  # how often the working directory is measured while a child works


@functools.cache
def compiled(lane: Lane) -> bytes:
    """What a child of ``lane`` is shipped beside the modules of ``grader/child/inside/`` (the fork server
    has run those, ``grader.child.shipping``), made once a process, before the first child starts (nothing
    a submission does later can change what the next child is given): the training engine, for the lane
    that has it only (with the reference MLP, losses and SGD for the lane that has them)."""
    return blob(shipment((), training_engine(lane.models) if lane.training_engine else None))


class WorkerLost(BaseException):
    """The child stopped answering: ``reason`` is ``"timeout"`` or ``"crash"``.

    A ``BaseException`` so that Hypothesis stops at once instead of treating
    it as one more failing example to shrink.
    """

    def __init__(self, reason: str, detail: str):
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail

    @property
    def status(self) -> str:
        """The status of the check it interrupted."""
        return "timeout" if self.reason == "timeout" else "error"


class Streams:
    """Where one child's stdout and stderr go: files without a name, read back by descriptor.

    They are closed with this object, once the report has what they hold.
    """

    def __init__(self) -> None:
        self.stdout = tempfile.TemporaryFile()
        self.stderr = tempfile.TemporaryFile()

    def read(self, stream: str) -> bytes:
        """The first ``OUTPUT_CAP_BYTES`` of ``stream`` (``"stdout"`` or ``"stderr"``)."""
        handle = getattr(self, stream)
        handle.seek(0)
        return handle.read(OUTPUT_CAP_BYTES)


def cpu_limit(budget: float) -> int:
    """A child's CPU seconds: no more than the wall-clock time all its work is given (``budget``), and
    its start."""
    return math.ceil(budget + STARTUP_SECONDS)


class Worker:
    """One child process, started on first use, in a working directory of its own.

    Every child it starts gets a new, empty folder (``workdirs.new_job_folder``), filled by ``fill`` (the
    submission's files, for a folder) before the child confines itself, and removed with the child: no
    other child, of this grade or another, ever shares it. Without namespaces the children of one grade
    run side by side under the same uid, so a folder they shared would let one hand another what it
    holds (the training engine, the reference losses); a child that replaces a lost one starts empty too.
    """

    def __init__(self, streams: Streams, cpu_seconds: int = 120, lane: Lane = PLAIN, kernel: bool = False,
                 fill: Callable[[Path], None] | None = None):
        self.workdir: Path | None = None  # the running child's own working directory (``start``)
        self.fill = fill
        self.streams = streams
        self.lane = lane  # which child of the grade it is: what it is shipped beside the submission
        self.kernel = kernel  # this child is ``--execute``'s notebook kernel (``grader/child/inside/kernel.py``)
        self.cpu_seconds = cpu_seconds
        self.sandbox = launcher.detect()
        self.process: launcher.Child | None = None
        self._ids = 0
        self._buffer = b""
        self._watched = 0.0  # when the working directory was last measured (see ``watch``)
        self.init_id: int | None = None

    def start(self) -> None:
        """Start the child in a new working directory of its own (see the class's docstring)."""
        workdir = Path(workdirs.new_job_folder(f"micrograde-{self.lane.name}-")).resolve()
        self.workdir = workdir
        try:
            if self.fill is not None:
                self.fill(workdir)
            req_r, req_w = os.pipe()
            rep_r, rep_w = os.pipe()
        except BaseException:
            workdirs.remove_tree(workdir)
            raise
        code = code_file(compiled(self.lane))
        layer = self.sandbox.shared_layer(workdir)
        passed = (code, req_r, rep_w)  # the child's 3, 4, 5; the shared Landlock layer, if any, comes next
        try:
            self.process = launcher.Child(
                BOOTSTRAP, ["-c", child_mark(), "3", "4", "5"], (self.streams.stdout.fileno(),
                self.streams.stderr.fileno(), *passed), cwd=str(workdir),
                env=sandbox.environment(str(workdir)), limits=sandbox.limits(self.cpu_seconds),
                isolated=self.sandbox.isolated, layer=layer, runs_child=True)
        except BaseException:
            os.close(req_w)
            os.close(rep_r)
            workdirs.remove_tree(workdir)
            raise
        finally:
            os.close(code)
            os.close(req_r)
            os.close(rep_w)
        self._requests = os.fdopen(req_w, "wb", buffering=0)
        self._replies = rep_r
        self._buffer = b""
        at = None if layer is None else 3 + len(passed)  # the layer's descriptor, if any
        self.init_id = self.send({
            "kind": "init", "workdir": str(workdir), "hidden": sandbox.hidden_paths(), "output_cap": OUTPUT_CAP_BYTES,
            "confinement": self.sandbox.plan(workdir, at), "kernel": self.kernel,
        })
        self._unawaited = {self.init_id}
        self.init_reply: dict = {}

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.alive

    def send(self, request: dict) -> int:
        """Send a request without waiting; returns the id its reply will carry."""
        request_id, line = self._line(json.dumps(request).encode())
        self._write(line)
        return request_id

    def _line(self, body: bytes) -> tuple[int, bytes]:
        """A fresh id for a request encoded as ``body`` (a JSON object), and the line that sends it."""
        if self.process is None:
            self.start()
        self._ids += 1
        return self._ids, b'{"id": %d, ' % self._ids + body[1:] + b"\n"

    def _write(self, line: bytes) -> None:
        try:
            self._requests.write(line)
        except (BrokenPipeError, OSError):
            self.lost("crash", "the submission's process exited")

    def lost(self, reason: str, detail: str) -> typing.NoReturn:
        """Kill the child and raise ``WorkerLost``; ``MachineError`` instead if it never started."""
        self.process.started()
        self.kill()
        raise WorkerLost(reason, detail) from None

    def receive(self, request_id: int, timeout: float) -> dict:
        """Wait at most ``timeout`` seconds for the reply to ``request_id`` (see ``read_reply``)."""
        deadline = time.monotonic() + timeout
        while True:
            reply_id, reply = self._next_reply(deadline)
            if reply_id == request_id:
                return reply
            if reply_id not in self._unawaited:
                self.lost("crash", "the submission's process sent an unexpected reply")
            self._unawaited.discard(reply_id)
            if reply_id == self.init_id:
                self.init_reply = reply

    def call_many(self, requests: list[dict], timeout: float) -> Iterator[dict]:
        """The replies to ``requests``, in order, all within ``timeout`` seconds.

        Requests are sent ahead while the child works on earlier ones, so that it
        computes while the grading process judges; the child still reads and answers
        them one at a time, in order, exactly as if each were sent after the last
        reply. At most ``WINDOW_BYTES`` of requests await their replies (or a single
        request, however large), so the two processes never wait on each other with
        both pipes full. Requests go in one write per refill, and the window is refilled
        only once half of it is answered: a write per request would wake the child once
        a request, where it can read many lines at a time. Replies that will not be read
        (the caller stopped early) are skipped when they come.
        """
        deadline = time.monotonic() + timeout
        queue = deque(requests)
        awaiting: deque[tuple[int, int]] = deque()  # (id, size) of the requests sent and not yet answered
        in_flight = 0
        ready: tuple[int, bytes] | None = None  # the next request, made but not sent
        try:
            while queue or ready or awaiting:
                lines = []
                while (queue or ready) and (not awaiting or in_flight <= REFILL_BYTES or lines):
                    request_id, line = ready or self._line(encoded(queue.popleft()))
                    ready = None
                    if awaiting and in_flight + len(line) > WINDOW_BYTES:
                        ready = request_id, line
                        break
                    lines.append(line)
                    awaiting.append((request_id, len(line)))
                    in_flight += len(line)
                if lines:
                    self._write(b"".join(lines))
                request_id, size = awaiting.popleft()
                in_flight -= size
                yield self.receive(request_id, deadline - time.monotonic())
        finally:
            self._unawaited.update(request_id for request_id, _ in awaiting)

    def _next_reply(self, deadline: float) -> tuple[object, dict]:
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.lost("timeout", "it ran past its time limit")
            ready, _, _ = select.select([self._replies], [], [], min(remaining, WATCH_SECONDS))
            self.watch()
            if not ready:
                continue
            chunk = os.read(self._replies, 65536)
            if not chunk:
                self.lost("crash", "the submission's process exited")
            self._buffer += chunk
            if len(self._buffer) > MAX_REPLY_BYTES:
                self.lost("crash", "the submission's process sent an oversized reply")
        line, _, self._buffer = self._buffer.partition(b"\n")
        reply_id, reply = read_reply(line)
        if reply is None:
            self.lost("crash", "the submission's process sent an unreadable reply")
        return reply_id, reply

    def watch(self) -> None:
        """End the child once its working directory holds more than a namespace's tmpfs would let it
        (``sandbox.WORK_BYTES``, ``sandbox.WORK_FILES``): without namespaces nothing else bounds it, so
        the files the child unlinked and still holds count too. Looked at every ``WATCH_SECONDS`` while a
        reply is awaited."""
        now = time.monotonic()
        if now < self._watched + WATCH_SECONDS:
            return
        self._watched = now
        if self.workdir is None:
            return
        holder = None if self.sandbox.isolated or self.process is None else self.process.started()
        excess = workdirs.workdir_excess(self.workdir, holder,
                                        (self.streams.stdout.fileno(), self.streams.stderr.fileno()))
        if excess is not None:
            self.lost("crash", excess)

    def kill(self) -> None:
        """End the child and everything it started in its session."""
        if self.process is None:
            return
        self.process.end()
        self.process = None
        self._requests.close()
        os.close(self._replies)
        workdirs.remove_tree(self.workdir)

    def close(self) -> None:
        self.kill()


_ENCODED: dict[int, tuple[dict, bytes]] = {}  # requests already encoded, by identity (each kept alive here)
ENCODED_LIMIT = 8192


def encoded(request: dict) -> bytes:
    """A case's ``request`` as JSON. The requests of cases are made once a process and never
    changed after (``grader.judging.plan``, ``grader.grade.train_request``), and a batch worker
    sends the same ones for every submission: each is encoded once. (Requests made once, such
    as a submission's load, are encoded where they are sent, and not kept.)"""
    entry = _ENCODED.get(id(request))
    if entry is None or entry[0] is not request:
        if len(_ENCODED) >= ENCODED_LIMIT:
            _ENCODED.clear()
        entry = _ENCODED[id(request)] = (request, json.dumps(request).encode())
    return entry[1]


# The harness writes every reply as ``{"id": N, ...}``. Replies that say the same thing
# (every correct submission's, for the same case) differ only in that number: the rest is
# parsed once a process, and every such reply is the same object (see ``read_reply``).
REPLY_ID = re.compile(rb'\{"id": (\d{1,18}), ')
_REPLIES: dict[bytes, dict | None] = {}
REPLIES_LIMIT = 16384


def read_reply(line: bytes) -> tuple[object, dict | None]:
    """A reply line's id, and the rest of it as a dict (``None`` if it is not a readable one).

    Replies with the same content but their id are the same dict, parsed once: its
    readers never change it. A line not in the harness's own layout is parsed whole,
    and its id read from it, as from any other."""
    found = REPLY_ID.match(line)
    if found is None:
        reply = parse_reply(line)
        return (reply.get("id"), reply) if isinstance(reply, dict) else (None, None)
    body = b"{" + line[found.end():]
    if body not in _REPLIES:
        if len(_REPLIES) >= REPLIES_LIMIT:
            _REPLIES.clear()
        reply = parse_reply(body)
        _REPLIES[body] = reply if isinstance(reply, dict) else None
    reply = _REPLIES[body]
    if reply is None:
        return None, None
    return reply.get("id", int(found.group(1))), reply  # as JSON reads a repeated key: the last one


def parse_reply(line: bytes) -> object:
    """A reply line as JSON, or ``None`` when it is not JSON or nests too deeply to parse safely."""
    if too_deep(line, MAX_REPLY_DEPTH):
        return None
    try:
        return json.loads(line)
    except (ValueError, RecursionError):
        return None


def captured_output(streams: list[Streams]) -> str:
    """What the submission printed in all its children, capped, for the report."""
    parts = [s.read(stream) for stream in ("stdout", "stderr") for s in streams]
    return b"".join(parts)[:OUTPUT_CAP_BYTES].decode("utf-8", "replace")
