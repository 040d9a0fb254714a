"""The smallest failing expression drawn as a graph, in Mermaid.

Like micrograd's ``draw_dot``: a box for every value, with its data and its
gradient, and a circle for every operation; values whose data or gradient is
wrong are marked. Mermaid renders in JupyterLab and on GitHub with nothing to
install.
"""

from __future__ import annotations

from grader.spec.expr import Expr, node_symbol, operands


def _fmt(x: object) -> str:
    if isinstance(x, float):
        return f"{x:.4g}"
    return str(x).replace('"', "'")


def _same(x: object, y: object) -> bool:
    return isinstance(x, float) and isinstance(y, float) and abs(x - y) <= 1e-6 * max(1.0, abs(x), abs(y))


def mermaid(expr: Expr, expected: list[tuple], actual: list[tuple]) -> str:
    """``expected`` and ``actual`` hold ``(data, grad)`` for every node of ``expr``."""
    lines = ["flowchart LR"]
    for i, node in enumerate(expr):
        (want_data, want_grad), (got_data, got_grad) = expected[i], actual[i]
        name = node[1] if node[0] == "leaf" else ""
        if node[0] == "const":
            lines.append(f'  v{i}["{_fmt(node[1])}"]')
            continue
        label = f"{name}<br/>" if name else ""
        text = f"{label}data {_fmt(got_data)}"
        if not _same(got_data, want_data):
            text += f" (expected {_fmt(want_data)})"
        text += f"<br/>grad {_fmt(got_grad)}"
        if not _same(got_grad, want_grad):
            text += f" (expected {_fmt(want_grad)})"
        wrong = not (_same(got_data, want_data) and _same(got_grad, want_grad))
        lines.append(f'  v{i}["{text}"]' + (":::wrong" if wrong else ""))
        if node[0] != "leaf":
            symbol = node_symbol(node)
            lines.append(f'  op{i}(("{symbol}")) --> v{i}')
            for j in operands(node):
                lines.append(f"  v{j} --> op{i}")
    lines.append("  classDef wrong fill:#fdd,stroke:#c00,color:#600")
    return "\n".join(lines)
