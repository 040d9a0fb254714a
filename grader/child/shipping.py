"""The code the grader's own processes run: compiled once here, handed over as ``marshal`` data.

The launcher and every child run ``python -c BOOTSTRAP``: it reads a
length-prefixed ``marshal`` blob of code objects from the descriptor given on
its command line and runs the first of them, with the rest as ``SHIPPED``. The
other process runs the same interpreter, so nothing of the grader's is
compiled, or read from a file, on its side.
"""

from __future__ import annotations

import importlib.machinery
import marshal
import os
import tempfile
import types
from pathlib import Path

BOOTSTRAP = """\
import marshal, os, sys
_fd = int(sys.argv[-3])
_code = marshal.loads(os.pread(_fd, int.from_bytes(os.pread(_fd, 8, 0), "big"), 8))
os.close(_fd)
exec(_code[0], {"__name__": "__main__", "__builtins__": __builtins__, "SHIPPED": _code[1:]})
"""
# In the command line of the launcher, and so of every child it forks, with the pid of the
# grading process that started it: a leftover child can be found, and told from another grader's.
CHILD_MARK = "micrograde-child"


def child_mark(grader_pid: int | None = None) -> str:
    """The command-line mark of the processes started for grading process ``grader_pid`` (this one)."""
    return f"{CHILD_MARK}:{grader_pid or os.getpid()}"


def module_code(name: str) -> types.CodeType:
    """The code of ``grader/child/inside/<name>.py`` from Python's own bytecode cache (compiled only when
    the cache is stale), every function in it named ``<name>``: a traceback printed in the child
    then never sends ``linecache`` to read a grader file, which the child may not do."""
    path = Path(__file__).parent / "inside" / f"{name}.py"
    return renamed(importlib.machinery.SourceFileLoader(f"grader.child.inside.{name}", str(path)).get_code(None),
                   f"<{name}>")


def renamed(code: types.CodeType, filename: str) -> types.CodeType:
    """``code`` and the code objects in it (functions, classes), all with ``filename``."""
    consts = tuple(renamed(c, filename) if isinstance(c, types.CodeType) else c for c in code.co_consts)
    return code.replace(co_filename=filename, co_consts=consts)


def blob(codes: tuple[types.CodeType | None, ...]) -> bytes:
    """``codes`` as BOOTSTRAP reads them: the length, then the ``marshal`` data."""
    data = marshal.dumps(codes)
    return len(data).to_bytes(8, "big") + data


def code_file(data: bytes) -> int:
    """A descriptor of an unnamed file holding ``data`` (see ``blob``), read from offset 0."""
    handle = tempfile.TemporaryFile()
    handle.write(data)
    handle.flush()
    return os.dup(handle.fileno())  # the handle closes (and the file stays alive through the copy)
