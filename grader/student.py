"""``check(Value, train_step)``: grade your work without leaving the notebook (or script).

The classes and functions are found by their source: in a script, the files
they were defined in (``Value`` in ``engine.py``, ``train_step`` in the script
itself), graded as they are, so every line number is the student's; in
Jupyter, the most recent cell that defines each of them, with the imports of
every cell run so far. That code is graded exactly as ``micrograde grade``
grades it, in a separate, sandboxed process, under the course's configuration,
chosen as every route chooses it (``grader.course``): the ``micrograde.toml`` the
course's scaffold wrote beside the student's files (a script's folder, else the
working folder, where Jupyter runs a notebook), else the one the notebook carries
(``grader.submission.carried``), so that the notebook alone grades its course
wherever it is opened; a notebook made for a course whose configuration is not
there is refused in one line (``Refused``), never graded as another exercise.

``check()`` with nothing to check grades the work as a whole, as a course's own
notebook asks (``micrograde scaffold --adopt``): in Jupyter, every cell run so far,
in the order it ran, as a notebook (``In [5]`` in the report is the fifth cell run;
a course's cell selectors by first line apply, its tags cannot: the kernel does not
know them); in a script, the script's own file.
"""

from __future__ import annotations

import ast
import inspect
import json
import os
import re
import shutil
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from grader.course import course_for, described
from grader.errors import UsageError
from grader.report.cells import named
from grader.submission.carried import MAX_NOTEBOOKS, carried_by, short
from grader.submission.notebook import neutralise
from grader.submission.source import Location

TYPE_CHECKING = False  # as in grader/__init__.py
if TYPE_CHECKING:
    from grader.diagnosis.findings import Diagnosis
    from grader.exercise.config import Config
    from grader.report.model import Report


class Feedback:
    """The report, shown as Markdown in Jupyter and as text elsewhere."""

    def __init__(self, report):
        self.report = report

    @property
    def score(self) -> float:
        return self.report.score

    def _repr_markdown_(self) -> str:
        from grader.report.markdown import render_markdown

        return render_markdown(self.report)

    def __repr__(self) -> str:
        from grader.report.text import render_text

        return render_text(self.report)


def _history() -> list[str]:
    """The cells run so far in this IPython session, oldest first (empty outside IPython)."""
    main = sys.modules.get("__main__")
    cells = getattr(main, "In", None) or []
    return [c for c in cells if isinstance(c, str) and c.strip()]


def _defines(code: str, name: str) -> bool:
    try:
        tree = ast.parse(neutralise(code) or "")
    except SyntaxError:
        return False
    return any(isinstance(n, (ast.ClassDef, ast.FunctionDef)) and n.name == name for n in tree.body)


def _imports(code: str) -> list[str]:
    try:
        tree = ast.parse(neutralise(code) or "")
    except SyntaxError:
        return []
    return [ast.unparse(n) for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]


def source_files(objects: list) -> list[Path]:
    """The files that define ``objects``, when each comes from a file (a script); empty otherwise."""
    try:
        files = [inspect.getsourcefile(o) for o in objects]
    except (TypeError, OSError):  # defined in a notebook: no file behind the module
        return []
    if not all(f and not f.startswith("<") and Path(f).is_file() for f in files):
        return []
    return list(dict.fromkeys(Path(f).resolve() for f in files))


