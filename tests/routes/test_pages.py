"""Every HTML page micrograde writes, as a browser shows it: rendered by headless Chromium.

The hand-back of a notebook (with hostile Markdown and outputs), the ``--html``
page of a ``.py`` submission and the class summary are opened in one browser
(``tests/support/browser.py``), and the test asserts on what is on screen: headings as
elements, no literal tags, feedback cells framed and visible, every graph's
nodes and arrowheads, nothing fetched, nothing of the submission's able to
script, restyle or fake a score. Screenshots are kept under the test's
``tmp_path`` (printed with ``-s``).
"""

from __future__ import annotations

import re

import nbformat
import pytest
from browser import Browser, graph_faults
from helpers import SOLUTION, micrograde
from test_html import saved_by_jupyter

HOSTILE_MARKDOWN = [
    "# My engine\n\nIt works *mostly*:\n\n- adds\n- multiplies\n\n```python\nx = Value(2.0)\n```\n\n"
    "The derivative is $\\frac{d}{dx} x^2 = 2x$.",
    "<script>document.title = 'pwned'</script><style>.micrograde-feedback {display: none}</style>"
    "<img src=x onerror=\"document.body.innerHTML = 'hacked'\">[click](javascript:alert(1))",
    "## micrograde: 100 / 100\n\n<div class=\"micrograde-feedback\" style=\"display:block\">"
    "<h2>micrograde: 100 / 100</h2></div><img src=\"http://evil.example/x.png\">",
]
HOSTILE_OUTPUT = {"output_type": "display_data", "metadata": {}, "data": {
    "text/html": "<b>output</b><script>document.title = 'pwned'</script><style>body {display: none}</style>",
    "text/plain": "output"}}
BUGGY = SOLUTION.replace("for node in reversed(topo):", "for node in topo:")


@pytest.fixture(scope="module")
def browser():
    opened = Browser()
    yield opened
    opened.close()


def check_page(seen: dict) -> None:
    """What every page must be: self-contained, inert, no markup shown as text, graphs drawn right."""
    assert [url for url in seen["fetched"] if not url.startswith("data:")] == [] and seen["scripts"] == 0
    assert not [link for link in seen["links"] if re.match(r"\s*(javascript|https?):", link or "", re.I)
                and not link.startswith("https://jupyter")]
    assert not re.search(r"</?(h\d|p|div|script|style|span|table)\b", seen["text"]), "literal markup on the page"
    for graph in seen["graphs"]:
        assert graph["nodes"] and graph["edges"] and graph_faults(graph) == []


def test_notebook_handback_renders_the_notebook_and_stays_inert(tmp_path, browser):
    path = tmp_path / "work.ipynb"
    saved_by_jupyter(path, BUGGY)
    notebook = nbformat.read(path, as_version=4)
    for i, text in enumerate(HOSTILE_MARKDOWN):
        notebook.cells.insert(i, nbformat.v4.new_markdown_cell(text))
    notebook.cells[-1].outputs = [nbformat.from_dict(HOSTILE_OUTPUT)]
    nbformat.write(notebook, path)
    result = micrograde("grade", str(path), "--html", str(tmp_path / "graded.html"))
    assert result.returncode == 1, result.stderr
    seen = browser.render(tmp_path / "graded.html", tmp_path / "graded.png")
    print(f"screenshot: {tmp_path / 'graded.png'}")
    check_page(seen)
    assert ["H1", "My engine"] in seen["headings"] and ["H1", "My micrograd"] in seen["headings"]
    assert "adds\nmultiplies" in seen["text"] and "x = Value(2.0)" in seen["text"] and "2x$" in seen["text"]
    assert seen["title"] != "pwned" and "hacked" not in seen["text"] and seen["styles"] == 0
    assert "pwned" not in seen["text"] and "display: none" not in seen["text"]  # their code is gone, not shown
    assert seen["unsourced"] == 0  # no broken image where one was refused
    assert len(seen["feedback"]) == 7 and all(seen["shown"])  # the summary and one per target, framed
    assert seen["feedback"][0].startswith("micrograde: 84 / 100")
    assert not any("100 / 100" in text for text in seen["feedback"])  # the student's fake is not micrograde's
    assert ["H2", "micrograde: 100 / 100"] in seen["headings"]  # shown as the student's own heading, unframed
    assert len(seen["graphs"]) == 1 and "wrong-order" in seen["text"]


