"""The files of a folder submission: found without following links, within size limits.

A learner's folder is untrusted input to the grading process, so the walk is bounded (entries looked at,
files, bytes) before anything is read, never follows a link out of the folder, and leaves out what a
repository holds beside the work: hidden folders, caches, the course's tests and set-up, and virtual
environments, installed packages and build output (said once, so that a committed ``venv/`` costs nothing).
"""

from __future__ import annotations

import os
from pathlib import Path

from grader.errors import InputError

SKIPPED_DIRS = {"__pycache__", ".ipynb_checkpoints", "tests"}
# What a learner's repository holds beside the work and is never the work: a virtual environment (any folder
# with a ``pyvenv.cfg``), installed packages, build output. Left out of a folder, and said once.
NOT_THE_WORK = {"venv", "env", "site-packages", "dist-packages", "node_modules", "build", "dist"}
MIB = 1024 * 1024
MAX_FILE_BYTES = {".py": 1 * MIB, ".ipynb": 8 * MIB}  # a notebook's without its outputs, which are never graded
MAX_FILES = 200  # .py and .ipynb files read in a directory
MAX_TOTAL_BYTES = 32 * MIB  # all of them together
MAX_ENTRIES = 5000  # directory entries looked at while searching for them


def inside(path: Path, root: Path) -> bool:
    """Whether ``path``, links followed, stays within the directory ``root``."""
    return path.resolve().is_relative_to(root.resolve())


def not_the_work(entry: os.DirEntry) -> bool:
    """Whether a folder is a virtual environment, installed packages or build output (``NOT_THE_WORK``)."""
    return entry.name in NOT_THE_WORK or os.path.isfile(os.path.join(entry.path, "pyvenv.cfg"))


def candidate_files(root: Path, left_out: list[str] | None = None, passed_over: list[Path] | None = None) -> list[Path]:
    """The .py and .ipynb files of a directory submission, found without following links.

    Hidden and skipped directories are not entered, nor those that are not the work (``not_the_work``:
    their paths are added to ``left_out``); a link to a file counts only if it stays inside ``root``; the
    search stops with ``InputError`` past ``MAX_ENTRIES`` entries, ``MAX_FILES`` files or
    ``MAX_TOTAL_BYTES`` bytes.
    """
    found, pending, seen, total = [], [root], 0, 0
    while pending:
        directory = pending.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError as exc:
            raise InputError(f"{directory}: cannot read ({exc.strerror})") from None
        seen += len(entries)
        if seen > MAX_ENTRIES:
            raise InputError(f"{root}: more than {MAX_ENTRIES} files and folders; not a submission to grade")
        for entry in entries:
            path = Path(entry.path)
            if entry.name.startswith(".") or entry.name in SKIPPED_DIRS:
                continue
            if entry.is_dir(follow_symlinks=False):
                if not_the_work(entry):
                    if left_out is not None:
                        left_out.append(f"{path.relative_to(root)}/")
                else:
                    pending.append(path)
                continue
            if path.suffix not in MAX_FILE_BYTES or (entry.name.startswith("test_") and path.suffix == ".py") \
                    or entry.name == "setup.py":
                # A course's tests and set-up are not the work (the report says so); a notebook named test_ can be.
                if passed_over is not None and path.suffix in MAX_FILE_BYTES:
                    passed_over.append(path)
                continue
            if entry.is_symlink() and not inside(path, root):
                raise InputError(f"{path.relative_to(root)}: a link out of the submission is not graded")
            if path.is_file():
                found.append(path)
                total += path.stat().st_size
    if len(found) > MAX_FILES or total > MAX_TOTAL_BYTES:
        raise InputError(f"{root}: {len(found)} files, {total / MIB:.1f} MB: too much to grade "
                         f"(at most {MAX_FILES} files, {MAX_TOTAL_BYTES // MIB} MB)")
    return sorted(found)