def source_of(objects: list) -> tuple[str, list[tuple[int, int, str]]]:
    """Python source that defines ``objects`` as the student wrote them in the cells of this IPython
    session, and where each part came from: ``(first line, last line, cell)`` (``In [5]``)."""
    history = _history()
    if not history:
        raise ValueError("check() could not find the source code; run it from a notebook or a .py file")
    imports = list(dict.fromkeys(line for cell in history for line in _imports(cell) if "grader" not in line))
    parts, origins = ["\n".join(imports)], []
    cells = getattr(sys.modules.get("__main__"), "In", [])
    for obj in objects:
        cell = next((c for c in reversed(history) if _defines(c, obj.__name__)), None)
        if cell is None:
            raise ValueError(f"check() could not find the cell that defines {obj.__name__}")
        code = neutralise(cell) or ""
        start = 1 + sum(part.count("\n") + 3 for part in parts)  # the parts are joined by two blank lines
        origins.append((start, start + code.count("\n"), f"In [{len(cells) - 1 - cells[::-1].index(cell)}]"))
        parts.append(code)
    return "\n\n\n".join(parts) + "\n", origins


def copy_files(files: list[Path], folder: Path) -> Path:
    """The student's files, as they are, in ``folder``: the file itself when there is one, else the folder."""
    for file in files:
        shutil.copyfile(file, folder / file.name)
    return folder / files[0].name if len(files) == 1 else folder


def relabelled(report: Report, origins: list[tuple[int, int, str]]) -> Report:
    """The report with each diagnosis pointing at the student's own file or cell instead of the temporary
    file (a line of that file no cell holds, such as the imports gathered from every cell, is said nowhere)."""

    def where(diagnosis: Diagnosis) -> Location | None:
        for first, last, name in origins:
            if diagnosis.line is not None and first <= diagnosis.line <= last:
                return Location(name, diagnosis.line - first + 1)
        return None if diagnosis.file == "your_work.py" else diagnosis.where

    return replace(report, submission="check()",
                   diagnoses=tuple(replace(d, where=where(d)) for d in report.diagnoses))


FLAG = 'config="PATH"'  # how check() is told its course, as a refusal names it


class Refused(UsageError):
    """``check()`` cannot know the course it grades: said in one line, in a notebook as in a script."""

    def _render_traceback_(self) -> list[str]:  # what IPython shows of it: the line, no traceback
        return [f"micrograde: {self}"]


def kernel_notebooks() -> list[Path]:
    """The notebooks this kernel may be running: the one Jupyter, JupyterHub or VS Code names, else those in the
    working folder (where Jupyter runs a notebook), at most ``MAX_NOTEBOOKS``."""
    main = sys.modules.get("__main__")
    for said in (getattr(main, "__session__", None), os.environ.get("JPY_SESSION_NAME"),
                 getattr(main, "__vsc_ipynb_file__", None)):
        if isinstance(said, str) and said.endswith(".ipynb") and Path(said).is_file():
            return [Path(said)]
    try:
        return sorted(p for p in Path.cwd().glob("*.ipynb") if p.is_file())[:MAX_NOTEBOOKS]
    except OSError:
        return []


def its_notebooks(made_for: str | None) -> list[Path]:
    """The notebooks whose course a check() in this kernel grades by, when no course file is beside it: those
    made for the course its cell names, else the kernel's own notebook when it can be told (the only one)."""
    found = kernel_notebooks() if _history() else []
    if made_for is not None:
        return [c.notebook for c in carried_by(found) if c.sha256 == made_for]
    return found if len(found) == 1 else []


def course_of(files: list[Path], config: str | Path | None, course: str | None) -> tuple[Config, list[str]]:
    """The course check() grades by (``grader.course``): ``config``, else the course file beside the work (a
    script's folder, else the working folder, where Jupyter runs a notebook), else the one its notebook
    carries; and what to say of it. ``course`` is the grading cell's ``sha256:...`` of the course it was
    made for."""
    made_for = None
    if course is not None:
        made_for = course.removeprefix("sha256:")
        if not re.fullmatch("[0-9a-f]{64}", made_for):
            raise Refused(f"course={course!r}: expected the sha256 of the course's configuration, as "
                          "\"sha256:...\" (the notebook's grading cell names it)")
    where = [*(f.parent for f in files), Path.cwd()]
    try:
        chosen = course_for(Path(config) if config is not None else None, where, its_notebooks(made_for),
                            flag=FLAG, learner=True, made_for=made_for)
    except UsageError as exc:
        raise Refused(str(exc)) from None
    notes = []
    if made_for is not None and chosen.config.sha256 != made_for:
        notes.append(f"this notebook was made for another course configuration (sha256 {short(made_for)}) than the "
                     f"one beside it that grades it ({described(chosen.config)}, sha256 "
                     f"{short(chosen.config.sha256)})")
    return chosen.config, notes


