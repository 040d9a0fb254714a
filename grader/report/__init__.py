"""The report: one ``Report`` (``model``), built once and never changed, and every format it is written in.

``formats`` lists the formats, one module each; the hand-back notebook and its ``--html`` page are here too.
"""

# The modules other rooms of micrograde may import (tests/unit/test_layout.py holds them to it).
__all__ = ["cells", "extras", "formats", "github", "handback", "identifiers", "markdown", "model", "prairielearn",
           "text", "whole"]
