"""Judging: what the child is asked for each case and the verdict on its reply.

Two oracles decide, the reference engine and finite differences (``judge``); each kind of target's way of
asking and judging is one entry of ``kinds``. The child's replies are never trusted.
"""

# The modules other rooms of micrograde may import (tests/unit/test_layout.py holds them to it).
__all__ = ["judge", "kinds"]
