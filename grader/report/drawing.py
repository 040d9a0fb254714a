"""A counterexample graph drawn as micrograd's ``draw_dot`` draws it, as SVG that opens offline.

A record per value (its label, ``data`` and ``grad``), an operation node
between a value and its operands, left to right, with arrowheads; wrong values
are filled red and say what was expected. In the SVG every node is an element
of class ``node`` and every edge one of class ``edge``, as Graphviz writes them,
so tests and other tools can read the drawing.

The layout is a layered (Sugiyama) layout from a maintained library, never by
hand: Graphviz's ``dot`` where the program is installed (it is what the lecture's
``draw_dot`` uses), and ``grandalf`` everywhere else. grandalf is pure Python
(nothing to compile, so it installs wherever micrograde does), small, and
implements the same layered layout as ``dot``, inserting a dummy vertex for
every layer an edge crosses, so that no edge runs through another node's box;
it is licensed GPLv2 or EPLv1 at the user's choice and is used as a library,
unmodified. igraph's Sugiyama layout was the other candidate: a compiled wheel
of several megabytes for the same result. grandalf draws the edges between
two layers; the drawing here keeps each edge straight inside a layer's column
and curves it only in the gap between two columns, where no node is, and
draws the repeated edges of a node used twice (``a + a``) apart.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
from dataclasses import dataclass
from html import escape

from grader.report.graph import Box, boxes

CHAR, ROW, PAD, OP_R = 7.2, 22, 8, 18
LAYER_GAP, NODE_GAP = 46, 14
WRONG, RIGHT = ("#fdd", "#c00"), ("#fff", "#333")


def svg(expr, expected: list[tuple], actual: list[tuple], engine: str | None = None) -> str:
    """The graph as an inline ``<svg>`` element. ``engine`` is ``"dot"`` or ``"grandalf"``; by default
    ``dot`` where it is installed (falling back to grandalf if it fails), grandalf elsewhere."""
    return draw(boxes(expr, expected, actual), engine)


def draw(drawn: list[Box], engine: str | None = None) -> str:
    """The graph of ``drawn`` (its values' boxes, as ``grader.report.graph`` makes them, or reads them back from
    its Mermaid) as an inline ``<svg>``: see ``svg``."""
    if engine == "dot" or (engine is None and shutil.which("dot")):
        try:
            return with_dot(drawn)
        except (OSError, subprocess.SubprocessError, ValueError):
            if engine == "dot":
                raise
    return with_grandalf(drawn)


@dataclass
class Shape:
    """A node of the drawing: a value's record or an operation's circle, with its size."""

    name: str
    fields: list[str]
    wrong: bool
    op: bool
    width: float = 0.0
    height: float = 0.0

    def __post_init__(self) -> None:
        if self.op:
            self.width = self.height = max(2 * OP_R, len(self.fields[0]) * CHAR + 2 * PAD)
        else:
            self.width = sum(len(f) * CHAR + 2 * PAD for f in self.fields)
            self.height = ROW


def shapes_and_edges(drawn: list[Box]) -> tuple[list[Shape], list[tuple[str, str]]]:
    """The nodes (a record per value, a circle per operation) and the edges, operands first."""
    shapes, edges = [], []
    for i, box in enumerate(drawn):
        shapes.append(Shape(f"v{i}", box.lines, box.wrong, False))
        if box.op is not None:
            shapes.append(Shape(f"op{i}", [box.op], False, True))
            edges.append((f"op{i}", f"v{i}"))
            edges += [(f"v{j}", f"op{i}") for j in box.inputs]
    return shapes, edges


def _dot_text(text: str) -> str:
    return re.sub(r'([{}|<>"\\])', r"\\\1", text)


def with_dot(drawn: list[Box]) -> str:
    """Graphviz's own drawing (``dot -Tsvg``) of the graph as ``draw_dot`` writes it, made inline."""
    shapes, edges = shapes_and_edges(drawn)
    lines = ['digraph { rankdir=LR; node [fontname="monospace" fontsize=11];']
    for s in shapes:
        colour = ' style=filled fillcolor="#ffdddd" color="#cc0000"' if s.wrong else ""
        if s.op:
            lines.append(f'  {s.name} [label="{_dot_text(s.fields[0])}" shape=circle];')
        else:
            label = " | ".join(_dot_text(f) for f in s.fields)
            lines.append(f'  {s.name} [label="{{ {label} }}" shape=record{colour}];')
    lines += [f"  {a} -> {b};" for a, b in edges]
    lines.append("}")
    done = subprocess.run(["dot", "-Tsvg"], input="\n".join(lines), capture_output=True, text=True, timeout=20,
                          check=True)
    start = done.stdout.find("<svg")
    if start < 0:
        raise ValueError("dot wrote no SVG")
    # Inline in a page: no XML prolog, no comments, no ids that two graphs of one page would share.
    body = re.sub(r"<!--.*?-->", "", done.stdout[start:], flags=re.S)
    return re.sub(r' id="[^"]*"', "", body).strip()