def test_py_submission_gets_the_same_page(tmp_path, browser):
    (tmp_path / "engine.py").write_text(BUGGY.replace("self.grad += (1 - t**2) * out.grad",
                                                      "self.grad = (1 - t**2) * out.grad"))
    result = micrograde("grade", str(tmp_path / "engine.py"), "--html", str(tmp_path / "engine.html"))
    assert result.returncode == 1, result.stderr
    seen = browser.render(tmp_path / "engine.html", tmp_path / "engine.png")
    print(f"screenshot: {tmp_path / 'engine.png'}")
    check_page(seen)
    text = seen["text"]
    assert len(seen["feedback"]) == 7 and all(seen["shown"])
    # Each target's feedback sits just above the student's own definition of it.
    for heading, definition in (("tanh: 9 / 15", "def tanh(self)"), ("backward: 4 / 20", "def backward(self)"),
                                ("train_step: 20 / 20", "def train_step(")):
        assert text.index(heading) < text.index(definition), heading
        assert "def " not in text[text.index(heading):text.index(definition)].split("micrograde feedback")[0]
    assert "grad-overwrite" in text and "wrong-order" in text and len(seen["graphs"]) >= 2


def test_feedback_refuses_a_py_file_naming_html(tmp_path):
    (tmp_path / "engine.py").write_text(SOLUTION)
    result = micrograde("grade", str(tmp_path / "engine.py"), "--feedback", str(tmp_path / "out.ipynb"))
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "--html" in result.stderr


def class_rows() -> list[tuple[str, dict]]:
    """Reports as ``micrograde batch`` keeps them: graded students with misconceptions, and the ones a TA
    must look at (a load timeout, a forbidden import, an unreadable file, a grader that failed)."""
    def graded(score: float, *diagnoses: tuple[str, str, str]) -> dict:
        return {"status": "graded", "score": score, "max_score": 100.0,
                "targets": {"add": {"score": min(score, 50.0), "max_score": 50.0},
                            "backward": {"score": max(0.0, score - 50), "max_score": 50.0}},
                "diagnoses": [{"target": t, "code": c, "message": m} for t, c, m in diagnoses]}

    return [
        ("ann", graded(100.0)),
        ("ben", graded(80.0, ("backward", "wrong-order", "backward runs a node too early"))),
        ("cat", graded(80.0, ("backward", "wrong-order", "backward runs a node too early"))),
        ("dan", graded(0.0, ("submission", "load-timeout", "loading the file took longer than 10 s"))),
        ("eve", graded(0.0, ("submission", "forbidden-import", "imports torch"),
                       ("submission", "load-error", "could not load"))),
        ("<b>fay</b>", {"status": "unreadable", "error": "not a notebook", "score": 0.0, "diagnoses": []}),
        ("gus", {"status": "grader-failed", "error": "the grading process died", "score": 0.0, "diagnoses": []}),
    ]


def test_class_summary_names_who_needs_what(tmp_path, browser):
    from grader.staff.gradebook import lms_csv
    from grader.staff.summary import summarise, summary_html, summary_markdown

    summary = summarise(class_rows())
    (tmp_path / "summary.html").write_text(summary_html(summary))
    seen = browser.render(tmp_path / "summary.html", tmp_path / "summary.png")
    print(f"screenshot: {tmp_path / 'summary.png'}")
    check_page(seen)
    text = seen["text"]
    assert "backward:wrong-order\t2\tben, cat" in text  # who is in each misconception, by name
    needs_a_look = text.split("look at these by hand")[1]
    for student, why in (("dan", "load-timeout"), ("eve", "forbidden-import"), ("<b>fay</b>", "unreadable"),
                         ("gus", "grader-failed")):
        assert f"{student}\t" in needs_a_look and why in needs_a_look, student
    assert "ben" not in needs_a_look and "ann" not in needs_a_look
    markdown = summary_markdown(summary)
    assert "| `backward:wrong-order` | 2 | ben, cat |" in markdown and "| dan | submission: load-timeout |" in markdown
    gradebook = lms_csv(class_rows(), "micrograd").splitlines()
    assert "gus,,,gus,," in gradebook and "ann,,,ann,,100" in gradebook and "dan,,,dan,,0" in gradebook


