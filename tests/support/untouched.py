"""What a grade must leave as it found it, whatever the submission did: files, ``/tmp``, secrets.

A ``Watch`` is taken before a grade and ``breaches`` lists, after it, every way the grade
reached past the child's working directory: a tree that must stay byte-identical (the
grader's venv and packages, its ``HOME`` and replay cache, a canary folder the test owns)
that changed, an entry left in ``/tmp`` by someone other than root, and the grader's secret
shown anywhere the submission's results go.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import stat
from pathlib import Path

TMP = Path("/tmp")


@functools.cache
def _digest(path: str, identity: tuple) -> str:
    """A file's sha256, computed once for each state of the file (``identity``: inode, size, times)."""
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def snapshot(trees: list[Path], skipped: list[Path] = ()) -> dict[str, tuple]:
    """Every entry of ``trees`` but what is in ``skipped``: its kind, mode, owner, size and times, and the
    sha256 of its bytes (or a link's target). Reading a file changes none of them; writing one changes
    its bytes or times."""
    found = {}
    for tree in trees:
        for directory, dirs, files in os.walk(tree):
            dirs[:] = [d for d in dirs if Path(directory, d) not in skipped]
            for name in dirs + files:
                path = os.path.join(directory, name)
                info = os.lstat(path)
                identity = (info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
                content = (os.readlink(path) if stat.S_ISLNK(info.st_mode)
                           else _digest(path, identity) if stat.S_ISREG(info.st_mode) else "")
                found[path] = (stat.S_IFMT(info.st_mode), stat.S_IMODE(info.st_mode), info.st_uid, *identity[1:],
                               content)
    return found


def changed(before: dict[str, tuple], after: dict[str, tuple]) -> list[str]:
    """What differs between two snapshots, one line each."""
    return ([f"new {p}" for p in sorted(after.keys() - before.keys())]
            + [f"gone {p}" for p in sorted(before.keys() - after.keys())]
            + [f"changed {p}" for p in sorted(before.keys() & after.keys()) if before[p] != after[p]])


# A grading process's working directory (``tempfile``'s names), handed to ``nobody`` while it grades: any
# grader running on the machine has some, and removes them.
WORKDIR = re.compile(r"micrograde-[a-z0-9_]{8}")


def tmp_entries() -> dict[str, int]:
    """``/tmp``'s entries and their owners, but for graders' working directories (other tests and
    graders come and go there: only entries of users other than root count)."""
    found = {}
    for entry in TMP.iterdir():
        try:
            info = entry.lstat()
        except OSError:
            continue
        if not (WORKDIR.fullmatch(entry.name) and stat.S_ISDIR(info.st_mode)):
            found[entry.name] = info.st_uid
    return found


class Watch:
    """The state of ``trees`` and ``/tmp`` before a grade; ``breaches`` compares, after it."""

    def __init__(self, trees: list[Path], secret: str, skipped: list[Path] = ()) -> None:
        self.trees, self.secret, self.skipped = trees, secret, skipped
        self.before = snapshot(trees, skipped)
        self.tmp = tmp_entries()

    def breaches(self, *outputs: str) -> list[str]:
        """Every change to the trees, every new non-root entry in ``/tmp``, and the secret in any of
        ``outputs`` (the command's output, the report, files it wrote)."""
        found = changed(self.before, snapshot(self.trees, self.skipped))
        found += [f"new in /tmp: {name} (uid {uid})" for name, uid in tmp_entries().items()
                  if name not in self.tmp and uid != 0]
        found += [f"the secret shown in output {i}" for i, text in enumerate(outputs) if self.secret in text]
        return found

    def repair(self) -> None:
        """Remove what a breach left in the trees (new files), so that later grades start clean."""
        after = snapshot(self.trees, self.skipped)
        for path in sorted(after.keys() - self.before.keys(), reverse=True):
            if os.path.isdir(path) and not os.path.islink(path):
                os.rmdir(path)
            else:
                os.unlink(path)
