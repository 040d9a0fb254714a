"""The grading process's side of the launcher (``grader/child/inside/forkserver.py``): one per process.

The launcher is started on first use and lives as long as the grading process
(it ends when its socket closes, and is killed if the grading process dies).
Requests go in order and are answered in order; ``send`` returns a ticket and
``reply`` waits for that ticket's answer, so that a child can be asked for
before the launcher is even up, and its reply read only when it matters.
Both may be called from two threads at once (``grader.child.ahead`` starts
children in one while the command goes on in another): a ticket is taken in
the order its request went out, and one thread at a time reads replies.
"""

from __future__ import annotations

import functools
import marshal
import os
import select
import socket
import subprocess
import sys
import threading
from collections import deque

from grader.child import sandbox
from grader.child.shipping import BOOTSTRAP, FORK_SERVER_MODULES, blob, child_mark, code_file, shipment
from grader.errors import MachineError

MESSAGE_BYTES = 1 << 16
REPLY_SECONDS = 30.0  # a launcher that takes longer to fork is broken, not slow


class Launcher:
    """A running launcher and the replies it still owes."""

    def __init__(self) -> None:
        # Messages keep their bounds either way; macOS has no SOCK_SEQPACKET for Unix sockets.
        kind = socket.SOCK_SEQPACKET if sys.platform.startswith("linux") else socket.SOCK_DGRAM
        ours, theirs = socket.socketpair(socket.AF_UNIX, kind)
        code = code_file(blob(shipment(FORK_SERVER_MODULES)))
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-s", "-P", "-c", BOOTSTRAP, child_mark(), str(code),
                 str(theirs.fileno()), str(os.getpid())],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, cwd="/", env=sandbox.environment("/"),
                pass_fds=(code, theirs.fileno()), start_new_session=True)
        finally:
            os.close(code)
            theirs.close()
        self.channel = ours
        self.owed: deque[int] = deque()  # tickets sent, in order, whose replies are unread
        self.replies: dict[int, tuple[dict, list[int]]] = {}
        self.tickets = 0
        self.probe: int | None = None  # the ticket of the namespace probe sent ahead (``probe_ahead``), until read
        self.probed = False  # a probe was sent (``probe_ahead``, ``probe_ticket``)
        self.sending = threading.RLock()  # a request and its ticket go out together
        self.reading = threading.Lock()  # one reader at a time, so a reply meets the ticket it answers

    def send(self, request: dict, fds: tuple[int, ...] = ()) -> int:
        with self.sending:
            try:
                socket.send_fds(self.channel, [marshal.dumps(request)], list(fds))
            except OSError as exc:
                raise MachineError(f"the launcher is gone ({exc})") from None
            self.tickets += 1
            self.owed.append(self.tickets)
            return self.tickets

    def reply(self, ticket: int) -> tuple[dict, list[int]]:
        """The reply to ``ticket`` and the descriptors that came with it (the caller's to close)."""
        with self.reading:
            while ticket not in self.replies:
                if not select.select([self.channel], [], [], REPLY_SECONDS)[0]:
                    raise MachineError("the launcher stopped answering")
                message, fds, _, _ = socket.recv_fds(self.channel, MESSAGE_BYTES, 4)
                if not message:
                    raise MachineError("the launcher is gone")
                self.replies[self.owed.popleft()] = marshal.loads(message), fds
            return self.replies.pop(ticket)

    def probe_ahead(self) -> None:
        """Send the namespace probe now, its answer read when it matters (``probe_ticket``); once a
        launcher: the answer holds for its life."""
        with self.sending:
            if not self.probed:
                self.probed = True
                self.probe = self.send({"kind": "probe"})

    def probe_ticket(self) -> int:
        """The ticket of the namespace probe sent ahead, taken once (a ticket is read once); else of one
        sent now."""
        with self.sending:
            ticket, self.probe = self.probe or self.send({"kind": "probe"}), None
            self.probed = True
            return ticket


_running: Launcher | None = None
_starting = threading.Lock()  # one launcher per process, whichever thread asks first


def running() -> Launcher:
    """This process's launcher, started (again, if the last one died) on first use."""
    global _running
    with _starting:
        if _running is None or _running.process.poll() is not None:
            _running = Launcher()
        return _running


class Child:
    """A child asked of the launcher: its pid (once the launcher has answered) and its end."""

    def __init__(self, program: str, argv: list[str], fds: tuple[int, ...], *, cwd: str, env: dict[str, str],
                 limits: list[tuple[int, int, int]], isolated: bool, layer: dict | None = None,
                 runs_child: bool = False) -> None:
        """Ask for ``python -c program`` with ``sys.argv == argv``; ``fds`` are its standard output and
        error, then what it gets as 3, 4, ..., and after them the Landlock layer shared by the children
        that ``layer`` describes, where it can be made; ``runs_child``: the program is the child's
        (``shipping.BOOTSTRAP``), handed the child's modules the launcher has run (see
        ``grader/child/inside/forkserver.py``)."""
        self.launcher = running()
        self.ticket = self.launcher.send({
            "kind": "spawn", "program": program, "argv": argv, "cwd": cwd, "env": env, "isolated": isolated,
            "limits": limits, "layer": layer, "child": runs_child}, fds)
        self.pid: int | None = None
        self.pidfd: int | None = None
        self.ended = False

    def started(self) -> int:
        """The child's pid; ``MachineError`` if it could not be started."""
        if self.pid is None:
            reply, fds = self.launcher.reply(self.ticket)
            self.pidfd = fds[0] if fds else None
            if "error" in reply:
                self.ended = True
                raise MachineError(f"the submission's process could not be started: {reply['error']}")
            self.pid = reply["pid"]
        return self.pid

    @property
    def alive(self) -> bool:
        if self.ended:
            return False
        self.started()
        return self.pidfd is None or not select.select([self.pidfd], [], [], 0)[0]

    def end(self) -> None:
        """Kill the child and everything it started, and wait until it is gone."""
        if self.ended:
            return
        try:
            pid = self.started()
            self.launcher.reply(self.launcher.send({"kind": "end", "pid": pid}))
        except MachineError:
            pass  # no launcher, no child: it was killed with the launcher, or never started
        finally:
            self.ended = True
            if self.pidfd is not None:
                os.close(self.pidfd)


def probing() -> bool:
    """Whether this process asks its launcher for namespaces at all."""
    return os.environ.get("MICROGRADE_SANDBOX", "auto") != "none" and sys.platform.startswith("linux")


def warm_up() -> None:
    """Start the launcher now and have it probe for namespaces, without waiting for either.

    Starting Python and the launcher's imports take about as long as the grading process's
    own imports; a command that will grade calls this first, so that the two happen at once
    on two cores, and the launcher is ready when the first child is asked for."""
    process = running()
    if probing():
        process.probe_ahead()


@functools.cache
def detect() -> sandbox.Sandbox:
    """The strongest sandbox this machine offers (asked of the launcher once per process)."""
    if os.environ.get("MICROGRADE_SANDBOX", "auto") == "none":
        return sandbox.Sandbox("limits", "namespaces turned off by MICROGRADE_SANDBOX=none")
    if not sys.platform.startswith("linux"):
        return sandbox.Sandbox("limits", f"no namespaces on {sys.platform}")
    process = running()
    refused = process.reply(process.probe_ticket())[0].get("error")
    if refused is not None:
        return sandbox.Sandbox("limits", f"namespaces are not permitted here ({refused}; user namespaces restricted?)")
    return sandbox.Sandbox("namespaces", "pid, mount, network, IPC and UTS namespaces")
