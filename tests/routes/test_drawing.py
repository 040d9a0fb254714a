"""Counterexample graphs as the lecture's ``draw_dot`` draws them, checked in a real browser.

Each graph is rendered by headless Chromium (``tests/support/browser.py``): every value
and operation is a node and every edge an edge with an arrowhead, no node
overlaps another, no edge runs through a node it does not join, and the two
edges of ``a + a`` are two lines. Both layouts are checked: grandalf's, which
works everywhere, and Graphviz's ``dot`` where it is installed.
"""

from __future__ import annotations

import os
import shutil

import pytest
from browser import Browser, graph_faults

from grader.exercise.expr import compile_sym, leaf
from grader.report.drawing import svg

a, b, c = leaf("a"), leaf("b"), leaf("c")
CASES = {
    "reused": a + a,
    "shared": ((a + a) * b + a * 2).tanh(),
    "deep": ((((a * b) + c) ** 2) * a + b * (c + 1)).tanh() + a,
}


def drawn(name: str, engine: str) -> tuple[str, int, int]:
    """The SVG of case ``name`` with the first leaf's grad wrong; and how many nodes and edges it must have."""
    expr = compile_sym(CASES[name])
    expected = [(1.5, 0.5)] * len(expr)
    actual = [(1.5, 0.25)] + expected[1:]
    ops = [n for n in expr if n[0] not in ("leaf", "const")]
    nodes = len(expr) + len(ops)
    edges = len(ops) + sum(len(n) - 1 - (n[0] == "pow") for n in ops)
    return svg(expr, expected, actual, engine=engine), nodes, edges


def engines() -> list[str]:
    if shutil.which("dot") or os.environ.get("CI") == "true":
        return ["grandalf", "dot"]
    return ["grandalf"]  # no Graphviz here: its layout is checked where it is installed


@pytest.mark.parametrize("engine", ["grandalf", "dot"])
def test_graph_markup_is_graphviz_shaped_and_self_contained(engine):
    if engine not in engines():
        pytest.skip("Graphviz's dot is not installed (apt-get install graphviz); the grandalf layout is checked")
    text, nodes, edges = drawn("shared", engine)
    assert text.startswith("<svg") and text.count('class="node') == nodes and text.count('class="edge"') == edges
    assert "http:" not in text.replace('xmlns="http://www.w3.org/2000/svg"', "").replace(
        'xmlns:xlink="http://www.w3.org/1999/xlink"', "")
    assert "grad 0.25 (expected 0.5)" in text


def test_graphs_in_a_browser(tmp_path):
    pages = []
    for engine in engines():
        for name in CASES:
            text, nodes, edges = drawn(name, engine)
            page = tmp_path / f"{engine}-{name}.html"
            page.write_text(f"<!doctype html><html><body>{text}</body></html>")
            pages.append((page, nodes, edges))
    browser = Browser()
    try:
        for page, nodes, edges in pages:
            seen = browser.render(page, page.with_suffix(".png"))
            assert seen["fetched"] == [], page.name
            [graph] = seen["graphs"]
            assert (len(graph["nodes"]), len(graph["edges"])) == (nodes, edges), page.name
            assert graph_faults(graph) == [], page.name
            assert [n["name"] for n in graph["nodes"] if n["wrong"]] == ["v0"], page.name
    finally:
        browser.close()
    print(f"screenshots of the graphs: {tmp_path}")
