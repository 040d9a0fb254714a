"""How a submission's process is confined, as far as this machine allows.

Layers, from always there to best effort:

1. resource limits (memory, CPU time, file size, open files, no core dumps),
   set in the child before it starts, and the working directory's size and
   file count, watched by the grading process (``grader.child.workdirs``); plus,
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

import functools
import os
import resource
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from grader.child import layers
from grader.child.inside.policy import FORBIDDEN_MODULES, GRADER_PACKAGES

MEMORY_BYTES = 1024 * 1024 * 1024
FILE_BYTES = 16 * 1024 * 1024
OPEN_FILES = 256
# The working directory's bounds: its tmpfs with namespaces; without, the grading process watches it
# (``grader.child.workdirs``) and ends a child that goes past them.
WORK_BYTES = 256 * 1024 * 1024
WORK_FILES = 4096
SHM_BYTES = 16 * 1024 * 1024
PR_SET_PDEATHSIG = 1
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
def libc():
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
    """libc's ``prctl`` (Linux), looked up in the grading process (``libc``)."""
    return getattr(libc(), "prctl", None)


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
    import reference

    found = set()
    for package in (Path(__file__).absolute().parents[1], Path(reference.__file__).absolute().parent):
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

