"""The shapes of tensor ops' results, as numpy defines them, on plain tuples of sizes.

Used to make tensor cases (which shapes fit together) and, in the grading process,
to apply the reference engine entry by entry (which entries of the operands make
each entry of the result): broadcasting aligns shapes from the right and stretches
a size of 1; a matrix product of ``(n, k)`` and ``(k, m)`` is ``(n, m)`` (a 1-d
operand loses its axis); a reduction along an axis drops it, a whole one leaves ``()``.
"""

from __future__ import annotations

import math

Shape = tuple[int, ...]


def broadcast(a: Shape, b: Shape) -> Shape | None:
    """The shape ``a`` and ``b`` broadcast to, or ``None`` where they do not fit."""
    found = []
    for i in range(1, max(len(a), len(b)) + 1):
        x = a[-i] if i <= len(a) else 1
        y = b[-i] if i <= len(b) else 1
        if x != y and 1 not in (x, y):
            return None
        found.append(max(x, y) if 1 in (x, y) else x)
    return tuple(reversed(found))


def source(index: int, out: Shape, shape: Shape) -> int:
    """The row-major index, in an operand of ``shape``, of the entry broadcast to row-major ``index`` of ``out``."""
    flat, stride = 0, 1
    for axis in range(1, len(shape) + 1):
        index, i = divmod(index, out[-axis])
        size = shape[-axis]
        flat += (i if size != 1 else 0) * stride
        stride *= size
    return flat


def matrix(a: Shape, b: Shape) -> Shape | None:
    """The shape of ``a.dot(b)`` for 1-d and 2-d operands, or ``None`` where the inner sizes differ."""
    if not (1 <= len(a) <= 2 and 1 <= len(b) <= 2) or a[-1] != b[0]:
        return None
    return (*a[:-1], *b[1:])


def along(shape: Shape, axis: int | None) -> Shape | None:
    """The shape left by a reduction of ``shape`` along ``axis`` (all of it for ``None``)."""
    if axis is None:
        return ()
    if not -len(shape) <= axis < len(shape):
        return None
    axis %= len(shape)
    return shape[:axis] + shape[axis + 1:]


def lines(shape: Shape, axis: int | None) -> list[list[int]]:
    """For each entry of a reduction's result (row by row), the row-major indices of the entries it reduces."""
    if axis is None:
        return [list(range(math.prod(shape)))]
    axis %= len(shape)
    outer, inner = math.prod(shape[:axis]), math.prod(shape[axis + 1:])
    return [[(o * shape[axis] + k) * inner + i for k in range(shape[axis])] for o in range(outer) for i in range(inner)]


def reshaped(shape: Shape, sizes: Shape) -> Shape | None:
    """``sizes`` if ``shape`` can be reshaped to it (the same number of entries), else ``None``."""
    return tuple(sizes) if sizes and math.prod(sizes) == math.prod(shape) else None
