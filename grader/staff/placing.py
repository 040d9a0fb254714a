"""Where a staff command writes, and how: inside the folder it was given, every file whole or none.

A course's ``[scaffold]`` names (``engine_file``, ``notebook``, ``train_file``) are file names the
course chose, read like any other input: a name may hold folders (``micrograd/engine.py``, a package
layout), never ``..``, an absolute path, a backslash or an empty part, so ``scaffold`` and ``template
nbgrader`` write nothing outside the folder given; a name that would is a ``ConfigError`` (exit 2)
naming its key. Every file is made in full in memory first and then put in place by a rename, so a
command that stops on bad input leaves nothing half-written.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path, PurePosixPath

from grader.errors import ConfigError, InputError


def placed(directory: Path, name: str, key: str, source: str) -> Path:
    """``directory / name`` for the ``[scaffold] key`` of the course file ``source``; ``ConfigError`` if the
    name leads anywhere but a file inside ``directory``."""
    parts = PurePosixPath(name).parts
    if (not name or "\\" in name or "\0" in name or name.startswith("/") or name.endswith("/")
            or any(part in ("", ".", "..") for part in name.split("/")) or not parts):
        raise ConfigError(f"{source} [scaffold] {key}: {name!r} is not a file name inside the folder written "
                          "(a name, or folders and a name, without '..' or a leading '/')")
    path = directory.joinpath(*parts)
    real = Path(os.path.realpath(directory))
    if not Path(os.path.realpath(path)).is_relative_to(real):  # a link already in the folder leads out of it
        raise ConfigError(f"{source} [scaffold] {key}: {name!r} leads out of {directory} through a link")
    return path


def write_files(files: dict[Path, str | bytes]) -> list[Path]:
    """Write every file of ``files`` (text as UTF-8), each made in full beside its place and renamed into it:
    ``InputError`` for text that cannot be written (a lone surrogate), before any file is touched."""
    encoded = {}
    for path, content in files.items():
        try:
            encoded[path] = content.encode("utf-8") if isinstance(content, str) else content
        except UnicodeEncodeError as exc:
            raise InputError(f"{path.name}: holds text that is not Unicode ({exc.reason} at character "
                              f"{exc.start}): nothing was written") from None
    for path, data in encoded.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
            os.chmod(temporary, 0o644)
            os.replace(temporary, path)
        except BaseException:
            os.unlink(temporary)
            raise
    return list(encoded)
