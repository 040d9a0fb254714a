"""A graded notebook to hand back: the submission with feedback cells in it.

The student's own cells are left exactly as they were; micrograde only inserts
cells, tagged so that grading the handed-back notebook again removes and
replaces them instead of stacking them. In the ``.ipynb`` they are Markdown
(graphs in Mermaid, which Jupyter and GitHub draw); in the ``--html`` page
they are HTML micrograde escaped itself, graphs as inline SVG, so the page
opens offline. A ``.py`` submission gets the same page: its file, with the
feedback at the lines the report names.
"""

from __future__ import annotations

import json

from grader.exercise.ops import method_name
from grader.report import html, markdown
from grader.report.cells import named, prompts
from grader.report.identifiers import OWN, Identifiers
from grader.report.model import Report
from grader.submission.notebook import FEEDBACK_TAG, read, student_cells
from grader.submission.source import Submission


def _cell(cell_id: str, source: str, with_id: bool, as_html: bool) -> dict:
    metadata = {"tags": [FEEDBACK_TAG], "editable": False}
    cell = {"cell_type": "markdown", "metadata": metadata, "source": source}
    if as_html:
        cell = {"cell_type": "raw", "metadata": {**metadata, "raw_mimetype": "text/html"}, "source": source}
    if with_id:
        cell["id"] = cell_id
    return cell


def graded_notebook(submission: Submission):
    """The notebook that defines the graded code (``Value`` first), if the submission has one."""
    for role in submission.names:
        source = submission.providers.get(role)
        if source is not None and source.kind == "ipynb":
            return source
    return None


def feedback_notebook(raw: bytes, report: Report, submission: Submission, as_html: bool = False,
                      written: dict[str, str] | None = None) -> dict:
    """The notebook in ``raw`` with a summary on top and, after each stub's cell, its feedback
    (Markdown cells, or HTML cells for the ``--html`` page); ``written`` is what the student wrote for each
    target, where it is not the target's own name (``Tensor.__mul__`` for a tensor op)."""
    notebook = json.loads(raw.decode("utf-8"))
    if notebook.get("nbformat", 0) < 4:  # upgraded; cells then change form anyway
        notebook = dict(read(raw, str(submission.path)))
    # The page names micrograde's cells by their ids (its anchors), whatever the notebook's version.
    with_ids = as_html or (notebook.get("nbformat"), notebook.get("nbformat_minor", 0)) >= (4, 5)
    render = html if as_html else markdown
    numbered = student_cells(notebook)
    after: dict[int, list[str]] = {}
    for target in report.target_scores():
        # Where its diagnosis points (a target of a notebook's step: that step's cell), else where it is defined.
        cell = next((d.cell for d in report.diagnoses if d.target == target and d.cell is not None), None)
        location = submission.location((written or {}).get(target, target))
        cell = cell if cell is not None else location.cell if location is not None else None
        if cell is not None:
            after.setdefault(cell, []).append(target)
    # micrograde's cells keep their names (the page's anchors): a student's id naming micrograde is renamed there
    ids = Identifiers(str(cell["id"]) for _, cell in numbered if OWN not in str(cell.get("id", OWN)).lower())
    report = named(report, prompts(numbered))  # a cell that ran as the notebook shows it: In [7]
    cells = [_cell(ids("summary", "micrograde-"), render.summary(report), with_ids, as_html)]
    for number, cell in numbered:
        cells.append(cell)
        for target in after.get(number, []):
            cells.append(_cell(ids(target, "micrograde-"), render.target_section(report, target), with_ids, as_html))
    notebook["cells"] = cells
    return notebook


def source_notebook(report: Report, submission: Submission, written: dict[str, str] | None = None) -> dict | None:
    """A ``.py`` submission as a notebook to hand back as a page: each graded file's code, cut just above every
    line the report names (a target's ``def``), with that target's feedback (HTML cells) there; ``None``
    if no graded file is a ``.py``."""
    files = [s for s in dict.fromkeys(submission.providers.values()) if s.kind == "py" and s.units]
    if not files:
        return None
    ids = Identifiers()
    cells = [_cell(ids("summary", "micrograde-"), html.summary(report), True, True)]
    for source in files:
        if len(files) > 1:
            cells.append({"cell_type": "markdown", "metadata": {}, "id": ids(f"file-{len(cells)}"),
                          "source": f"### {markdown.code(source.display)}"})
        lines = source.units[0].source.splitlines(keepends=True)
        at: dict[int, list[str]] = {}
        for target in report.target_scores():
            location = submission.location((written or {}).get(target) or method_name(target))
            if location is not None and location.file == source.display and location.line:
                at.setdefault(location.line, []).append(target)
        start = 1
        for line in [*sorted(at), len(lines) + 1]:
            if "".join(lines[start - 1:line - 1]).strip():
                cells.append({"cell_type": "code", "metadata": {}, "id": ids(f"code-{len(cells)}"),
                              "source": "".join(lines[start - 1:line - 1]),
                              "outputs": [], "execution_count": None})
            cells += [_cell(ids(t, "micrograde-"), html.target_section(report, t), True, True)
                      for t in at.get(line, [])]
            start = line
    return {"nbformat": 4, "nbformat_minor": 5, "cells": cells,
            "metadata": {"language_info": {"name": "python"}, "kernelspec": {"name": "python3", "language": "python",
                                                                             "display_name": "Python 3"}}}


def dumps(notebook: dict) -> str:
    """The notebook as Jupyter itself writes it."""
    return json.dumps(notebook, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def render_html(notebook: dict) -> str:
    """The notebook as one HTML page that needs no network and runs nothing (``grader.report.page``)."""
    from grader.report import page

    return page.render(notebook)
