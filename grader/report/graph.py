"""The smallest failing expression as a graph: what each value shows, and the graph in Mermaid.

Like micrograd's ``draw_dot``: a box for every value, with its data and its
gradient, and a circle for every operation; values whose data or gradient is
wrong are marked. Mermaid renders in JupyterLab and on GitHub with nothing to
install; pages that must open offline (``--html``), where no script may be
fetched to draw the Mermaid, get the SVG of ``grader.report.drawing``.
"""

from __future__ import annotations

from dataclasses import dataclass

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
