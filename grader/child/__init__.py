"""The child: the only place a learner's code runs, and the sandbox's boundary.

``inside`` is shipped as code into the confined child and the fork server and imports nothing of the grader;
the grading process reaches it only through ``inside.policy`` (what a submission may not import or reach).
The other modules run in the grading process: the children of a submission (``session``), started ahead
(``ahead``), their pipes (``worker``), the fork server (``launcher``) and the confinement's plan (``sandbox``).
"""

# The modules other rooms of micrograde may import (tests/unit/test_layout.py holds them to it).
__all__ = ["ahead", "inside", "launcher", "sandbox", "session", "worker", "workdirs"]
