"""The audit hook's path logic, pure and testable alone: what a path resolves to, and whether it reaches the
grader's files or another process.

Everything these functions call is bound as a keyword default when this module runs, in the fork server,
before any submission code: a submission that replaces ``os.lstat``, ``os.path.realpath`` or ``str.split``
later changes nothing they decide. ``guard.install_guard`` keeps their internals out of reach.
"""

import os
import stat


def another_process(path, own, *, _split=str.split, _isdigit=str.isdigit, _len=len):
    """Whether ``path`` (an exact ``str``) is in the ``/proc`` entry of a process but ``own`` (a pid, as
    text): the grader's environment, command line... Without a PID namespace the child shares ``/proc``
    with the grading process. Only functions bound in advance run: a submission that replaced
    ``os.getpid`` (to pass the grader's pid for its own) or ``os.sep`` changes nothing.
    """
    parts = _split(path, "/")
    return _len(parts) > 2 and parts[1] == "proc" and _isdigit(parts[2]) and parts[2] != own

def identities(paths):
    """``(device, inode)`` of each existing path: what a path names, however it is spelled."""
    found = set()
    for path in paths:
        try:
            status = os.stat(path)
        except (OSError, ValueError):
            continue
        found.add((status.st_dev, status.st_ino))
    return frozenset(found)

def as_text(value, *, _str=str, _bytes=bytes, _type=type, _isinstance=isinstance, _copy=str.__getitem__,
            _decode=bytes.decode, _all=slice(None)):
    """``value`` as an exact ``str`` (made in C, whatever subclass it was), or ``None``."""
    if _type(value) is _str:
        return value
    if _isinstance(value, _str):
        return _copy(value, _all)
    if _isinstance(value, _bytes):
        return _decode(value, "utf-8", "surrogateescape")
    return None

def reaches(path, off_limits, named, *, _stat=os.stat, _getcwd=os.getcwd, _rpartition=str.rpartition,
            _startswith=str.startswith, _item=tuple.__getitem__, _OSError=OSError, _ValueError=ValueError,
            _normpath=os.path.normpath):
    """Whether ``path`` (an exact ``str``) or a directory on the way to it is off limits: one of
    ``off_limits`` (``(st_dev, st_ino)`` pairs, ``identities``), asked of the kernel prefix by prefix, so
    links, ``..`` and ``/proc/self/root`` change nothing; or, by name, ``named`` or beneath one of them (the
    resolved directories of the grader), so that where the grader's files are not there at all (the
    minimal root) trying to reach them counts the same as where they are. A relative path is taken from
    the current directory, wherever that is."""
    if not _startswith(path, "/"):
        try:
            path = _getcwd() + "/" + path
        except _OSError:
            pass
    normal = _normpath(path)
    for root in named:
        if normal == root or _startswith(normal, root + "/"):
            return True
    while path:
        try:
            status = _stat(path)
        except (_OSError, _ValueError):
            pass
        else:
            if (_item(status, 2), _item(status, 1)) in off_limits:
                return True
        head = _rpartition(path, "/")[0]
        if head == path:
            return False
        path = head
    return False

def resolve(path, *, _lstat=os.lstat, _readlink=os.readlink, _getcwd=os.getcwd, _is_link=stat.S_ISLNK,
            _item=tuple.__getitem__, _split=str.split, _rpartition=str.rpartition, _startswith=str.startswith,
            _text=as_text, _list=list, _pop=list.pop, _OSError=OSError, _ValueError=ValueError):
    """``os.path.realpath`` of an exact ``str``, made only of functions bound before the submission ran:
    ``os.path.realpath`` looks ``os.lstat``, ``os.readlink`` and ``stat.S_ISLNK`` up when it is called,
    and a submission that replaced them could make a path outside the working directory look inside."""
    if not _startswith(path, "/"):
        try:
            path = _getcwd() + "/" + path
        except _OSError:
            return path
    pending, resolved, links = _split(path, "/"), "", 0
    pending.reverse()
    while pending:
        part = _pop(pending)
        if part in ("", "."):
            continue
        if part == "..":
            resolved = _rpartition(resolved, "/")[0]
            continue
        candidate = resolved + "/" + part
        try:
            link = _is_link(_item(_lstat(candidate), 0))
        except (_OSError, _ValueError):
            link = False
        if not link:
            resolved = candidate
            continue
        links += 1
        target = _text(_readlink(candidate)) if links <= 40 else None
        if target is None:  # a loop of links: what it names is nothing the kernel would open
            return candidate
        if _startswith(target, "/"):
            resolved = ""
        more = _split(target, "/")
        more.reverse()
        pending += more
    return resolved or "/"
