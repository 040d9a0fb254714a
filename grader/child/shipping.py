"""The code the grader's own processes run: compiled once here, handed over as ``marshal`` data.

The fork server runs ``python -c BOOTSTRAP``: it reads a length-prefixed
``marshal`` blob from the descriptor given on its command line, executes the
shipped modules of ``grader/child/inside/`` in order as one package (so they
import each other as they do here, with relative imports), takes them out of
``sys.modules`` again (nothing run later can import them), and calls
``main(shipped, namespaces)`` of the last one, the entry point, with the
modules' namespaces. The fork server's modules are the child's and its own:
executing the child's modules took every child about 4 ms, so they are
executed once, there, and every child forked from it starts from them (fork
gives each its own copy of their state). A child runs BOOTSTRAP too, on a blob
that ships no module, only the training engine for the child that grades
``train_step`` (``None`` for every other); the fork server hands it the
entry point and namespaces of the child's modules (``_entry``). The training
engine is ``inside/training.py`` with the reference MLP (``reference/nn.py``) on
top, compiled as one module (``training_engine``). The other
process runs the same interpreter, so nothing of the grader's is compiled, or
read from a file, on its side.
"""

from __future__ import annotations

import ast
import importlib.machinery
import importlib.util
import marshal
import os
import tempfile
import types
from pathlib import Path

INSIDE = Path(__file__).parent / "inside"
MLP = "reference.nn"  # the model a training function is graded on, shipped on top of the training engine
PACKAGE = "micrograde_child"  # what the shipped modules are called in the other process, briefly
BOOTSTRAP = f"""\
import marshal, os, sys
_fd = int(sys.argv[-3])
_shipped = marshal.loads(os.pread(_fd, int.from_bytes(os.pread(_fd, 8, 0), "big"), 8))
os.close(_fd)
sys.modules["{PACKAGE}"] = type(sys)("{PACKAGE}")
sys.modules["{PACKAGE}"].__path__ = []
_loaded = []
for _name, _code in _shipped["modules"]:
    _module = sys.modules["{PACKAGE}." + _name] = type(sys)("{PACKAGE}." + _name)
    _module.__package__ = "{PACKAGE}"
    exec(_code, _module.__dict__)
    _loaded.append(vars(_module))
for _name in [_name for _name in sys.modules if _name.partition(".")[0] == "{PACKAGE}"]:
    del sys.modules[_name]
_main, _namespaces = globals().pop("_entry", None) or (_module.main, tuple(_loaded))
del _loaded
_main(_shipped, _namespaces)
"""
# The child's modules, each after those it imports; the last is the entry point.
CHILD_MODULES = ("policy", "failures", "reading", "forms", "interface", "nodes", "watching", "engine", "graphs",
                 "isolation", "cases", "styles", "entries", "tensors", "modules", "loops", "loading", "numeric",
                 "expression", "paths", "guard", "landlock", "allowlist", "seccomp", "confinement", "kernel",
                 "protocol")
FORK_SERVER_MODULES = (*CHILD_MODULES, "forkserver")
# In the command line of the fork server, and so of every child it forks, with the pid of the
# grading process that started it: a leftover child can be found, and told from another grader's.
CHILD_MARK = "micrograde-child"


def child_mark(grader_pid: int | None = None) -> str:
    """The command-line mark of the processes started for grading process ``grader_pid`` (this one)."""
    return f"{CHILD_MARK}:{grader_pid or os.getpid()}"


def module_code(name: str) -> types.CodeType:
    """The code of ``grader/child/inside/<name>.py`` from Python's own bytecode cache (compiled only when
    the cache is stale), every function in it named ``<name>``: a traceback printed in the child
    then never sends ``linecache`` to read a grader file, which the child may not do."""
    path = INSIDE / f"{name}.py"
    return renamed(importlib.machinery.SourceFileLoader(f"grader.child.inside.{name}", str(path)).get_code(None),
                   f"<{name}>")


def renamed(code: types.CodeType, filename: str) -> types.CodeType:
    """``code`` and the code objects in it (functions, classes), all with ``filename``."""
    consts = tuple(renamed(c, filename) if isinstance(c, types.CodeType) else c for c in code.co_consts)
    return code.replace(co_filename=filename, co_consts=consts)


def training_engine(models: bool = True) -> types.CodeType:
    """The training engine's code: ``inside/training.py`` and, on top (``models``), the reference MLP, its losses
    and SGD with its import of the reference engine left out (its ``Value`` is the training engine's), as one
    module, named ``training``. The reference engine itself never enters a child."""
    engine = ast.parse((INSIDE / "training.py").read_text(encoding="utf-8"))
    body = []
    if models:
        mlp = ast.parse(Path(importlib.util.find_spec(MLP).origin).read_text(encoding="utf-8"))
        body = [node for node in mlp.body
                if not (isinstance(node, ast.ImportFrom) and node.module == "reference.engine")]
    return compile(ast.Module([*engine.body, *body], type_ignores=[]), "<training>", "exec")


def shipment(modules: tuple[str, ...], training: types.CodeType | None = None) -> dict:
    """What BOOTSTRAP runs: ``modules`` of ``grader/child/inside/`` in order (none for a child: the fork
    server has run them), and the training engine's code for the one child that grades ``train_step``
    (``None`` for every other)."""
    return {"modules": [(name, module_code(name)) for name in modules], "training": training}


def blob(shipped: dict) -> bytes:
    """``shipped`` as BOOTSTRAP reads it: the length, then the ``marshal`` data."""
    data = marshal.dumps(shipped)
    return len(data).to_bytes(8, "big") + data


def code_file(data: bytes) -> int:
    """A descriptor of an unnamed file holding ``data`` (see ``blob``), read from offset 0."""
    handle = tempfile.TemporaryFile()
    handle.write(data)
    handle.flush()
    return os.dup(handle.fileno())  # the handle closes (and the file stays alive through the copy)
