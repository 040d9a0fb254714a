"""How deep a JSON text nests, told without parsing it: every JSON a submission hands the grader is measured
first (a notebook and its outputs, a child's reply), so that no parser ever meets more nesting than it can take.

Python's JSON parser recurses: a notebook whose output holds ten thousand nested lists ends it with a
``RecursionError``, which nothing else the grader raises resembles. Measured here, in linear time
whatever the text holds, such a text is refused with a clear error before it is parsed.
"""

from __future__ import annotations

import itertools
import re

MAX_NOTEBOOK_DEPTH = 64  # a notebook nests about 8 deep (cells, outputs, their data); its metadata a few more

# A string, or an unterminated one to the end of the text: linear time, whatever the text holds.
STRINGS = re.compile(rb'"(?:[^"\\]|\\.)*"?', re.DOTALL)
NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")


def too_deep(text: bytes, limit: int) -> bool:
    """Whether the brackets of a JSON text (those inside strings aside) nest deeper than ``limit``."""
    if text.count(b"[") + text.count(b"{") <= limit:
        return False
    brackets = STRINGS.sub(b"", text).translate(None, NOT_BRACKETS)
    return max(itertools.accumulate(1 if b in b"[{" else -1 for b in brackets)) > limit
