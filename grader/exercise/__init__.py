"""The exercise: what a course grades, described once as plain data, before any submission is read.

The course file read and validated (``config``), the engine it describes (``engine``, in ``forms`` that are
never run), every op (``ops``) and kind of target (``kinds``) with their checks and cases, and the
``Exercise`` they make (``targets``). Nothing here runs learner code; of the other rooms it reads only the
child's ``inside.policy`` (what a submission may not import).
"""

# The modules other rooms of micrograde may import (tests/unit/test_layout.py holds them to it).
__all__ = ["calls", "cases", "config", "expr", "expression", "forms", "formula", "gradients", "kinds", "loops",
           "modules", "names", "numeric", "ops", "optimizers", "shapes", "space", "targets", "tensorcases", "tensors",
           "words"]