def with_grandalf(drawn: list[Box]) -> str:
    """The layered layout of grandalf, turned left to right, drawn as Graphviz draws it."""
    from grandalf.graphs import Edge, Graph, Vertex
    from grandalf.layouts import SugiyamaLayout

    shapes, edges = shapes_and_edges(drawn)
    vertices = {s.name: Vertex(s) for s in shapes}
    for v in vertices.values():  # grandalf lays out top to bottom: width and height swap
        v.view = _View(v.data.height, v.data.width)
    pairs = list(dict.fromkeys(edges))  # a node used twice is one edge to lay out, drawn twice
    links = {pair: Edge(vertices[pair[0]], vertices[pair[1]]) for pair in pairs}
    for link in links.values():
        link.view = _Path()
    graph = Graph(list(vertices.values()), list(links.values()))
    top = 0.0
    placed: dict[str, tuple[float, float]] = {}
    columns: dict[int, tuple[float, float]] = {}
    ranks: dict[str, int] = {}
    for component in graph.C:
        layout = SugiyamaLayout(component)
        layout.xspace, layout.yspace = NODE_GAP, LAYER_GAP
        layout.init_all()
        layout.draw()
        low = min(v.view.xy[0] - v.view.w / 2 for v in layout.grx)
        for v, attr in layout.grx.items():
            y, x = v.view.xy[0] - low + top, v.view.xy[1]
            half = v.view.h / 2
            left, right = columns.get(attr.rank, (x - half, x + half))
            columns[attr.rank] = (min(left, x - half), max(right, x + half))
            if hasattr(v, "data"):
                placed[v.data.name], ranks[v.data.name] = (x, y), attr.rank
        for (a, b), link in links.items():
            if link in layout.ctrls:
                link.view.bends = [(d.view.xy[1], d.view.xy[0] - low + top) for r, d in
                                   sorted(layout.ctrls[link].items()) if r not in (ranks[a], ranks[b])]
        top = max(v.view.xy[0] - low + top + v.view.w / 2 for v in layout.grx) + NODE_GAP
    bends = [point for link in links.values() for point in link.view.bends]
    shift_x = PAD - min(left for left, _ in columns.values())
    shift_y = PAD - min([placed[s.name][1] - s.height / 2 for s in shapes] + [y - NODE_GAP for _, y in bends])
    at = {name: (x + shift_x, y + shift_y) for name, (x, y) in placed.items()}
    columns = {r: (left + shift_x, right + shift_x) for r, (left, right) in columns.items()}
    by_name = {s.name: s for s in shapes}
    marker = "arrow-" + hashlib.sha1(repr(edges + [(s.name, *s.fields) for s in shapes]).encode()).hexdigest()[:10]
    parts = [f'<defs><marker id="{marker}" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" '
             'markerHeight="8" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#333"/></marker>'
             "</defs>"]
    for s in shapes:
        parts.append(_node(s, *at[s.name]))
    instances = [(a, b, k, edges.count((a, b))) for a, b in pairs for k in range(edges.count((a, b)))]
    start, end = _ports(instances, at, by_name, 0), _ports(instances, at, by_name, 1)
    for i, (a, b, k, repeats) in enumerate(instances):
        middle = (k - (repeats - 1) / 2) * 8.0
        bends = [(x + shift_x, y + shift_y + middle) for x, y in links[a, b].view.bends]
        path = _route(by_name[a], (at[a][0], at[a][1] + start[i]), by_name[b], (at[b][0], at[b][1] + end[i]),
                      bends, columns, ranks[a], ranks[b])
        parts.append(f'<g class="edge"><title>{a}&#45;&gt;{b}</title>'
                     f'<path d="{path}" fill="none" stroke="#333" marker-end="url(#{marker})"/></g>')
    width = max(x + by_name[n].width / 2 for n, (x, _) in at.items()) + PAD
    height = max([y + by_name[n].height / 2 for n, (_, y) in at.items()] + [y + shift_y + NODE_GAP for _, y in bends])
    height += PAD
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}pt" height="{height:.0f}pt" '
            f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="monospace" font-size="12" role="img">'
            f'<g class="graph">{"".join(parts)}</g></svg>')


