"""The working directories of a grade's children: one new, empty folder a child, in a folder of this process's
own, watched while the child runs and removed without following a link.

Without namespaces nothing but this bounds what a child leaves in its folder (``workdir_excess``, against the
tmpfs sizes ``grader.child.sandbox`` gives the namespaces) or keeps open of it once deleted (``held``).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import stat
import struct
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

from grader.child import sandbox

CAPABILITY_VERSION_3 = 0x20080522  # capget's header: which layout of the capability sets

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
    """Why the working directory holds more than a child may leave there (``sandbox.WORK_BYTES`` on disk,
    ``sandbox.WORK_FILES`` files and folders, as the namespaces' tmpfs allows), or ``None``. With ``holder``
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
                        if entries > sandbox.WORK_FILES or used > sandbox.WORK_BYTES:
                            return (f"it left more than {sandbox.WORK_BYTES >> 20} MiB or {sandbox.WORK_FILES} "
                                    "files in its working directory")
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
    (``sandbox.FILE_BYTES``: their size cannot be read without ``CAP_SYS_ADMIN``). What cannot be read (the
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
    libc = sandbox.libc()
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
            yield (-1, int(fields[4])), sandbox.FILE_BYTES
