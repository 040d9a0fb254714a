"""A learner's files loaded as the course runs them, beside the course's own.

One file of the learner is loaded at a time, in a copy of the course's tree: a target is checked with the
learner's file that holds it and the course's other files, so that a bug is seen only where it is written (a
neuron wrong through a wrong op is the op's bug). A notebook is one file: its code cells run in order, in one
namespace, a cell that raises recorded and the next one run, as Jupyter's "run all" without stopping does.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import io
import json
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

SKIPPED = re.compile(r"(^|/)(test_[^/]*\.py|__pycache__/.*)$")


@dataclass
class Loaded:
    """The names the course's forms may use, and the modules that hold them."""

    namespace: dict
    modules: dict[str, ModuleType] = field(default_factory=dict)  # relative path -> module (a .py tree)
    tree: Path | None = None
    cells: list[str] = field(default_factory=list)  # how each notebook cell ended (ran, raised ...)


def course_files(course: Path) -> list[str]:
    """The course's files, as paths relative to its folder (its own tests and caches left out)."""
    return sorted(str(p.relative_to(course)) for p in course.rglob("*")
                  if p.is_file() and not SKIPPED.search(str(p.relative_to(course))))


def neutralise(source: str) -> str:
    """IPython's magics and shell escapes become ``pass``."""
    return "\n".join(re.sub(r"^(\s*)[%!].*$", r"\1pass", line) for line in source.split("\n"))


def run_notebook(path: Path) -> Loaded:
    raw = json.loads(path.read_text(encoding="utf-8"))
    namespace: dict = {"__name__": "__main__"}
    ended = []
    for number, cell in enumerate(raw["cells"], 1):
        if cell["cell_type"] != "code":
            ended.append("markdown")
            continue
        source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        try:
            code = compile(neutralise(source), f"<cell {number}>", "exec")
            with contextlib.redirect_stdout(io.StringIO()):
                exec(code, namespace)  # noqa: S102 (the corpus's own notebooks)
            ended.append("ran")
        except Exception as exc:  # noqa: BLE001 (a learner's cell may raise anything; the next one runs)
            ended.append(f"raised {type(exc).__name__}")
    return Loaded(namespace, cells=ended)


def module_name(relative: str) -> str:
    parts = Path(relative).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def load(family: Path, entry: Path, file: str) -> Loaded:
    """The course's tree with the entry's ``file`` in place of the course's, imported (or, for a notebook, run)."""
    course = family / "course"
    if file.endswith(".ipynb"):
        return run_notebook(entry / file)
    tree = Path(tempfile.mkdtemp(prefix="engines-")) / "tree"
    shutil.copytree(course, tree, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copyfile(entry / file, tree / file)
    sys.path.insert(0, str(tree))
    sys.dont_write_bytecode = True
    modules, namespace = {}, {}
    relatives = [f for f in course_files(course) if f.endswith(".py")]
    with contextlib.redirect_stdout(io.StringIO()):
        for relative in sorted(relatives, key=lambda f: f == file):  # the checked file's names win
            module = importlib.import_module(module_name(relative))
            modules[relative] = module
            namespace.update({k: v for k, v in vars(module).items() if not k.startswith("__")})
    return Loaded(namespace, modules, tree)


def course_module(loaded: Loaded, relative: str, course: Path) -> ModuleType:
    """The course's own version of ``relative``, loaded beside the learner's under another name (its imports
    reach the same tree: the course's other files)."""
    name = module_name(relative)
    package, _, stem = name.rpartition(".")
    alias = f"{package}._course_{stem}" if package else f"_course_{stem}"
    spec = importlib.util.spec_from_file_location(alias, course / relative)
    module = importlib.util.module_from_spec(spec)
    module.__package__ = package
    sys.modules[alias] = module
    with contextlib.redirect_stdout(io.StringIO()):
        spec.loader.exec_module(module)
    return module