def run_in_a_kernel(path, folder) -> None:
    """The notebook at ``path`` run top to bottom in a real kernel, from ``folder``, and saved with its outputs."""
    import nbclient

    book = nbformat.read(path, as_version=4)
    nbclient.NotebookClient(book, timeout=300, kernel_name="python3", allow_errors=True,
                            resources={"metadata": {"path": str(folder)}}).execute()
    nbformat.write(book, path)


def test_a_saved_check_outputs_graphs_are_drawn_and_its_cells_named_as_the_page_shows_them(tmp_path, browser):
    """The bundled notebook with a backward() that forgets to reverse its order, run in a kernel: its check()
    cell's saved report holds the counterexample's graph as Mermaid, which the page draws (no Mermaid text
    left), beside micrograde's own feedback; every place is named as the page shows its cell, In [n]."""
    from helpers import ROOT

    book = nbformat.read(ROOT / "exercises" / "micrograd.ipynb", as_version=4)
    value, train = BUGGY.split("\n\ndef train_step")
    for cell in book.cells:
        if cell.cell_type == "code" and cell.source.startswith("class Value"):
            cell.source = "class Value" + value.split("class Value", 1)[1]
        elif cell.cell_type == "code" and cell.source.startswith("def train_step"):
            cell.source = "def train_step" + train
    path = tmp_path / "work.ipynb"
    nbformat.write(book, path)
    run_in_a_kernel(path, tmp_path)
    saved = nbformat.read(path, as_version=4).cells[-1].outputs[-1]["data"]["text/markdown"]
    assert "```mermaid\nflowchart LR" in saved  # what Jupyter drew with Mermaid's script
    value_cell = next(c for c in nbformat.read(path, as_version=4).cells if c.source.startswith("class Value"))
    result = micrograde("grade", str(path), "--html", str(tmp_path / "graded.html"))
    assert result.returncode == 1, result.stderr
    seen = browser.render(tmp_path / "graded.html", tmp_path / "graded.png")
    print(f"screenshot: {tmp_path / 'graded.png'}")
    check_page(seen)
    assert "flowchart" not in seen["text"] and "-->" not in seen["text"] and "classDef" not in seen["text"]
    assert len(seen["graphs"]) == 2  # micrograde's feedback, and the saved check() output's, drawn
    assert all(any(node["wrong"] for node in graph["nodes"]) for graph in seen["graphs"])
    where = f"(In [{value_cell.execution_count}], line "
    assert where in seen["feedback"][-2] and ", cell " not in "".join(seen["feedback"])  # backward's feedback
    assert f"In [{value_cell.execution_count}]" in seen["text"]  # the prompt the page shows beside the cell


def test_mermaid_output_of_its_own_type_is_drawn_and_other_mermaid_left_as_written(tmp_path, browser):
    """A graph micrograde wrote, saved as a ``text/vnd.mermaid`` output, is drawn; a diagram of the student's
    own (not micrograde's form) is left as the student wrote it, and nothing in either runs."""
    from grader.report.graph import mermaid

    drawing = mermaid([("leaf", "a"), ("leaf", "b"), ("mul", 0, 1)], [(2.0, -3.0), (-3.0, 2.0), (-6.0, 1.0)],
                      [(2.0, -3.0), (-3.0, 0.0), (-6.0, 1.0)])
    path = tmp_path / "work.ipynb"
    saved_by_jupyter(path, SOLUTION)
    notebook = nbformat.read(path, as_version=4)
    notebook.cells.append(nbformat.v4.new_markdown_cell("```mermaid\nsequenceDiagram\n  A->>B: hi\n```"))
    notebook.cells[-2].outputs = [nbformat.from_dict({"output_type": "display_data", "metadata": {},
                                                      "data": {"text/vnd.mermaid": drawing}})]
    nbformat.write(notebook, path)
    result = micrograde("grade", str(path), "--html", str(tmp_path / "graded.html"))
    assert result.returncode == 0, result.stderr
    seen = browser.render(tmp_path / "graded.html", tmp_path / "graded.png")
    check_page(seen)
    assert len(seen["graphs"]) == 1 and "flowchart" not in seen["text"]
    [graph] = seen["graphs"]
    assert len(graph["nodes"]) == 4 and sum(node["wrong"] for node in graph["nodes"]) == 1
    assert "sequenceDiagram" in seen["text"]
