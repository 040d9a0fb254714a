"""The ``--html`` page: a notebook as one page that opens offline, in which nothing of the submission's can run.

Made in three steps, in this order:

1. nbconvert renders the cells (``templates/offline.html.j2``) of a copy of the
   notebook that nbformat's schema accepts (``renderable``): a cell id that
   breaks the schema's pattern, an output of no known type, a field of the
   wrong type is mended or left out, never a reason to write no page.
   micrograde's own cells (tagged ``micrograde-feedback``: ``handback`` made
   them) are rendered as slots, random words no submission can know;
2. that whole body goes through one allow-list sanitiser
   (``grader.report.sanitise``), whatever template block wrote it;
3. micrograde's own cells go in at their slots (HTML micrograde escaped itself,
   graphs as inline SVG), and so do the graphs of a saved ``check()`` output's
   Mermaid, drawn (``grader.report.saved``: the page runs no script to draw
   Mermaid), and micrograde writes the page around them: the style sheets (read
   once, by ``prepare``) and a Content-Security-Policy that allows no script, no
   fetch but embedded images and fonts, no form and no ``<base>``.
"""

from __future__ import annotations

import importlib
import json
import secrets
from html import escape
from pathlib import Path

from grader.report.identifiers import CELL_ID, OWN
from grader.report.sanitise import clean_html
from grader.submission.notebook import FEEDBACK_TAG

TEMPLATE = Path(__file__).resolve().parent / "templates" / "offline.html.j2"
CSP = ("default-src 'none'; img-src data:; style-src 'unsafe-inline'; font-src data:; base-uri 'none'; "
       "form-action 'none'")
STREAMS = ("stdout", "stderr")
_READY: dict = {}  # the exporter and the page's style sheets (``prepare``)
# One of every kind of cell and output the template writes: rendered once by ``prepare`` so that every
# template, lexer and style sheet the page needs is read then, and never again.
WARM_UP = {"cells": [
    {"cell_type": "markdown",
     "source": "# a\n\n*b* `c` [d](#e)\n\n| f |\n|---|\n| g |\n\n$h$\n\n```python\ni = 1\n```"},
    {"cell_type": "raw", "metadata": {"raw_mimetype": "text/html"}, "source": "<b>j</b>"},
    {"cell_type": "code", "source": "%time k = 1\n!ls\nk", "execution_count": 1, "outputs": [
        {"output_type": "stream", "name": "stdout", "text": "l\x1b[31mm\x1b[0m"},
        {"output_type": "execute_result", "execution_count": 1, "metadata": {}, "data": {
            "text/plain": "n", "text/html": "<i>o</i>", "text/markdown": "*p*", "text/latex": "$q$",
            "image/svg+xml": "<svg/>", "image/png": "iVBORw0KGgo=", "image/jpeg": "/9j/",
            "text/vnd.mermaid": "graph LR; r-->s"}},
        {"output_type": "display_data", "metadata": {}, "data": {"image/png": "iVBORw0KGgo="}},
        {"output_type": "display_data", "metadata": {}, "data": {"text/markdown": "t"}},
        {"output_type": "display_data", "metadata": {}, "data": {"text/latex": "u"}},
        {"output_type": "display_data", "metadata": {}, "data": {"text/vnd.mermaid": "v"}},
        {"output_type": "display_data", "metadata": {}, "data": {"image/jpeg": "/9j/"}},
        {"output_type": "display_data", "metadata": {}, "data": {"image/svg+xml": "<svg/>"}},
        {"output_type": "error", "ename": "w", "evalue": "x", "traceback": ["\x1b[31my\x1b[0m"]}]}],
    "metadata": {"language_info": {"name": "python", "pygments_lexer": "ipython3"}}}


def text(value: object) -> str:
    """A source or a text field as nbformat holds it: a string, or a list of lines; anything else, nothing."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(line for line in value if isinstance(line, str))
    return ""


def bundle(value: object) -> dict:
    """A MIME bundle: text by MIME type (JSON types keep their JSON value)."""
    if not isinstance(value, dict):
        return {}
    kept = {}
    for mime, data in value.items():
        if isinstance(mime, str) and "/" in mime:
            kept[mime] = data if mime.endswith("json") and isinstance(data, dict | list) else text(data)
    return kept


def output(value: object) -> dict | None:
    """One output as nbformat's schema has it, or ``None`` for one of no known type."""
    if not isinstance(value, dict):
        return None
    kind = value.get("output_type")
    if kind == "stream":
        name = value.get("name")
        return {"output_type": kind, "name": name if name in STREAMS else "stdout", "text": text(value.get("text"))}
    if kind == "error":
        trace = value.get("traceback")
        return {"output_type": kind, "ename": text(value.get("ename")), "evalue": text(value.get("evalue")),
                "traceback": [line for line in trace if isinstance(line, str)] if isinstance(trace, list) else []}
    if kind in ("display_data", "execute_result"):
        metadata = value.get("metadata")
        made = {"output_type": kind, "data": bundle(value.get("data")),
                "metadata": metadata if isinstance(metadata, dict) else {}}
        if kind == "execute_result":
            count = value.get("execution_count")
            made["execution_count"] = count if type(count) is int and count >= 0 else None
        return made
    return None


