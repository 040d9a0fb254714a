"""What generated cases are made of: leaf names, leaf values, plain numbers and exponents.

Shared by the strategies that generate cases and the shrinker that simplifies
them, so a shrunk case is always one the search could have generated. Each
table lists the simplest first: that order also ranks failing cases
(``Case.rank``), so a report shows ``a ** 2`` at ``a = 2`` before ``a ** 0``.
"""

from __future__ import annotations

NAMES = "abc"
# Leaf values: away from 0 and 1 (where many wrong derivatives look right), at
# most 2 in size so every node stays well inside floating point.
INPUTS = (2.0, -1.5, 0.5, 1.25, -0.75, 1.5, -2.0, 0.25, -0.5, 1.75, -1.25, 0.75, -0.25, 0.3, -1.7, 1.1)
EXPONENTS = (2, 3, -1, 0.5, 0, 1, -2, 1.5)
# The second operand of a two-operand op: (a plain number, or None for an earlier node;
# whether the operands are swapped), first the simplest.
OTHER_OPERAND = ((None, False), (None, True), (2.0, False), (2.0, True), (-1.5, False), (0.5, True))
CONSTANTS = tuple(dict.fromkeys(number for number, _ in OTHER_OPERAND if number is not None))  # 2, -1.5, 0.5
