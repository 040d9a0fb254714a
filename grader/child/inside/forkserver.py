"""The process that starts every child of one grading process, by forking a warm interpreter.

Starting Python and importing what the child's modules and the confinement use costs
about 30 ms; a batch worker starts two children per submission. So each
grading process starts this program once (``grader.child.launcher``), and it forks
every child from itself: the interpreter is already up, those modules are
already imported and the child's own modules already run (a child's program,
``grader.child.shipping.BOOTSTRAP``, is handed their entry point and namespaces
instead of running them again). It never runs or reads submission code, and
holds nothing of the grader's: like the child's modules it imports only the
standard library, and its code arrives compiled from the grading process.

A child is started as ``unshare --fork --pid --kill-child`` and ``python -c``
would start it, with every layer the grading process asks for:

- a process of its own session, whose resource limits, working directory and
  streams are set before anything runs, which dies with this process;
- with namespaces, new PID, mount, network, IPC and UTS namespaces (and a user
  namespace mapping the caller to root, when the caller is not root) made by
  that process, which then forks the program as PID 1 of its PID namespace
  and waits for it (it dies with its parent, and its namespace with it);
- the program (the child's, ``grader.child.inside.protocol``, or a test's) run with the environment
  and ``sys.argv`` asked for, its descriptors at 3, 4, ... in the order sent,
  then, where the request asks for one (``layer``), the Landlock layer shared by
  every child (``shared_layer``), and nothing else open.

Requests and replies are ``marshal``led dictionaries on a Unix socket that keeps
message bounds (``SOCK_SEQPACKET``, or ``SOCK_DGRAM`` where there is none), shared
only with the grading process; descriptors travel beside them.
The reply to ``spawn`` comes once the namespaces exist (or with the reason
they could not be made), so a machine that refuses them is never mistaken
for a submission that crashed.
"""

# What the child's modules, the confinement and the training engine import too (marked F401), so that
# no child imports it again.
import _json  # noqa: F401
import _signal
import _socket
import _thread  # noqa: F401
import ctypes
import encodings.ascii  # noqa: F401
import gc
import itertools  # noqa: F401
import marshal
import math  # noqa: F401
import operator  # noqa: F401
import os
import random  # noqa: F401
import resource
import struct  # noqa: F401
import sys
import threading  # noqa: F401
import types  # noqa: F401

from . import allowlist, landlock

PR_SET_PDEATHSIG, PR_SET_NAME, SIGKILL = 1, 15, 9
CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000
NAMESPACES = CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWPID | CLONE_NEWNET
MESSAGE_BYTES = 1 << 20
MAX_DESCRIPTORS = 16
FIRST_PASSED = 3  # the program's descriptors are 3, 4, ... in the order they were sent
LINUX = sys.platform.startswith("linux")
# closerange's end: past any descriptor a process here holds. Linux closes the range in one
# system call; elsewhere each number is closed in turn, so only up to the launcher's own limit.
ALL_DESCRIPTORS = 1 << 20 if LINUX else os.sysconf("SC_OPEN_MAX")
PARENT_CHECK_SECONDS = 1.0  # without Linux's parent-death signal: how often to look for the grader
LIBC = ctypes.CDLL(None, use_errno=True)
PRCTL = getattr(LIBC, "prctl", None) if LINUX else None
SUPERVISED = set()  # children whose program runs under a supervisor (see become_child), by pid
SHARED = {}  # the Landlock layers made for children (see shared_layer), by what they were made of: [fd, children]
# With namespaces every child adds its two rules to the layer (``landlock.restrict_adding``): it is made anew
# after this many, so that what each child's restriction copies stays the long list and a few rules.
LAYER_CHILDREN = 64
CHILD = []  # the child's entry point and its modules' namespaces, run here once (see main)


def die_with_parent(parent=None):
    """Be killed when the parent dies; leave now if it already was ``parent`` and is gone. (PID 1 of
    a new PID namespace sees its parent as 0 and cannot tell: its parent only dies when killed with
    the launcher, and the grading process it serves is gone then, so it meets the end of its input.)"""
    if PRCTL is not None:
        PRCTL(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0)
    if parent is not None and os.getppid() != parent:
        os._exit(1)


def enter_namespaces():
    """Move into new namespaces (this process's children into a new PID namespace)."""
    uid, gid = os.geteuid(), os.getegid()
    flags = NAMESPACES if uid == 0 else NAMESPACES | CLONE_NEWUSER
    if LIBC.unshare(flags) != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"unshare: {os.strerror(error)}")
    if uid != 0:  # be root inside, as the invoking user outside
        for name, text in (("setgroups", "deny"), ("uid_map", f"0 {uid} 1"), ("gid_map", f"0 {gid} 1")):
            with open(f"/proc/self/{name}", "w", encoding="ascii") as handle:
                handle.write(text)


