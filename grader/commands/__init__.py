"""The commands of ``micrograde``, one module each: ``run(args)`` does the work and returns the exit
status. ``grader.cli`` parses the command line and dispatches here (by the command's name); the error
family (``grader.errors``) carries every other exit status up to it. ``course`` is theirs alone: how a
command names the course it grades by.
"""

# The modules other rooms of micrograde may import (tests/unit/test_layout.py holds them to it): one a command.
__all__ = ["batch", "batch_merge", "grade", "result", "scaffold", "template"]
