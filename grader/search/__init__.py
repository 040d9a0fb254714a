"""The search: generated expressions, the openings that spare a grade Hypothesis, and the shrinker.

It runs judging's verdicts over what ``strategies`` generates (``engine``) and keeps what it found for the
next grade (``replay``, ``shipped``).
"""

# The modules other rooms of micrograde may import (tests/unit/test_layout.py holds them to it).
__all__ = ["engine", "generable", "replay", "shipped"]