def in_ipython() -> bool:
    shell = getattr(sys.modules.get("IPython"), "get_ipython", lambda: None)()
    return shell is not None


def history_notebook() -> tuple[dict, list[str]]:
    """The cells this IPython session ran, in the order they ran, as a notebook (a cell run again with the
    same source only where it ran last), and the ``In [n]`` of each."""
    cells = getattr(sys.modules.get("__main__"), "In", None) or []
    last = {}
    for number, cell in enumerate(cells):
        if isinstance(cell, str) and cell.strip():
            last.pop(cell, None)
            last[cell] = number
    notebook = {"nbformat": 4, "nbformat_minor": 5, "metadata": {},
                "cells": [{"cell_type": "code", "id": f"in-{n}", "metadata": {}, "source": cell, "outputs": [],
                           "execution_count": n} for cell, n in last.items()]}
    return notebook, [f"In [{n}]" for n in last.values()]


def check_whole(options, folder: Path) -> Report:
    """``check()``: the cells run so far as a notebook, in Jupyter; else the running script's file."""
    from grader.grade import grade

    if _history():
        notebook, labels = history_notebook()
        path = folder / "notebook.ipynb"
        path.write_text(json.dumps(notebook), encoding="utf-8")
        return named(grade(path, options), dict(enumerate(labels, start=1)), "check()")
    script = getattr(sys.modules.get("__main__"), "__file__", None)
    if not script or not Path(script).is_file():
        raise ValueError("check() could not find your work; run it from a notebook or a .py file")
    return grade(Path(script), options)


def check(Value=None, train_step=None, *, timeout: float | None = None,  # noqa: N803 (the student's names)
          config: str | Path | None = None, course: str | None = None) -> Feedback:
    """Grade ``Value`` and ``train_step`` (either may be left out; both: the work as a whole, see the module's
    docstring) and show the report: under the course's configuration (``config``, else the one beside the
    work or the one its notebook carries: see ``course_of``; ``course`` is the hash of the course the notebook
    was made for, which its grading cell names), with ``timeout`` seconds for each target if given (else the
    configuration's). A course it cannot know is one line (``Refused``), never another exercise's grade."""
    from grader.grade import Options, grade

    objects = [o for o in (Value, train_step) if o is not None]
    script = getattr(sys.modules.get("__main__"), "__file__", None)
    if objects:
        files = source_files(objects)
    else:
        files = [Path(script).resolve()] if not _history() and script and Path(script).is_file() else []
    try:
        chosen, notes = course_of(files, config, course)
    except Refused as exc:
        if in_ipython():
            raise
        print(f"micrograde: error: {exc}", file=sys.stderr)
        raise SystemExit(exc.exit_status) from None
    options = Options(config=chosen, timeout=timeout)
    with tempfile.TemporaryDirectory(prefix="micrograde-check-", ignore_cleanup_errors=True) as tmp:
        if not objects:
            report = check_whole(options, Path(tmp))
        elif files:  # a script: its files are graded as they are, so every line number is the student's
            report = relabelled(grade(copy_files(files, Path(tmp)), options), [])
        else:
            path = Path(tmp) / "your_work.py"
            source, origins = source_of(objects)
            path.write_text(source, encoding="utf-8")
            report = relabelled(grade(path, options), origins)
    feedback = Feedback(replace(report, warnings=(*notes, *report.warnings)))
    if not in_ipython():
        print(repr(feedback), end="")
    return feedback
