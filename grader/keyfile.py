"""Secrets the grading process keeps to itself, to authenticate what it wrote for its own later use.

A file the grader wrote and reads back later (a kept opening, a batch's report)
may have been rewritten meanwhile by anyone who can write where it lies. A hash
proves nothing (anyone can compute one); an HMAC under a secret only the grader
can read does. Each secret is 32 random bytes (``secrets.token_bytes``) in a
file of mode 0600 in micrograde's private cache directory (see
``grader.search.replay``), created atomically, never passed to a child: as root
the child runs as ``nobody``, who cannot read it; with namespaces the cache
directory does not exist in the child's file system; without either, the
Landlock layer denies the child the home and cache directories.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import stat
import tempfile
from pathlib import Path

SECRET_BYTES = 32


def _read(path: Path) -> bytes | None:
    """The secret in ``path`` if it is one: a regular file of ours, 0600 or stricter, of the right size."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fh.fileno())
        if (not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o077
                or info.st_size != SECRET_BYTES):
            return None
        secret = fh.read(SECRET_BYTES + 1)
    return secret if len(secret) == SECRET_BYTES else None


def secret(directory: Path, name: str) -> bytes | None:
    """The secret ``name`` in ``directory`` (one of ours, that no one else may write to), made on first
    use; one that is not certainly ours and private is replaced (whatever it authenticated is then
    not trusted). ``None`` when there is none to be had."""
    path = directory / name
    for _ in range(2):
        found = _read(path)
        if found is not None:
            return found
        try:
            if os.path.lexists(path):
                os.unlink(path)
            fd, tmp = tempfile.mkstemp(dir=directory, prefix=".key-")  # 0600
        except OSError:
            return None
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(secrets.token_bytes(SECRET_BYTES))
            os.link(tmp, path)  # never over another process's secret: whoever links first wins
        except OSError:
            pass
        finally:
            os.unlink(tmp)
    return None


def mac(secret: bytes, payload: bytes) -> str:
    """The HMAC-SHA256 of ``payload`` under ``secret``, in hex."""
    return hmac.new(secret, payload, hashlib.sha256).hexdigest()


def holds(secret: bytes, payload: bytes, claimed: object) -> bool:
    """Whether ``claimed`` is the HMAC of ``payload`` under ``secret`` (compared in constant time)."""
    return isinstance(claimed, str) and hmac.compare_digest(claimed, mac(secret, payload))
