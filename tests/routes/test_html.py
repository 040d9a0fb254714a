"""``--html``: the feedback page, from notebooks as Jupyter saves them, readable offline and inert.

Parsed with ``html.parser`` (always available, unlike a headless browser): the
page must fetch nothing (no ``http`` script, stylesheet or image), draw every
counterexample graph as inline SVG, and show whatever the submission said as
text, never as markup.
"""

from __future__ import annotations

import shutil
from html.parser import HTMLParser

import nbformat
from helpers import ROOT, SOLUTION, micrograde
from recipes import run_recipe
from test_notebook import as_notebook

EXERCISE = ROOT / "exercises" / "micrograd.ipynb"
MARKUP = "<script>alert(document.cookie)</script><img src=http://evil.example/x.png>"
HOSTILE = MARKUP + " \x00\x1b[2J\ud800"  # and what no page can hold: NUL, ESC, a lone surrogate


class Page(HTMLParser):
    """The tags of a page, and what each would load."""

    def __init__(self, text: str):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def fetches(self) -> list[str]:
        return [attrs.get(key) for tag, attrs in self.tags for key in ("src", "href")
                if attrs.get(key) and tag in ("script", "link", "img", "iframe", "object", "embed", "source")]

    def count(self, tag: str) -> int:
        return sum(t == tag for t, _ in self.tags)


def saved_by_jupyter(path, source: str) -> None:
    """``source`` as a notebook, written by nbformat as Jupyter writes it (sources as lists of lines)."""
    notebook = nbformat.from_dict(as_notebook(source))
    nbformat.write(notebook, path)
    assert isinstance(__import__("json").loads(path.read_text())["cells"][2]["source"], list)


def test_html_of_the_bundled_exercise(tmp_path):
    shutil.copy(EXERCISE, tmp_path / "micrograd.ipynb")
    result = micrograde("grade", str(tmp_path / "micrograd.ipynb"), "--html", str(tmp_path / "page.html"))
    assert result.returncode == 1, result.stderr
    text = (tmp_path / "page.html").read_text()
    page = Page(text)
    assert page.fetches() == [] and page.count("script") == 0
    assert text.count('class="micrograde-feedback"') == 7  # the summary and one per target
    assert text.count("not-implemented") == 6


def test_html_draws_graphs_offline_and_escapes_the_submission(tmp_path):
    source = SOLUTION.replace("for node in reversed(topo):", "for node in topo:").replace(
        "        x = self.data\n", f"        x = self.data\n        raise ValueError({HOSTILE!r})\n", 1)
    path = tmp_path / "work.ipynb"  # the docs' name for it
    saved_by_jupyter(path, source)
    notebook = nbformat.read(path, as_version=4)
    notebook.cells.insert(0, nbformat.v4.new_markdown_cell(f"My notes {MARKUP}"))
    nbformat.write(notebook, path)
    result = run_recipe("docs/staff.md", "## Handing notebooks back", tmp_path)  # as the docs say
    assert result.returncode == 1, result.stderr
    text = (tmp_path / "graded.html").read_text()
    page = Page(text)
    assert page.fetches() == [] and page.count("script") == 0
    assert page.count("svg") >= 1 and "wrong-order" in text  # backward's counterexample, drawn inline
    assert "&lt;script&gt;alert(document.cookie)&lt;/script&gt;" in text  # tanh's crash message, as text
    assert "\\x00\\x1b[2J\\ud800" in text and "\x00" not in text and "\x1b" not in text
    assert "mermaid" not in text.split("</style>")[-1]


def test_html_of_a_notebook_that_breaks_nbformats_schema(tmp_path):
    """Cell ids off nbformat's pattern (a space, too long, repeated, micrograde's own), an output of no known
    type, a stream of the wrong type: the notebook grades, so it gets its page, with
    micrograde's cells and their anchors, and the student's cells in it."""
    import json

    notebook = nbformat.from_dict(as_notebook(SOLUTION))
    raw = json.loads(nbformat.writes(notebook))
    for cell, bad in zip(raw["cells"], ("not a valid id!", "x" * 65, "micrograde-summary", "micrograde-summary")):
        cell["id"] = bad
    raw["cells"][1]["outputs"] = [{"output_type": "hologram", "data": 7}, {"output_type": "stream", "name": 3,
                                                                          "text": ["line one\n", 2]}]
    path = tmp_path / "work.ipynb"
    path.write_text(json.dumps(raw))
    result = micrograde("grade", str(path), "--html", str(tmp_path / "page.html"))
    assert result.returncode == 0, result.stderr
    text = (tmp_path / "page.html").read_text()
    assert text.count('class="micrograde-feedback"') == 7 and text.count('id="micrograde-summary"') == 1
    assert "My micrograd" in text and "line one" in text and "hologram" not in text
