"""How a submission's process is confined, as far as this machine allows.

Layers, from always there to best effort:

1. resource limits (memory, CPU time, file size, open files, no core dumps),
   set in the child before it starts, and the working directory's size and
   file count, watched by the grading process (``workdir_excess``); plus,
   inside the child, an audit hook (see ``grader.child.inside.guard``) that
   refuses process creation, signals to other processes, sockets, ``ctypes``,
   forbidden imports, writes outside the working directory and paths relative
   to a directory descriptor;
2. on Linux, whatever the namespaces: no privileges (real root becomes
   ``nobody``, the root of a user namespace keeps no capability),
   ``PR_SET_NO_NEW_PRIVS``, Landlock where the kernel has it (reading only the
   Python a submission needs, writing only its working directory) and a
   seccomp filter (see ``grader.child.inside.confinement``);
3. Linux namespaces, made by the launcher for each child (as root, or as a
   user where user namespaces are allowed; see ``grader.child.launcher``):
   a private PID namespace, so every process the
   submission starts dies with it; no network; private IPC and host name;
   and a private mount namespace with a minimal root, in which only the
   operating system and the Python installation exist (read-only), and the
   working directory is a sized tmpfs.

Which layers held is detected at run time and reported in the JSON report
(``sandbox``); the score is called tamper-proof when the kernel closed the
file system, other processes and the network (``grader.child.layers``).
``MICROGRADE_SANDBOX=none`` turns namespaces off (what a machine without them
gets), ``MICROGRADE_LANDLOCK=0`` Landlock (what a kernel without it gets; for
the benchmark and the tests).
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import resource
import signal
import stat
import struct
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from grader.child import layers
from grader.child.inside.policy import FORBIDDEN_MODULES, GRADER_PACKAGES

MEMORY_BYTES = 1024 * 1024 * 1024
FILE_BYTES = 16 * 1024 * 1024
OPEN_FILES = 256
# The working directory's bounds: its tmpfs with namespaces; without, the grading process watches it
# (``workdir_excess``) and ends a child that goes past them.
WORK_BYTES = 256 * 1024 * 1024
WORK_FILES = 4096
SHM_BYTES = 16 * 1024 * 1024
PR_SET_PDEATHSIG = 1
CAPABILITY_VERSION_3 = 0x20080522
# What the minimal root shows besides the interpreter's own prefixes: the operating system, read-only.
SYSTEM_PATHS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
                "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime")
# What Landlock lets a child read besides Python's own files: the shared libraries (Python's directories in them
# aside), the dynamic linker's cache, the time zone, and the interpreter.
LIBRARIES = ("/usr/lib", "/usr/lib32", "/usr/lib64", "/usr/libx32", "/lib", "/lib32", "/lib64", "/libx32")
LIBRARY_FILES = ("/etc/ld.so.cache", "/etc/localtime")
NOT_TAMPER_PROOF = ("this score is not tamper-proof: {why}; the submission could have reached the grader's "
                    "files or processes (see the README, 'How the grader keeps itself safe')")


@dataclass(frozen=True)
class Sandbox:
    mode: str  # "namespaces" or "limits"
    detail: str = ""

    @property
    def isolated(self) -> bool:
        return self.mode == "namespaces"

    def plan(self, workdir: Path, layer: int | None = None) -> dict:
        """What the child is to do to itself before any submission code runs (see ``confinement``);
        ``layer`` is the descriptor the child finds the shared Landlock layer at (``shared_layer``)."""
        hidden = hidden_paths()
        rules = landlock_rules()
        return {
            "isolated": self.isolated, "workdir": str(workdir), "work_bytes": WORK_BYTES,
            "work_files": WORK_FILES, "shm_bytes": SHM_BYTES, "hidden": hidden,
            "hidden_names": list(GRADER_PACKAGES), **root_contents(),
            "landlock": None if rules is None else {**rules, "layer": layer},
        }

    def shared_layer(self, workdir: Path) -> dict | None:
        """What the fork server makes the Landlock layer shared by every child from (see
        ``grader/child/inside/allowlist.py``): the rules, the grader's packages and the directory that
        holds the working directories (``workdir``'s, resolved). With namespaces (``isolated``) the
        layer holds the long list alone, and each child adds its own ``/proc`` entry and working
        directory, file systems of its own, to it (``allowlist``). ``None`` where Landlock is turned off."""
        rules = landlock_rules()
        if rules is None or not sys.platform.startswith("linux"):
            return None
        return {"rules": rules, "hidden": hidden_paths(), "holder": str(workdir.resolve().parent),
                "isolated": self.isolated}

    def to_json(self, held: dict | None = None) -> dict:
        """The ``sandbox`` section of the report, from what the child said held (``held``): see
        ``grader.child.layers``, which holds the tamper-proof rule."""
        return layers.section(held, self.mode, self.detail, self.isolated, {
            "memory_mb": MEMORY_BYTES >> 20, "file_mb": FILE_BYTES >> 20, "open_files": OPEN_FILES,
            "workdir_mb": WORK_BYTES >> 20, "workdir_files": WORK_FILES})


def not_tamper_proof(section: dict) -> str | None:
    """The report's warning when a layer did not hold (``section`` from ``to_json``), else None."""
    if section["tamper_proof"]:
        return None
    closed = section["filesystem"].startswith(("minimal root", "Landlock"))
    if section["mode"] != "namespaces" and not closed:
        why = f"no isolation from the grader ({section['detail']}; Landlock {section['landlock']})"
    elif not closed:
        why = f"the filesystem was {section['filesystem']}"
    else:
        why = "the child kept privileges or ran without its system-call filter"
    return NOT_TAMPER_PROOF.format(why=why)


def environment(home: str) -> dict[str, str]:
    """The whole environment a child gets: nothing of the grader's, a fresh home for files."""
    return {
        "PATH": os.defpath,
        "HOME": home,
        "TMPDIR": home,
        "LANG": "C.UTF-8",
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONIOENCODING": "utf-8",
    }


@functools.cache
def _libc():
    """The C library (Linux), loaded in the grading process (loading it between fork and exec would
    import ``ctypes`` anew in every child); ``None`` elsewhere."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        return ctypes.CDLL(None)
    except OSError:
        return None


@functools.cache
def _prctl():
    """libc's ``prctl`` (Linux), looked up in the grading process (``_libc``)."""
    return getattr(_libc(), "prctl", None)


def limits(cpu_seconds: int) -> list[tuple[int, int, int]]:
    """A child's resource limits as ``(which, soft, hard)``: memory, CPU time (soft, so the child
    gets ``SIGXCPU`` first), file size, open files, no core dumps; never above a hard limit
    this process already has."""
    chosen = []
    for which, value in ((resource.RLIMIT_AS, MEMORY_BYTES), (resource.RLIMIT_CPU, cpu_seconds),
                         (resource.RLIMIT_FSIZE, FILE_BYTES), (resource.RLIMIT_NOFILE, OPEN_FILES),
                         (resource.RLIMIT_CORE, 0)):
        hard = resource.getrlimit(which)[1]
        capped = value if hard == resource.RLIM_INFINITY else min(value, hard)
        chosen.append((which, capped, hard if which == resource.RLIMIT_CPU else capped))
    return chosen


def limiter(cpu_seconds: int) -> Callable[[], None]:
    """What sets ``limits(cpu_seconds)`` and death with the grading process (Linux) between fork
    and exec (``preexec_fn``) of a process that is not a child (``grader.staff.execute``);
    everything it needs is found here, before the fork."""
    prctl = _prctl()
    chosen = limits(cpu_seconds)

    def limit() -> None:
        if prctl is not None:
            prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        for which, soft, hard in chosen:
            try:
                resource.setrlimit(which, (soft, hard))
            except (ValueError, OSError):
                pass
    return limit


def landlock_rules() -> dict | None:
    """What the child gives Landlock to read beyond Python's own files (see ``confinement.readable``) and
    which names of ``sys.path`` it leaves out; ``None`` where ``MICROGRADE_LANDLOCK=0`` turns Landlock
    off (for the benchmark and the tests of a kernel without it)."""
    if os.environ.get("MICROGRADE_LANDLOCK", "1") == "0":
        return None
    return {"libraries": list(LIBRARIES), "read": [*LIBRARY_FILES, os.path.realpath(sys.executable)],
            "leave_out": sorted(FORBIDDEN_MODULES)}


@functools.cache
def hidden_paths() -> list[str]:
    """The grader's own package directories, as found and as resolved: the child covers them if it sees them."""
    import grader
    import reference

    found = set()
    for module in (grader, reference):
        package = Path(module.__file__).absolute().parent
        found.update((str(package), str(package.resolve())))
    return sorted(found)


@functools.cache
def root_contents() -> dict:
    """What the minimal root binds read-only (``binds``) and which top-level links it recreates (``links``).

    Only the operating system's directories and the running interpreter's
    prefixes: nothing else on the machine is in the child's view.
    """
    links, binds = [], []
    for path in (*SYSTEM_PATHS, sys.base_prefix, sys.prefix):
        if Path(path).is_symlink() and Path(path).parent == Path("/"):
            links.append((path, os.readlink(path)))
        elif os.path.exists(path) and not any(path == b or path.startswith(b.rstrip("/") + "/") for b in binds):
            binds.append(path)
    return {"links": links, "binds": binds}


_HOLDER: list[str] = []  # this process's folder of working directories, once made (``working_directories``)
_MAKING = threading.Lock()


def working_directories() -> str:
    """The folder of this process's working directories, and of nothing else: made once, in the temporary
    directory, searchable but not listable by others (``0711``: a child finds its own working directory
    by its name, never a sibling's), removed when the process exits.

    Without namespaces Landlock lets a child use this folder only for its own working directory
    (``grader/child/inside/allowlist.py``): were the working directories made in ``/tmp`` itself, the
    fork server's layer would have to allow all of ``/tmp``, and so whatever else lies there (a
    checkout, a virtualenv, a course's files) to every child whose Python lies there too."""
    with _MAKING:
        if not _HOLDER or not os.path.isdir(_HOLDER[0]):
            path = tempfile.mkdtemp(prefix="micrograde-")
            os.chmod(path, 0o711)
            _HOLDER[:] = [path]
            atexit.register(remove_tree, path)
        return _HOLDER[0]


def new_job_folder(prefix: str = "micrograde-") -> str:
    """A new, empty working directory for one child (``working_directories``): no two children share one."""
    return tempfile.mkdtemp(prefix=prefix, dir=working_directories())


def remove_tree(path: str | Path) -> None:
    """Delete the folder ``path`` and everything in it, never following a link, however deep it goes; what
    cannot be deleted is left. A child may nest its working directory's folders thousands deep (each
    wrapped in a new one, no path is ever long): a recursive delete (``shutil.rmtree`` before Python 3.13)
    runs out of stack there, and the grade that made the tree would end with it. This holds one folder open
    at a time, and the names of the way down from ``path``."""
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(path, flags)
    except OSError:
        return
    way: list[str] = []  # the folders' names from ``path`` down to the one open
    kept = set()  # folders that could not be emptied, left with what they hold
    try:
        while True:
            below = None
            try:
                with os.scandir(fd) as listing:
                    for entry in listing:
                        try:
                            if not entry.is_dir(follow_symlinks=False):
                                os.unlink(entry.name, dir_fd=fd)
                            elif entry.inode() not in kept:
                                below = entry
                                break
                        except OSError:
                            pass
            except OSError:
                pass  # not listed: then not emptied, and kept
            if below is not None:
                try:
                    inner = os.open(below.name, flags, dir_fd=fd)
                except OSError:
                    kept.add(below.inode())
                    continue
                os.close(fd)
                fd = inner
                way.append(below.name)
                continue
            if not way:
                break
            outer = os.open("..", flags, dir_fd=fd)
            emptied = os.fstat(fd).st_ino
            os.close(fd)
            fd = outer
            try:
                os.rmdir(way.pop(), dir_fd=fd)
            except OSError:
                kept.add(emptied)
    except OSError:
        pass
    finally:
        os.close(fd)
    try:
        os.rmdir(path)
    except OSError:
        pass


def workdir_excess(workdir: Path, holder: int | None = None, streams: tuple[int, ...] = ()) -> str | None:
    """Why the working directory holds more than a child may leave there (``WORK_BYTES`` on disk,
    ``WORK_FILES`` files and folders, as the namespaces' tmpfs allows), or ``None``. With ``holder``
    (the child's pid), the files it made there and keeps open or mapped after unlinking them count too
    (``unlinked``): a walk does not see them, and their disk is not given back while the child lives.
    ``streams`` are the descriptors of the grader's files the child writes its output to, which do not.

    The child owns the tree and may change it while it is measured, so the walk
    never follows a link (each folder is opened ``O_NOFOLLOW`` beneath the one
    that named it), reads no file, counts a file linked twice once, and stops as
    soon as the tree is over either bound. A folder the grader cannot open was
    hidden from it on purpose (no solution changes a folder's permissions), and
    counts as over.
    """
    used, entries, seen = 0, 0, set()
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        pending = [os.open(workdir, flags)]
    except FileNotFoundError:
        return None
    if holder is not None:
        own = {(status.st_dev, status.st_ino) for status in map(os.fstat, streams)}
        for key, size in unlinked(holder, os.fstat(pending[0]).st_dev, os.path.realpath(workdir)):
            if key not in own and key not in seen:
                seen.add(key)
                entries, used = entries + 1, used + size
    try:
        while pending:
            folder = pending.pop()
            try:
                with os.scandir(folder) as listing:
                    for entry in listing:
                        entries += 1
                        status = entry.stat(follow_symlinks=False)
                        if (status.st_dev, status.st_ino) not in seen:
                            seen.add((status.st_dev, status.st_ino))
                            used += status.st_blocks * 512
                        if entries > WORK_FILES or used > WORK_BYTES:
                            return (f"it left more than {WORK_BYTES >> 20} MiB or {WORK_FILES} files in its "
                                    "working directory")
                        if entry.is_dir(follow_symlinks=False):
                            try:
                                pending.append(os.open(entry.name, flags, dir_fd=folder))
                            except PermissionError:
                                return "it made part of its working directory unreadable to the grader"
                            except OSError:
                                pass  # gone, or replaced by something that is not a folder, meanwhile
            except FileNotFoundError:
                pass
            finally:
                os.close(folder)
    finally:
        for folder in pending:
            os.close(folder)
    return None


def unlinked(pid: int, device: int, workdir: str) -> list[tuple[tuple[int, int], int]]:
    """The files process ``pid`` holds on ``device`` (the working directory's) that no folder links any
    more, each as its ``(st_dev, st_ino)`` and the bytes of disk it holds: those it keeps open, and those it
    mapped from its working directory and closed, counted as the most a child's file can hold
    (``FILE_BYTES``: their size cannot be read without ``CAP_SYS_ADMIN``). What cannot be read (the
    child gone, a descriptor closed meanwhile) holds nothing. A child of another uid's descriptors can
    be read only by its uid or with ``CAP_SYS_PTRACE``, which root has not in a Docker container by
    default: there they are read as the child's uid (``seen_as``)."""
    try:
        return list(held(pid, device, workdir))
    except PermissionError:
        try:
            with seen_as(pid):
                return list(held(pid, device, workdir))
        except OSError:
            return []


@contextlib.contextmanager
def seen_as(pid: int) -> Iterator[None]:
    """This thread's file-system uid and gid, while inside, those of process ``pid`` (its ``/proc`` entry's
    owner): enough to read the entry of a child that dropped root's privileges for its own uid and is
    dumpable (``confinement.carry_out``). Needs ``CAP_SETUID`` and ``CAP_SETGID``; ``PermissionError``
    where the change did not hold."""
    owner = os.stat(f"/proc/{pid}")
    libc = _libc()
    if libc is None or os.geteuid() != 0 or owner.st_uid == 0:
        raise PermissionError(f"the entry of process {pid} cannot be read")
    import ctypes

    gid = os.getegid()
    header = ctypes.create_string_buffer(struct.pack("Ii", CAPABILITY_VERSION_3, 0), 8)
    capabilities = ctypes.create_string_buffer(24)
    if libc.capget(header, capabilities) != 0:
        raise PermissionError(f"the entry of process {pid} cannot be read")
    libc.setfsgid(owner.st_gid)
    libc.setfsuid(owner.st_uid)
    try:
        if libc.setfsuid(-1) != owner.st_uid:  # (-1 changes nothing and says what it is)
            raise PermissionError(f"cannot read the entry of process {pid} as its uid")
        # The change cleared this thread's effective file-system capabilities; a child that kept one
        # (CAP_DAC_READ_SEARCH) may be read only by a thread that has it: raised again, from the permitted set.
        libc.capset(header, capabilities)
        yield
    finally:
        libc.setfsuid(0)
        libc.setfsgid(gid)


def held(pid: int, device: int, workdir: str) -> Iterator[tuple[tuple[int, int], int]]:
    """``unlinked``'s files, as this thread may read them; ``PermissionError`` where it may not."""
    opened = set()
    try:
        names = os.listdir(f"/proc/{pid}/fd")
    except PermissionError:
        raise
    except OSError:
        names = []
    for name in names:
        try:
            status = os.stat(f"/proc/{pid}/fd/{name}")
        except PermissionError:
            raise
        except OSError:
            continue
        if status.st_nlink == 0 and status.st_dev == device and stat.S_ISREG(status.st_mode):
            opened.add(status.st_ino)
            yield (status.st_dev, status.st_ino), status.st_blocks * 512
    try:
        with open(f"/proc/{pid}/maps", "rb") as maps:
            text = maps.read()
    except PermissionError:
        raise
    except OSError:
        return
    if b" (deleted)\n" not in text:
        return
    for line in text.splitlines():
        fields = line.split(None, 5)
        if len(fields) == 6 and fields[5].endswith(b" (deleted)") and fields[5].startswith(
                os.fsencode(workdir.rstrip("/") + "/")) and int(fields[4]) not in opened:
            opened.add(int(fields[4]))
            yield (-1, int(fields[4])), FILE_BYTES
