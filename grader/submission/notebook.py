"""Reading a notebook submission as plain Python, cell by cell.

Jupyter code cells may hold IPython syntax that plain Python rejects (``%time``,
``%%timeit``, ``!pip install``, ``obj?``). None of it is needed to define the
graded code, and none of it may run a shell, so it is neutralised here: line
magics and shell escapes become ``pass``, cell magics drop the whole cell.
Cells tagged ``skip-grading`` are left out (and those a course selects as its own:
``selects``, ``grader.submission.cells``), and so are the feedback cells
micrograde itself inserts into a handed-back notebook (which are not counted
either, so cell numbers stay those of the student's notebook).
"""

from __future__ import annotations

import json
import re

from grader.errors import InputError
from grader.submission.nesting import MAX_NOTEBOOK_DEPTH, too_deep

SKIP_TAG = "skip-grading"
FEEDBACK_TAG = "micrograde-feedback"  # cells micrograde inserted; never graded, replaced on a re-grade
_MAGIC_LINE = re.compile(r"^(\s*)(?:[%!]|[A-Za-z_][\w.]*\s*=\s*[%!]).*$")
_HELP_LINE = re.compile(r"^(\s*)[\w.\[\]()]+\s*\?\??\s*$")
_IPYTHON_IMPORT = re.compile(r"^(\s*)(?:from\s+IPython[\w.]*\s+import\b|import\s+IPython\b).*$")


def neutralise(code: str) -> str | None:
    """Plain Python for one code cell, or ``None`` when the cell is a cell magic."""
    if code.lstrip().startswith("%%"):
        return None
    lines = []
    # Lines as Python counts them: str.splitlines would also end one at \f, \x1c, U+0085, U+2028...,
    # which Python reads as part of the line (a comment would then spill into code).
    for line in re.split(r"\r\n|\r|\n", code):
        for pattern in (_MAGIC_LINE, _HELP_LINE, _IPYTHON_IMPORT):
            match = pattern.match(line)
            if match:
                line = f"{match.group(1)}pass  # IPython syntax, not run by the grader"
                break
        lines.append(line)
    return "\n".join(lines)


def first_line(source: str) -> str:
    """A cell's first non-blank line: how a warning names the cell."""
    return next((line.strip() for line in source.splitlines() if line.strip()), "")


def selects(selector: str, tags: tuple[str, ...], code: str) -> bool:
    """Whether a course's cell selector (``grader.submission.cells``) selects a cell with ``tags`` and ``code``:
    one of its tags, or how its first line starts, as whole words (``# Exercise 1`` is not ``# Exercise 10``)."""
    if selector in tags:
        return True
    line = first_line(code)
    rest = line[len(selector):]
    return line.startswith(selector) and not (rest[:1].isalnum() or rest[:1] == "_")


def student_cells(notebook: dict) -> list[tuple[int, dict]]:
    """The student's cells, numbered from 1 from the top, leaving out micrograde's own."""
    own = [c for c in notebook.get("cells", []) if FEEDBACK_TAG not in c.get("metadata", {}).get("tags", [])]
    return list(enumerate(own, start=1))


def plain_v4(raw: bytes) -> dict | None:
    """A version-4 notebook read as plain JSON, cell sources joined as nbformat joins them.

    ``None`` for anything else, which nbformat then reads (and upgrades, or
    rejects): importing nbformat takes most of the time of a whole grade, and
    nearly every notebook is version 4 already.
    """
    if too_deep(raw, MAX_NOTEBOOK_DEPTH):
        return None
    try:
        notebook = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    if not (isinstance(notebook, dict) and notebook.get("nbformat") == 4 and isinstance(notebook.get("cells"), list)
            and type(notebook.get("nbformat_minor", 0)) is int):
        return None
    for cell in notebook["cells"]:
        if not (isinstance(cell, dict) and isinstance(cell.get("cell_type"), str)
                and isinstance(cell.get("metadata", {}), dict)
                and isinstance(cell.get("metadata", {}).get("tags", []), list)):
            return None
        source = cell.get("source", "")
        if isinstance(source, list) and all(isinstance(line, str) for line in source):
            cell["source"] = "".join(source)
        elif not isinstance(source, str):
            return None
    return notebook


def without_outputs(raw: bytes) -> bytes | None:
    """The notebook with every cell's outputs and attachments left out (what is graded is the code),
    or ``None`` when it is not a notebook's JSON."""
    try:
        notebook = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    if not isinstance(notebook, dict) or not isinstance(notebook.get("cells"), list):
        return None
    for cell in notebook["cells"]:
        if isinstance(cell, dict):
            if "outputs" in cell:
                cell["outputs"] = []
            cell.pop("attachments", None)
    return json.dumps(notebook).encode()


def shallow(raw: bytes, display: str) -> None:
    """``InputError`` for a notebook whose JSON nests deeper than any parser here may go (``nesting``)."""
    if too_deep(raw, MAX_NOTEBOOK_DEPTH):
        raise InputError(f"{display}: not a notebook micrograde reads (its JSON nests deeper than "
                         f"{MAX_NOTEBOOK_DEPTH} levels, in an output or the metadata: clear the outputs and save it "
                         "again)")


def read(raw: bytes, display: str):
    """The notebook as nbformat version 4 (older versions upgraded); ``InputError`` if it is not one."""
    shallow(raw, display)
    notebook = plain_v4(raw)
    if notebook is not None:
        return notebook
    import nbformat

    try:
        notebook = nbformat.reads(raw.decode("utf-8"), as_version=4)
    except UnicodeDecodeError:
        raise InputError(f"{display}: not a notebook (the file is not UTF-8 text)") from None
    except (json.JSONDecodeError, nbformat.reader.NotJSONError):
        raise InputError(f"{display}: not a notebook (invalid JSON)") from None
    except Exception as exc:  # nbformat raises several unrelated types for malformed files
        raise InputError(f"{display}: not a valid notebook ({type(exc).__name__})") from None
    if not isinstance(notebook.get("cells"), list):
        raise InputError(f"{display}: not a valid notebook (no cells)")
    if type(notebook.get("nbformat_minor", 0)) is not int:
        raise InputError(f"{display}: not a valid notebook (its nbformat_minor is not a whole number)")
    return notebook


def sectioned_cells(raw: bytes, display: str) -> list[tuple[int, str, tuple[str, ...], tuple[int, str]]]:
    """``(cell number, python code, tags, section)`` for each gradable code cell; its section is the number and
    the first heading line of the Markdown cell with a heading it sits under (``(0, "")`` above the first one)."""
    cells, section = [], (0, "")
    for number, cell in student_cells(read(raw, display)):
        if cell.get("cell_type") == "markdown":
            heading = next((line.strip() for line in str(cell.get("source", "")).splitlines()
                            if line.lstrip().startswith("#")), None)
            if heading is not None:
                section = (number, heading)
            continue
        if cell.get("cell_type") != "code":
            continue
        tags = cell.get("metadata", {}).get("tags", [])
        if SKIP_TAG in tags:
            continue
        code = neutralise(cell.get("source", ""))
        if code is not None:
            cells.append((number, code, tuple(t for t in tags if isinstance(t, str)), section))
    return cells


def heads(selector: str, heading: str) -> bool:
    """Whether a course's cell selector names a Markdown heading (``# Exercise 4`` names ``## Exercise 4:
    backpropagation``): their words, without the heading's marks, as whole words."""
    words, title = selector.lstrip("#").strip(), heading.lstrip("#").strip()
    rest = title[len(words):]
    return bool(words) and title.startswith(words) and not (rest[:1].isalnum() or rest[:1] == "_")
