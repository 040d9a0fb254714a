"""How a submission's process is confined, as far as this machine allows.

Layers, from always there to best effort:

1. resource limits (memory, CPU time, file size, open files, no core dumps),
   set in the child before it starts; plus, inside the child, an audit hook
   (see ``grader.child.harness``) that refuses process creation, signals to other
   processes, sockets, ``ctypes``, forbidden imports and writes outside the
   working directory;
2. Linux namespaces through ``unshare`` (as root, or as a user where user
   namespaces are allowed): a private PID namespace, so every process the
   submission starts dies with it; no network; and a private mount
   namespace in which the grader's own files are hidden under empty tmpfs
   mounts and the rest of the filesystem is read-only except the working
   directory.

Which layers are active is detected at run time and reported in the JSON
report (``sandbox``); none of the second layer is required.
``MICROGRADE_SANDBOX=none`` turns it off.
"""

from __future__ import annotations

import functools
import os
import resource
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

MEMORY_BYTES = 1024 * 1024 * 1024
FILE_BYTES = 16 * 1024 * 1024
OPEN_FILES = 256


@dataclass(frozen=True)
class Sandbox:
    mode: str  # "namespaces" or "limits"
    unshare: tuple[str, ...] = ()
    detail: str = ""

    @property
    def isolated(self) -> bool:
        return self.mode == "namespaces"

    def wrap(self, argv: list[str]) -> list[str]:
        """The command that runs ``argv`` inside this sandbox."""
        return [*self.unshare, "--", *argv] if self.isolated else argv

    def to_json(self, applied: dict | None = None) -> dict:
        applied = applied or {}
        return {
            "mode": self.mode,
            "limits": {"memory_mb": MEMORY_BYTES // (1024 * 1024), "file_mb": FILE_BYTES // (1024 * 1024),
                       "open_files": OPEN_FILES},
            "audit_hook": True,
            "processes_contained": self.isolated,
            "network": "none" if self.isolated else "blocked in Python only",
            "filesystem": applied.get("filesystem", "grader files hidden, read-only" if self.isolated
                                      else "blocked in Python only"),
            "detail": self.detail,
        }


def environment(home: str) -> dict[str, str]:
    """The whole environment a child gets: nothing of the grader's, a fresh home."""
    return {
        "PATH": os.defpath,
        "HOME": home,
        "LANG": "C.UTF-8",
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONIOENCODING": "utf-8",
    }


def die_with_parent() -> None:
    """Have the kernel kill the child if the grading process dies first (Linux)."""
    if sys.platform.startswith("linux"):
        import ctypes

        PR_SET_PDEATHSIG = 1
        try:
            ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        except (OSError, AttributeError):
            pass


def limits(cpu_seconds: int) -> None:
    """Resource limits for the child, and death with its parent; runs between fork and exec."""
    die_with_parent()
    for which, value in (
        (resource.RLIMIT_AS, MEMORY_BYTES),
        (resource.RLIMIT_CPU, cpu_seconds),
        (resource.RLIMIT_FSIZE, FILE_BYTES),
        (resource.RLIMIT_NOFILE, OPEN_FILES),
        (resource.RLIMIT_CORE, 0),
    ):
        try:
            soft, hard = resource.getrlimit(which)
            capped = value if hard == resource.RLIM_INFINITY else min(value, hard)
            resource.setrlimit(which, (capped, capped if which != resource.RLIMIT_CPU else hard))
        except (ValueError, OSError):
            pass


def _probe(command: list[str]) -> bool:
    true = shutil.which("true") or "/bin/true"
    try:
        result = subprocess.run([*command, "--", true], capture_output=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return False
    return result.returncode == 0


@functools.cache
def detect() -> Sandbox:
    """The strongest sandbox this machine offers (probed once per process)."""
    if os.environ.get("MICROGRADE_SANDBOX", "auto") == "none":
        return Sandbox("limits", detail="namespaces turned off by MICROGRADE_SANDBOX=none")
    if not sys.platform.startswith("linux"):
        return Sandbox("limits", detail=f"no namespaces on {sys.platform}")
    unshare = shutil.which("unshare")
    if unshare is None:
        return Sandbox("limits", detail="unshare (util-linux) is not installed")
    base = [unshare, "--fork", "--pid", "--kill-child", "--mount-proc", "--net"]
    if os.geteuid() != 0:
        base.insert(1, "--map-root-user")
    if _probe(base):
        return Sandbox("namespaces", tuple(base), "unshare: pid, mount and network namespaces")
    return Sandbox("limits", detail="unshare is not permitted here (user namespaces restricted?)")


def hidden_paths() -> list[str]:
    """The grader's own files, which the submission must not read: its package directories."""
    import grader
    import reference

    return sorted({str(Path(m.__file__).resolve().parent) for m in (grader, reference)})
