"""A graded notebook to hand back: the submission with feedback cells in it.

The student's own cells are left exactly as they were; micrograde only inserts
markdown cells, tagged so that grading the handed-back notebook again removes
and replaces them instead of stacking them.
"""

from __future__ import annotations

import json

from grader.report.markdown import summary, target_section
from grader.report.model import Report
from grader.submission.notebook import FEEDBACK_TAG, read, student_cells
from grader.submission.source import Submission


def _cell(cell_id: str, source: str, with_id: bool) -> dict:
    cell = {"cell_type": "markdown", "metadata": {"tags": [FEEDBACK_TAG], "editable": False}, "source": source}
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


def feedback_notebook(raw: bytes, report: Report, submission: Submission) -> dict:
    """The notebook in ``raw`` with a summary on top and, after each stub's cell, its feedback."""
    notebook = json.loads(raw.decode("utf-8"))
    if notebook.get("nbformat", 0) < 4:  # upgraded; cells then change form anyway
        notebook = dict(read(raw, str(submission.path)))
    with_ids = (notebook.get("nbformat"), notebook.get("nbformat_minor", 0)) >= (4, 5)
    numbered = student_cells(notebook)
    after: dict[int, list[str]] = {}
    for target in report.targets:
        location = submission.location(target)
        if location is not None and location.cell is not None:
            after.setdefault(location.cell, []).append(target)
    cells = [_cell("micrograde-summary", summary(report), with_ids)]
    for number, cell in numbered:
        cells.append(cell)
        for target in after.get(number, []):
            cells.append(_cell(f"micrograde-{target.replace('_', '-')}", target_section(report, target), with_ids))
    notebook["cells"] = cells
    return notebook


def dumps(notebook: dict) -> str:
    """The notebook as Jupyter itself writes it."""
    return json.dumps(notebook, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def render_html(notebook: dict) -> str:
    """The feedback notebook as one HTML page (nbconvert's lab template, Mermaid included)."""
    import nbformat
    from nbconvert import HTMLExporter

    body, _ = HTMLExporter(template_name="lab").from_notebook_node(nbformat.from_dict(notebook))
    return body