class _View:
    """The size grandalf reads from a vertex, and where it places it."""

    def __init__(self, w: float, h: float):
        self.w, self.h, self.xy = w, h, (0.0, 0.0)


class _Path:
    """Where grandalf routes an edge; only the dummy vertices of a long edge are used."""

    def __init__(self) -> None:
        self.bends: list[tuple[float, float]] = []

    def setpath(self, points: list) -> None:
        pass


def _ports(instances: list[tuple[str, str, int, int]], at: dict[str, tuple[float, float]],
           by_name: dict[str, Shape], side: int) -> list[float]:
    """How far above or below its node's middle each edge leaves (``side`` 0) or arrives (``side`` 1): a node's
    edges on one side are spread over its height in the order of the nodes at their other ends, so that two
    edges never share an end, and the two edges of ``a + a`` are two lines."""
    offsets = [0.0] * len(instances)
    ends: dict[str, list[int]] = {}
    for i, edge in enumerate(instances):
        ends.setdefault(edge[side], []).append(i)
    for name, mine in ends.items():
        mine.sort(key=lambda i: (at[instances[i][1 - side]][1], instances[i][2]))
        step = min(8.0, by_name[name].height * 0.7 / len(mine))
        for rank, i in enumerate(mine):
            offsets[i] = (rank - (len(mine) - 1) / 2) * step
    return offsets


def _node(s: Shape, cx: float, cy: float) -> str:
    fill, stroke = WRONG if s.wrong else RIGHT
    title = f"<title>{escape(s.name)}</title>"
    if s.op:
        return (f'<g class="node">{title}<ellipse cx="{cx:.1f}" cy="{cy:.1f}" rx="{s.width / 2:.1f}" '
                f'ry="{s.height / 2:.1f}" fill="#eef" stroke="#333"/><text x="{cx:.1f}" y="{cy + 4:.1f}" '
                f'text-anchor="middle">{escape(s.fields[0])}</text></g>')
    x, y = cx - s.width / 2, cy - s.height / 2
    parts = [f'<g class="node{" wrong" if s.wrong else ""}">{title}<rect x="{x:.1f}" y="{y:.1f}" '
             f'width="{s.width:.1f}" height="{s.height:.1f}" fill="{fill}" stroke="{stroke}"/>']
    for k, field in enumerate(s.fields):
        w = len(field) * CHAR + 2 * PAD
        if k:
            parts.append(f'<line x1="{x:.1f}" y1="{y:.1f}" x2="{x:.1f}" y2="{y + s.height:.1f}" stroke="{stroke}"/>')
        colour = ' fill="#900"' if s.wrong and "expected" in field else ""
        parts.append(f'<text x="{x + w / 2:.1f}" y="{cy + 4:.1f}" text-anchor="middle"{colour}>{escape(field)}</text>')
        x += w
    return "".join(parts) + "</g>"


def _route(a: Shape, pa: tuple[float, float], b: Shape, pb: tuple[float, float], bends: list[tuple[float, float]],
           columns: dict[int, tuple[float, float]], rank_a: int, rank_b: int) -> str:
    """An edge from ``a``'s right side to ``b``'s left: straight across each column it passes through (a node's
    own, or a dummy vertex's slot, which no other node shares), an S-curve in each gap between columns."""
    stops = [(pa[0] + a.width / 2, pa[1], columns[rank_a][1])]
    for rank, (_, y) in zip(range(rank_a + 1, rank_b), bends):
        stops.append((columns[rank][0], y, columns[rank][1]))
    stops.append((columns[rank_b][0], pb[1], None))
    x0, y0, right = stops[0]
    d = [f"M{x0:.1f},{y0:.1f}", f"L{right:.1f},{y0:.1f}"]
    for left, y, next_right in stops[1:]:
        mid = (right + left) / 2
        d.append(f"C{mid:.1f},{y0:.1f} {mid:.1f},{y:.1f} {left:.1f},{y:.1f}")
        if next_right is not None:
            d.append(f"L{next_right:.1f},{y:.1f}")
            right = next_right
        y0 = y
    end = pb[0] - b.width / 2
    if end > stops[-1][0] + 0.5:
        d.append(f"L{end:.1f},{stops[-1][1]:.1f}")
    return " ".join(d)
