"""Staff tools: batch grading and its shards, the files a course copies, the pytest plugin, ``--execute``.

They grade through ``grader.grade`` like every route; the commands reach them through the modules named here.
"""

# The modules other rooms of micrograde may import (tests/unit/test_layout.py holds them to it).
__all__ = ["adopt", "batch", "execute", "nbgrader", "scaffold", "shards", "templates"]