def renderable(notebook: dict) -> dict:
    """``notebook`` as a version 4.5 notebook that nbformat's schema accepts, with what the page shows: each
    cell of a known type, its source, tags, raw MIME type and attachments, a code cell's outputs; every
    cell id matches the schema's pattern and is unique, and only micrograde's own cells' ids name micrograde
    (an id that does not hold is replaced by another)."""
    cells, ids = [], set()
    for index, cell in enumerate(notebook.get("cells") if isinstance(notebook.get("cells"), list) else []):
        kind = cell.get("cell_type") if isinstance(cell, dict) else None
        if kind not in ("markdown", "code", "raw"):
            continue
        metadata = cell.get("metadata") if isinstance(cell.get("metadata"), dict) else {}
        tags = metadata.get("tags")
        own = isinstance(tags, list) and FEEDBACK_TAG in tags
        given = cell.get("id")  # micrograde's name is its own cells' alone (their anchors)
        usable = isinstance(given, str) and CELL_ID.fullmatch(given) and (own or OWN not in given.lower())
        made_id = given if usable and given not in ids else f"c{index}"
        while made_id in ids:
            made_id = f"c{index}-{len(ids)}"
        ids.add(made_id)
        made = {"cell_type": kind, "id": made_id, "source": text(cell.get("source")),
                "metadata": {"tags": [t for t in tags if isinstance(t, str) and t and "," not in t]}
                if isinstance(tags, list) else {}}
        if kind == "raw" and isinstance(metadata.get("raw_mimetype"), str):
            made["metadata"]["raw_mimetype"] = metadata["raw_mimetype"]
        if kind == "code":
            count = cell.get("execution_count")
            made["execution_count"] = count if type(count) is int and count >= 0 else None
            outputs = cell.get("outputs") if isinstance(cell.get("outputs"), list) else []
            made["outputs"] = [o for o in map(output, outputs) if o is not None]
        elif isinstance(cell.get("attachments"), dict):
            made["attachments"] = {name: bundle(b) for name, b in cell["attachments"].items() if isinstance(name, str)}
        cells.append(made)
    language = (notebook.get("metadata") or {}).get("language_info") if isinstance(notebook.get("metadata"), dict) \
        else None
    name = language.get("name") if isinstance(language, dict) else None
    return {"nbformat": 4, "nbformat_minor": 5, "cells": cells,
            "metadata": {"language_info": {"name": name if isinstance(name, str) else "python"}}}


def prepare() -> None:
    """Make the exporter and read the page's style sheets, once a process: every template, lexer and style
    sheet the page needs is read now (a page of every kind of cell and output is rendered), never later."""
    if _READY:
        return
    import nbformat
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(template_name="lab", template_file=str(TEMPLATE), sanitize_html=True,
                            filters={"clean_html": clean_html})
    exporter.environment.auto_reload = False  # the templates as read now, whatever happens to their files
    head, _ = exporter.from_notebook_node(nbformat.from_dict(renderable({"cells": []})),
                                          resources={"micrograde_part": "head"})
    _READY.update(exporter=exporter, head=head)
    body(renderable(WARM_UP))
    importlib.import_module("grandalf.layouts")  # the graphs' layout where Graphviz is not (``drawing``)


def body(notebook: dict) -> str:
    """The cells of a ``renderable`` notebook, as nbconvert's lab page writes them, sanitised as one."""
    import nbformat

    html, _ = _READY["exporter"].from_notebook_node(nbformat.from_dict(notebook), resources={"micrograde_part": "body"})
    return clean_html(html)


def new_slot() -> str:
    """A word no submission can know, that marks where micrograde's own HTML goes in the page."""
    return f"micrograde-slot-{secrets.token_hex(16)}"


def drawn_graphs(cell: dict) -> dict[str, str]:
    """The graphs of micrograde's Mermaid in ``cell`` (a saved ``check()`` output's, in its Markdown or as
    Mermaid output) replaced by slots, and the drawing of each (``grader.report.saved``)."""
    from grader.report.saved import with_slots

    slots: dict[str, str] = {}
    if cell["cell_type"] == "markdown":
        cell["source"], slots = with_slots(cell["source"], new_slot)
    for output in cell.get("outputs", []):
        data = output.get("data", {})
        if isinstance(data.get("text/vnd.mermaid"), str):  # Mermaid as an output of its own type
            text, found = with_slots(f"```mermaid\n{data['text/vnd.mermaid'].strip()}\n```\n", new_slot)
            if found:
                output["data"] = data = {"text/markdown": text}
                slots.update(found)
                continue
        if isinstance(data.get("text/markdown"), str):
            data["text/markdown"], found = with_slots(data["text/markdown"], new_slot)
            slots.update(found)
    return slots


def render(notebook: dict) -> str:
    """The page of ``notebook``, whose cells tagged ``micrograde-feedback`` hold micrograde's own HTML, and
    whose saved ``check()`` outputs have their graphs drawn."""
    prepare()
    made = renderable(notebook)
    slots = {}
    for cell in made["cells"]:
        if FEEDBACK_TAG not in cell["metadata"].get("tags", []):
            slots.update(drawn_graphs(cell))
            continue
        slot = new_slot()
        own = f'<div class="micrograde-feedback" id="{escape(cell["id"])}">{cell["source"]}</div>'
        slots[slot] = own
        for field in ("outputs", "execution_count", "attachments"):
            cell.pop(field, None)
        cell.update(cell_type="raw", source=slot, metadata={"raw_mimetype": "text/html"})
    page = body(made)
    for slot, own in slots.items():
        if page.count(slot) != 1:
            raise RuntimeError(f"the page lost the place of one of micrograde's cells ({json.dumps(slot)})")
        page = page.replace(f"<p>{slot}</p>", own) if f"<p>{slot}</p>" in page else page.replace(slot, own)
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
            '<meta name="viewport" content="width=device-width, initial-scale=1.0">\n'
            f"<title>micrograde feedback</title>\n{_READY['head']}\n</head>\n"
            '<body class="jp-Notebook" data-jp-theme-light="true" data-jp-theme-name="JupyterLab Light">\n'
            f"<main>\n{page}\n</main>\n</body>\n</html>\n")
