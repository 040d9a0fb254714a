"""The smallest failing expression drawn as a graph: in Mermaid, and as a self-contained SVG.

Like micrograd's ``draw_dot``: a box for every value, with its data and its
gradient, and a circle for every operation; values whose data or gradient is
wrong are marked. Mermaid renders in JupyterLab and on GitHub with nothing to
install; the SVG is for pages that must open offline (``--html``), where no
script may be fetched to draw the Mermaid.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

from grader.exercise.expr import Expr, node_symbol, operands


def _fmt(x: object) -> str:
    if isinstance(x, float):
        return f"{x:.4g}"
    return str(x).replace('"', "'")


def _same(x: object, y: object) -> bool:
    return isinstance(x, float) and isinstance(y, float) and abs(x - y) <= 1e-6 * max(1.0, abs(x), abs(y))


@dataclass
class Box:
    """One value of the graph: its lines of text, whether it is wrong, and the operation that made it."""

    lines: list[str]
    wrong: bool
    op: str | None  # the operation's symbol, None for a leaf or a constant
    inputs: tuple[int, ...]


def boxes(expr: Expr, expected: list[tuple], actual: list[tuple]) -> list[Box]:
    """``expected`` and ``actual`` hold ``(data, grad)`` for every node of ``expr``."""
    drawn = []
    for i, node in enumerate(expr):
        (want_data, want_grad), (got_data, got_grad) = expected[i], actual[i]
        if node[0] == "const":
            drawn.append(Box([_fmt(node[1])], False, None, ()))
            continue
        lines = [node[1]] if node[0] == "leaf" else []
        data = f"data {_fmt(got_data)}"
        if not _same(got_data, want_data):
            data += f" (expected {_fmt(want_data)})"
        grad = f"grad {_fmt(got_grad)}"
        if not _same(got_grad, want_grad):
            grad += f" (expected {_fmt(want_grad)})"
        wrong = not (_same(got_data, want_data) and _same(got_grad, want_grad))
        op = None
        if node[0] != "leaf":
            op = node_symbol(node)
        drawn.append(Box(lines + [data, grad], wrong, op, operands(node) if op else ()))
    return drawn


def mermaid(expr: Expr, expected: list[tuple], actual: list[tuple]) -> str:
    """The graph as Mermaid flowchart source."""
    lines = ["flowchart LR"]
    for i, box in enumerate(boxes(expr, expected, actual)):
        lines.append(f'  v{i}["{"<br/>".join(box.lines)}"]' + (":::wrong" if box.wrong else ""))
        if box.op is not None:
            lines.append(f'  op{i}(("{box.op}")) --> v{i}')
            for j in box.inputs:
                lines.append(f"  v{j} --> op{i}")
    lines.append("  classDef wrong fill:#fdd,stroke:#c00,color:#600")
    return "\n".join(lines)


CHAR, LINE, PAD, GAP, OP_R = 7.2, 16, 8, 46, 16


def svg(expr: Expr, expected: list[tuple], actual: list[tuple]) -> str:
    """The graph as an inline SVG element, laid out left to right by depth; nothing to load."""
    drawn = boxes(expr, expected, actual)
    depth: list[int] = []
    for box in drawn:
        depth.append(1 + max((depth[j] for j in box.inputs), default=-1) if box.op else 0)
    width = [max(len(line) for line in box.lines) * CHAR + 2 * PAD for box in drawn]
    height = [len(box.lines) * LINE + PAD for box in drawn]
    column_width = [0.0] * (max(depth) + 1)
    for i, d in enumerate(depth):
        column_width[d] = max(column_width[d], width[i])
    x0 = [sum(column_width[:d]) + d * (2 * OP_R + 2 * GAP) + PAD for d in range(len(column_width))]
    y_next = [PAD] * len(column_width)
    where = []
    for i, d in enumerate(depth):
        where.append((x0[d], y_next[d]))
        y_next[d] += height[i] + GAP / 2
    parts = []
    for i, box in enumerate(drawn):
        x, y = where[i]
        fill, stroke = ("#fdd", "#c00") if box.wrong else ("#fff", "#333")
        parts.append(f'<rect x="{x:.0f}" y="{y:.0f}" width="{width[i]:.0f}" height="{height[i]:.0f}" rx="4" '
                     f'fill="{fill}" stroke="{stroke}"/>')
        for k, line in enumerate(box.lines):
            parts.append(f'<text x="{x + PAD:.0f}" y="{y + PAD / 2 + (k + 0.8) * LINE:.0f}">{escape(line)}</text>')
        if box.op is not None:
            cx, cy = x - GAP - OP_R, y + height[i] / 2
            parts.append(f'<circle cx="{cx:.0f}" cy="{cy:.0f}" r="{OP_R}" fill="#eef" stroke="#333"/>'
                         f'<text x="{cx:.0f}" y="{cy + 4:.0f}" text-anchor="middle">{escape(box.op)}</text>'
                         f'<line x1="{cx + OP_R:.0f}" y1="{cy:.0f}" x2="{x:.0f}" y2="{cy:.0f}" stroke="#333"/>')
            for j in box.inputs:
                jx, jy = where[j]
                parts.append(f'<line x1="{jx + width[j]:.0f}" y1="{jy + height[j] / 2:.0f}" x2="{cx - OP_R:.0f}" '
                             f'y2="{cy:.0f}" stroke="#333"/>')
    total_w = x0[-1] + column_width[-1] + PAD
    total_h = max(y_next) + PAD
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{total_w:.0f}" height="{total_h:.0f}" '
            f'font-family="monospace" font-size="12" role="img">{"".join(parts)}</svg>')
