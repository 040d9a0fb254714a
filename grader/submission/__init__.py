"""The submission: a ``.py`` file, a notebook or a folder read into sources without running anything.

What can be learnt from the text alone lives here (its shape, its classes, what does not compile, the course
a notebook carries, the cells a target reads); running it is the child's.
"""

# The modules other rooms of micrograde may import (tests/unit/test_layout.py holds them to it).
__all__ = ["broken", "carried", "cells", "comparison", "nesting", "notebook", "shape", "siblings", "source", "tree"]