def place(stdout, stderr, fds):
    """Standard input from ``/dev/null``, the streams at 1 and 2, ``fds`` at 3, 4, ...; nothing else open."""
    sources = [stdout, stderr, *fds]
    targets = [1, 2, *range(FIRST_PASSED, FIRST_PASSED + len(fds))]
    top = max(sources + targets) + 1
    moved = [os.dup2(fd, top + i) for i, fd in enumerate(sources)]  # out of the way of every target
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    for fd, target in zip(moved, targets):
        os.dup2(fd, target)
    os.closerange(targets[-1] + 1, ALL_DESCRIPTORS)


def run(request):
    """Become the program: ``python -c program *argv`` with the environment asked for.

    The launcher's own names (``ctypes`` and the C library among them) are cleared
    first: the program can walk its frames up into the launcher's, and must find
    nothing there that the confinement takes away from it.
    """
    os.environ.clear()
    os.environ.update(request["env"])
    sys.argv[:] = request["argv"]
    program = compile(request["program"], "<string>", "exec")
    namespace = {"__name__": "__main__", "__builtins__": __builtins__}
    # The program runs below the launcher's frames: it gets the headroom it would have alone.
    depth, frame = 0, sys._getframe()
    while frame is not None:
        depth, frame = depth + 1, frame.f_back
    sys.setrecursionlimit(sys.getrecursionlimit() + depth)
    del frame
    exit_now, interpreter = os._exit, sys
    if request.get("child"):
        namespace["_entry"] = CHILD[0]
    globals().clear()
    code = 0
    try:
        exec(program, namespace)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
    except BaseException as exc:  # noqa: BLE001 - as python -c reports it
        interpreter.excepthook(type(exc), exc, exc.__traceback__)
        code = 1
    for stream in (interpreter.stdout, interpreter.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001, S110 - a stream the program replaced or closed
            pass
    exit_now(code)


def shared_layer(spec):
    """The descriptor of the Landlock layer that ``spec`` describes (``allowlist``: what the children may
    read, ``/proc`` (each child's own layer narrows it to its own entry) and ``spec["holder"]``, the
    directory of their working directories, read-write), made the first time it is asked for and kept
    for every child after; ``None`` where it cannot be made (the child then makes a single layer
    itself, and says why where it cannot either). With namespaces (``spec["isolated"]``) the layer
    holds the long list alone: each child adds the rules of its own ``/proc`` and working directory,
    file systems of its own, before it restricts itself with it, so it is made anew every
    ``LAYER_CHILDREN`` children."""
    read = allowlist.readable(spec["rules"], spec["hidden"])
    devices = [f"/dev/{name}" for name in allowlist.DEVICES]
    key = marshal.dumps(spec)
    made = SHARED.get(key)
    if made is not None and spec["isolated"] and made[1] >= LAYER_CHILDREN:
        if made[0] is not None:
            os.close(made[0])
        made = None
    if made is None:
        try:
            fd = (landlock.layer(landlock.abi(), read, [], devices) if spec["isolated"] else
                  landlock.layer(landlock.abi(), {**read, "/proc": True}, [spec["holder"]], devices))
        except OSError:
            fd = None
        made = SHARED[key] = [fd, 0]
    made[1] += 1
    return made[0]


def become_child(request, fds, ready, launcher):
    """In the forked process: set everything up, say so on ``ready`` (or why not), run the program."""
    die_with_parent(launcher)
    if PRCTL is not None:
        PRCTL(PR_SET_NAME, b"micrograde-run", 0, 0, 0)  # what ps and top show, beside the launcher
    try:
        os.setsid()
        for which, soft, hard in request["limits"]:
            try:
                resource.setrlimit(which, (soft, hard))
            except (ValueError, OSError):  # as before a fork and exec: a limit not allowed is left
                pass
        os.chdir(request["cwd"])
        if request["isolated"]:
            enter_namespaces()
    except OSError as exc:
        say_why(ready, exc)
        os._exit(1)
    if request["isolated"]:
        program = os.fork()
        if program:  # the supervisor: it holds nothing, ends as the program ends, and ends it on SIGTERM
            _signal.signal(_signal.SIGTERM, lambda *_: os.kill(program, SIGKILL))
            os.write(ready, b"ok")
            os.closerange(0, ALL_DESCRIPTORS)
            _, status = os.waitpid(program, 0)  # so the program is never left for the system to reap
            os._exit(os.waitstatus_to_exitcode(status) & 0xFF)
        die_with_parent()
    else:
        os.write(ready, b"ok")
    os.close(ready)
    place(fds[0], fds[1], fds[2:])
    run(request)


def say_why(ready, exc):
    """Tell the launcher, on ``ready``, why a forked process could not be set up."""
    os.write(ready, str(exc).encode()[:200] or type(exc).__name__.encode())


def forked(channel, child):
    """Fork a process that closes the launcher's channel and runs ``child(ready)``: that writes
    ``ok`` on ``ready`` once the process is set up, or why not (``say_why``) and ends. Returns
    the pid, and ``None`` or why (the process has then been reaped)."""
    ready_r, ready_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(channel.detach())  # detached: the object can never close a reused number later
            os.close(ready_r)
            child(ready_w)
        finally:
            os._exit(127)
    os.close(ready_w)
    said = os.read(ready_r, 256)
    os.close(ready_r)
    if said == b"ok":
        return pid, None
    os.waitpid(pid, 0)
    return pid, said.decode(errors="replace") or "the child ended before it was set up"


def spawn(request, fds, channel):
    """Fork a child for ``request``; the reply holds its pid (and a pidfd) or why it could not start."""
    launcher = os.getpid()
    layer = shared_layer(request["layer"]) if request.get("layer") is not None else None
    given = fds if layer is None else [*fds, layer]
    pid, why = forked(channel, lambda ready: become_child(request, given, ready, launcher))
    for fd in fds:
        os.close(fd)
    if why is not None:
        return {"error": why}, []
    if request["isolated"]:
        SUPERVISED.add(pid)
    try:
        return {"pid": pid}, [os.pidfd_open(pid)]
    except (AttributeError, OSError):
        return {"pid": pid}, []


def end(request):
    """Kill a child and reap it: through its supervisor, which kills the program (PID 1 of its
    namespace, so everything in it) and reaps it; else the child's whole session."""
    pid = request["pid"]
    try:
        if pid in SUPERVISED:
            SUPERVISED.discard(pid)
            os.kill(pid, _signal.SIGTERM)
        else:
            os.killpg(pid, SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass
    return {"ended": pid}, []


def probe(channel):
    """Whether this machine lets a child make its namespaces: ``{"error": ...}`` if not."""
    def child(ready):
        try:
            enter_namespaces()
        except OSError as exc:
            say_why(ready, exc)
            return
        os.write(ready, b"ok")

    pid, why = forked(channel, child)
    if why is None:
        os.waitpid(pid, 0)
        return {}, []
    return {"error": why}, []


def main(shipped, namespaces):
    """Fork a child for each request of the grading process until it is gone. ``shipped`` and
    ``namespaces`` are what started this process (``grader.child.shipping``): the child's modules, run,
    and this one; the child's entry point and namespaces are kept for the children (``run``)."""
    child = namespaces[:-1]
    CHILD.append((child[-1]["main"], child))
    del shipped, namespaces, child
    grader = int(sys.argv[-1])
    die_with_parent(grader)
    if PRCTL is not None:
        PRCTL(PR_SET_NAME, b"micrograde-fork", 0, 0, 0)
    channel = _socket.socket(fileno=int(sys.argv[-2]))
    if PRCTL is None:
        channel.settimeout(PARENT_CHECK_SECONDS)
    space = _socket.CMSG_SPACE(MAX_DESCRIPTORS * 4)
    # Out of the collector's sight from now on: a child's collections then never touch (and so
    # copy) the pages of everything the launcher holds.
    gc.freeze()
    while True:
        try:
            message, ancillary, _, _ = channel.recvmsg(MESSAGE_BYTES, space)
        except TimeoutError:
            if os.getppid() != grader:
                os._exit(0)  # the grading process is gone
            continue
        except OSError:
            os._exit(0)  # the grading process closed its end with a request unread: it is done
        if not message:
            os._exit(0)  # the grading process is done
        fds = [int.from_bytes(data[i:i + 4], sys.byteorder, signed=True)
               for level, kind, data in ancillary if level == _socket.SOL_SOCKET and kind == _socket.SCM_RIGHTS
               for i in range(0, len(data) - len(data) % 4, 4)]
        request = marshal.loads(message)
        if request["kind"] == "spawn":
            reply, sent = spawn(request, fds, channel)
        elif request["kind"] == "end":
            reply, sent = end(request)
        else:
            reply, sent = probe(channel)
        ancillary = [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS,
                      b"".join(fd.to_bytes(4, sys.byteorder, signed=True) for fd in sent))] if sent else []
        try:
            channel.sendmsg([marshal.dumps(reply)], ancillary)
        except OSError:
            os._exit(0)  # the grading process is gone (its children die with this process)
        for fd in sent:
            os.close(fd)

