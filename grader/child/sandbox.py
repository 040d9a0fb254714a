"""How a submission's process is confined, as far as this machine allows.

Layers, from always there to best effort:

1. resource limits (memory, CPU time, file size, open files, no core dumps),
   set in the child before it starts; plus, inside the child, an audit hook
   (see ``grader.child.inside.harness``) that refuses process creation, signals to other
   processes, sockets, ``ctypes``, forbidden imports and writes outside the
   working directory;
2. on Linux, whatever the namespaces: no privileges (real root becomes
   ``nobody``, the root of a user namespace keeps no capability),
   ``PR_SET_NO_NEW_PRIVS`` and a seccomp filter (see ``grader.child.inside.confinement``);
3. Linux namespaces, made by the launcher for each child (as root, or as a
   user where user namespaces are allowed; see ``grader.child.launcher``):
   a private PID namespace, so every process the
   submission starts dies with it; no network; private IPC and host name;
   and a private mount namespace with a minimal root, in which only the
   operating system and the Python installation exist (read-only), and the
   working directory is a sized tmpfs.

Which layers held is detected at run time and reported in the JSON report
(``sandbox``); the score is called tamper-proof only when every one did.
``MICROGRADE_SANDBOX=none`` turns namespaces off (what a machine without them gets).
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

from grader.child.inside.policy import GRADER_PACKAGES

MEMORY_BYTES = 1024 * 1024 * 1024
FILE_BYTES = 16 * 1024 * 1024
OPEN_FILES = 256
WORK_BYTES = 256 * 1024 * 1024  # the working directory's tmpfs (namespaces only)
WORK_FILES = 4096
SHM_BYTES = 16 * 1024 * 1024
PR_SET_PDEATHSIG = 1
# What the minimal root shows besides the interpreter's own prefixes: the operating system, read-only.
SYSTEM_PATHS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
                "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime")
NOT_TAMPER_PROOF = ("this score is not tamper-proof: {why}; the submission could have reached the grader's "
                    "files or processes (see the README, 'How the grader keeps itself safe')")


@dataclass(frozen=True)
class Sandbox:
    mode: str  # "namespaces" or "limits"
    detail: str = ""

    @property
    def isolated(self) -> bool:
        return self.mode == "namespaces"

    def plan(self, workdir: Path) -> dict:
        """What the child is to do to itself before any submission code runs (see ``confinement``)."""
        hidden = hidden_paths()
        return {
            "isolated": self.isolated, "workdir": str(workdir), "work_bytes": WORK_BYTES,
            "work_files": WORK_FILES, "shm_bytes": SHM_BYTES, "hidden": hidden,
            "hidden_names": list(GRADER_PACKAGES), **root_contents(),
        }

    def to_json(self, held: dict | None = None) -> dict:
        """The ``sandbox`` section of the report, from what the child said held (``held``)."""
        held = held or {}
        seccomp = held.get("seccomp") is True
        filesystem = held.get("filesystem") == "minimal root"
        return {
            "mode": self.mode,
            "tamper_proof": self.isolated and filesystem and seccomp and held.get("no_new_privs") is True
            and held.get("capabilities_left") is False,
            "limits": {"memory_mb": MEMORY_BYTES >> 20, "file_mb": FILE_BYTES >> 20, "open_files": OPEN_FILES,
                       **({"workdir_mb": WORK_BYTES >> 20, "workdir_files": WORK_FILES} if filesystem else {})},
            "audit_hook": True,
            "processes_contained": self.isolated,
            "network": "none" if self.isolated else "refused by seccomp" if seccomp else "blocked in Python only",
            "filesystem": ("minimal root: the operating system and Python read-only, the working directory "
                           "a sized tmpfs" if filesystem else str(held.get("filesystem", "unknown"))
                           + "; blocked in Python only"),
            "user": str(held.get("user", "unknown")),
            "capabilities": "none" if held.get("capabilities_left") is False else "kept",
            "no_new_privs": held.get("no_new_privs") is True,
            "seccomp": seccomp,
            "detail": self.detail,
        }


def not_tamper_proof(section: dict) -> str | None:
    """The report's warning when a layer did not hold (``section`` from ``to_json``), else None."""
    if section["tamper_proof"]:
        return None
    if section["mode"] != "namespaces":
        why = f"no isolation from the grader ({section['detail']})"
    elif not section["filesystem"].startswith("minimal root"):
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
def _prctl():
    """libc's ``prctl`` (Linux), looked up in the grading process: looking it up between fork and
    exec would import ``ctypes`` anew in every child."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        return ctypes.CDLL(None).prctl
    except (OSError, AttributeError):
        return None


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
