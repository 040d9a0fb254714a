"""When a number the child sent is the number expected: the one comparison every judge makes."""

from __future__ import annotations

import math

REL_TOL = 1e-6  # against the reference: far above rounding, far below any real bug


def close(x: object, y: float, tol: float = REL_TOL) -> bool:
    """Whether a received ``x`` is ``y`` up to ``tol``: a float near it, or for a non-finite
    ``y`` the very same value. Infinity is close to nothing else (``inf - y`` is infinite,
    but so is the tolerance scaled by ``|inf|``)."""
    if not isinstance(x, float):
        return False
    if not (math.isfinite(x) and math.isfinite(y)):
        return x == y or (math.isnan(x) and math.isnan(y))
    return abs(x - y) <= tol * max(1.0, abs(x), abs(y))
