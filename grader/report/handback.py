"""A graded notebook to hand back: the submission with feedback cells in it.

The student's own cells are left exactly as they were; micrograde only inserts
cells, tagged so that grading the handed-back notebook again removes and
replaces them instead of stacking them. In the ``.ipynb`` they are Markdown
(graphs in Mermaid, which Jupyter and GitHub draw); in the ``--html`` page
they are HTML micrograde escaped itself, graphs as inline SVG, so the page
opens offline.
"""

from __future__ import annotations

import json
from pathlib import Path

from grader.report import html, markdown
from grader.report.model import Report
from grader.submission.notebook import FEEDBACK_TAG, read, student_cells
from grader.submission.source import Submission

OFFLINE_TEMPLATE = Path(__file__).resolve().parent / "templates" / "offline.html.j2"


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
    for name in ("Value", "train_step"):
        source = submission.providers.get(name)
        if source is not None and source.kind == "ipynb":
            return source
    return None


def feedback_notebook(raw: bytes, report: Report, submission: Submission, as_html: bool = False) -> dict:
    """The notebook in ``raw`` with a summary on top and, after each stub's cell, its feedback
    (Markdown cells, or HTML cells for the ``--html`` page)."""
    notebook = json.loads(raw.decode("utf-8"))
    if notebook.get("nbformat", 0) < 4:  # upgraded; cells then change form anyway
        notebook = dict(read(raw, str(submission.path)))
    with_ids = (notebook.get("nbformat"), notebook.get("nbformat_minor", 0)) >= (4, 5)
    render = html if as_html else markdown
    numbered = student_cells(notebook)
    after: dict[int, list[str]] = {}
    for target in report.target_scores():
        location = submission.location(target)
        if location is not None and location.cell is not None:
            after.setdefault(location.cell, []).append(target)
    cells = [_cell("micrograde-summary", render.summary(report), with_ids, as_html)]
    for number, cell in numbered:
        cells.append(cell)
        for target in after.get(number, []):
            cells.append(_cell(f"micrograde-{target.replace('_', '-')}", render.target_section(report, target),
                               with_ids, as_html))
    notebook["cells"] = cells
    return notebook


def dumps(notebook: dict) -> str:
    """The notebook as Jupyter itself writes it."""
    return json.dumps(notebook, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def render_html(notebook: dict) -> str:
    """The notebook as one HTML page that needs no network: nbconvert's lab page without its scripts,
    the student's own Markdown rendered and, with their outputs, sanitised (``grader.report.sanitise``)."""
    import nbformat
    from nbconvert import HTMLExporter

    from grader.report.sanitise import clean_html

    exporter = HTMLExporter(template_name="lab", template_file=str(OFFLINE_TEMPLATE), sanitize_html=True,
                            filters={"clean_html": clean_html})
    # Read back as nbformat reads a file: Jupyter saves multi-line sources as lists of lines.
    body, _ = exporter.from_notebook_node(nbformat.reads(json.dumps(notebook), as_version=4))
    return body
