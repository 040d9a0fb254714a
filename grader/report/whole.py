"""Whole points: how a course's points reach the routes that count whole points only.

Classroom 50's ``result.json`` holds whole numbers, and GitHub Classroom's command grader reads each
step's points with ``parseInt``. A target whose checks are worth whole points is carried check by
check, exactly. A target whose checks are not (5 points over 4 checks: 1.25 each) cannot be: it is
carried as its score rounded to whole points, half up, and its maximum as its points rounded likewise.
``carried`` does it check by check for a result written at once (Classroom 50); ``increments`` for steps
written beforehand (GitHub Classroom): the m-th passing check of the target adds
``round(m * p) - round((m - 1) * p)`` points, so that k passing checks of n earn ``round(k * p)``
whichever they are. A target whose checks the course weighs differently is carried by its rounded score
itself: ``reachable`` are the whole scores its checks can add up to, and a step passes when the target's
rounded score reaches its own.
"""

from __future__ import annotations

import math
from fractions import Fraction


def exact(points: float) -> Fraction:
    """``points`` as the course wrote them (a report's points carry at most a few decimals: 1.25, not
    1.2499999)."""
    return Fraction(repr(round(points, 6)))


def half_up(x: Fraction) -> int:
    return math.floor(x + Fraction(1, 2))


def increments(points: float, checks: int) -> list[int]:
    """What the m-th passing check of a target worth ``points`` over ``checks`` checks adds, m = 1..checks."""
    each = exact(points) / checks
    return [half_up(m * each) - half_up((m - 1) * each) for m in range(1, checks + 1)]


def reachable(points: list[float]) -> list[int]:
    """Every whole score, rounded half up, that some of the checks worth ``points`` add up to (0 left out),
    in order: the thresholds of a weighted target's steps."""
    sums = {Fraction(0)}
    for p in points:
        sums |= {s + exact(p) for s in sums}
    return sorted({half_up(s) for s in sums} - {0})


def shares(total: int, weights: list[Fraction]) -> list[int]:
    """``total`` whole points split in proportion to ``weights`` (largest remainder, the earliest first)."""
    whole = sum(weights)
    if not weights or whole == 0:
        return [0] * len(weights)
    quotas = [total * w / whole for w in weights]
    got = [math.floor(q) for q in quotas]
    order = sorted(range(len(weights)), key=lambda i: (-(quotas[i] - got[i]), i))
    for i in order[:total - sum(got)]:
        got[i] += 1
    return got


def carried(points: list[float], passed: list[bool]) -> list[tuple[int, int]]:
    """(score, max-score) in whole points of each check of one target, worth ``points``: exact where every
    check is worth whole points; else the passing checks share the target's score rounded half up and the
    failing ones the rest of its rounded points, so the target's score and maximum are its own, rounded."""
    worth = [exact(p) for p in points]
    if all(w.denominator == 1 for w in worth):
        return [(int(w) if ok else 0, int(w)) for w, ok in zip(worth, passed)]
    score = half_up(sum(w for w, ok in zip(worth, passed) if ok))
    won = iter(shares(score, [w for w, ok in zip(worth, passed) if ok]))
    lost = iter(shares(half_up(sum(worth)) - score, [w for w, ok in zip(worth, passed) if not ok]))
    return [(n, n) if ok else (0, n) for ok in passed for n in [next(won if ok else lost)]]
