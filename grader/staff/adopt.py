"""A course's own notebook as its scaffold: ``micrograde scaffold --adopt NOTEBOOK``.

Courses already have their notebook: Karpathy's exercises, a tutorial whose every
exercise is followed by its solution, a homework's training notebook. Writing
micrograde's own notebook instead would throw away their text and their order, and
stub out code the course gives. So the notebook is taken as it is, every cell kept
(text, code, outputs, the course's given code and its checks), and micrograde adds only
what grading needs: a last cell that grades the work (``check()``, which grades the
cells run so far as the course's configuration says) unless the notebook has one, the
course's configuration in the notebook's metadata (so that ``check()`` grades the course
wherever the notebook alone is opened: ``grader.submission.carried``), and, beside it,
the course's ``micrograde.toml``, which ``check()`` and ``micrograde grade`` in that
folder read.

What the configuration says of the notebook is checked against it first, so that a
course finds its mistakes before its learners do: a target's ``cell`` that selects no
cell of the notebook is an error naming the key; what can be right but is worth
knowing (``skip_cells`` selecting nothing, a graded part no cell defines yet, for the
learners to write) is a note.
"""

from __future__ import annotations

import json
from pathlib import Path

from grader.errors import ConfigError, InputError
from grader.exercise.targets import Exercise
from grader.staff.placing import write_files
from grader.staff.scaffold import COURSE_FILE, course_file, own_course
from grader.submission.carried import embed, mark
from grader.submission.notebook import heads, neutralise, plain_v4, sectioned_cells, selects, shallow
from grader.submission.source import MAX_NOTEBOOK_BYTES, binds, read_bytes

CHECK_TEXT = """## Check your work

Run the cell below: it grades your work in this notebook as the course does, and shows the report right
here: what each graded part lost and why, with the smallest case that shows it, and what was not graded.
(In a terminal, `micrograde grade {notebook}` in this folder does the same.)"""
CHECK_CELL = "from grader import check\n\n{call}"


def checked_against(exercise: Exercise, cells: list[tuple[int, str, tuple[str, ...], tuple[int, str]]],
                    display: str) -> list[str]:
    """Notes on what the configuration says of the notebook's code cells (``sectioned_cells``); ``ConfigError``
    for a target's ``cell`` that selects none of them, nor a Markdown heading above one (``heads``)."""
    config = exercise.config
    for target in exercise.targets:
        selector = target.knobs.cell
        if selector is not None and not any(
                selects(selector, tags, code) or (section[0] and heads(selector, section[1]))
                for _, code, tags, section in cells):
            raise ConfigError(f"{config.source} [targets.{target.name}] cell: no code cell of {display} is tagged "
                              f"{selector!r} or starts with it, nor sits under a heading it names")
    notes = [f"[submission] skip_cells {s!r} selects no cell of {display}" for s in config.skip_cells
             if not any(selects(s, tags, code) for _, code, tags, _ in cells)]
    kept = [code for _, code, tags, _ in cells if not any(selects(s, tags, code) for s in config.skip_cells)]
    for name in dict.fromkeys(config.name_of(role) for role in exercise.roles):
        if not any(defines(code, name) for code in kept):
            notes.append(f"no cell of {display} defines {name} (learners write it from scratch)")
    return notes


def defines(code: str, name: str) -> bool:
    """Whether a cell's code binds ``name`` at its top level (a cell that does not parse does not)."""
    import ast

    try:
        return any(binds(node, name) for node in ast.parse(code).body)
    except (SyntaxError, ValueError):
        return False


def grades_the_work(source: str) -> bool:
    """Whether a code cell is a grading cell: it calls micrograde's ``check`` (imported from ``grader``, or as
    ``grader.check``). A course's own helper of the same name (``check(got, want)``) is not one."""
    import ast

    try:
        tree = ast.parse(neutralise(source) or "")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    imported = {alias.asname or alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                and node.module == "grader" for alias in node.names if alias.name == "check"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            called = node.func
            if isinstance(called, ast.Name) and called.id in imported:
                return True
            if (isinstance(called, ast.Attribute) and called.attr == "check" and isinstance(called.value, ast.Name)
                    and called.value.id == "grader"):
                return True
    return False


def fresh_id(wanted: str, taken: set[str]) -> str:
    """``wanted``, or ``wanted-2``, ``wanted-3``...: a cell id no cell of the notebook has (re-adopting a notebook
    that already holds micrograde's cells never makes two cells of one id, which nbformat refuses)."""
    found, n = wanted, 1
    while found in taken:
        n += 1
        found = f"{wanted}-{n}"
    taken.add(found)
    return found


def adopted(path: Path, exercise: Exercise) -> tuple[dict, list[str]]:
    """The course's notebook at ``path`` with the grading cell at its end (unless a code cell already grades
    the work: ``grades_the_work``), and the notes on it (``checked_against``); ``InputError`` for a notebook
    that is not nbformat 4 JSON as nbformat writes it."""
    raw = read_bytes(path, str(path), MAX_NOTEBOOK_BYTES)
    shallow(raw, str(path))
    read = plain_v4(raw)
    if read is None:
        raise InputError(f"{path}: not a notebook micrograde can adopt (nbformat 4 JSON, its nbformat_minor a "
                         "whole number)")
    notes = checked_against(exercise, sectioned_cells(raw, path.name), path.name)
    notebook = json.loads(raw)  # as the course saved it: every cell written back as it was
    if not any(c.get("cell_type") == "code" and grades_the_work(c.get("source", "")) for c in read["cells"]):
        with_ids = notebook.get("nbformat_minor", 0) >= 5
        text = {"cell_type": "markdown", "metadata": {}, "source": CHECK_TEXT.format(notebook=path.name)}
        call = f"check({mark(exercise.config.sha256)})" if own_course(exercise) else "check()"
        code = {"cell_type": "code", "metadata": {}, "source": CHECK_CELL.format(call=call), "outputs": [],
                "execution_count": None}
        if with_ids:
            taken = {c.get("id") for c in notebook["cells"] if isinstance(c, dict) and isinstance(c.get("id"), str)}
            text["id"], code["id"] = fresh_id("micrograde-check-text", taken), fresh_id("micrograde-check", taken)
        notebook["cells"] += [text, code]
    if own_course(exercise):  # the course travels with its notebook (``grader.submission.carried``)
        embed(notebook, course_file(exercise), exercise.config.sha256)
    return notebook, notes


def write_adopted(exercise: Exercise, path: Path, directory: Path) -> tuple[list[Path], list[str]]:
    """The adopted notebook, under its own name, and the course's configuration beside it, in ``directory``;
    the files written and the notes."""
    notebook, notes = adopted(path, exercise)
    files = {directory / path.name: json.dumps(notebook, indent=1, ensure_ascii=False) + "\n"}
    if own_course(exercise):
        files[directory / COURSE_FILE] = course_file(exercise)
    return write_files(files), notes  # every file whole, or none: a lone surrogate in an output is refused
