"""The names learners give the parts of a node, beside the exercise's own.

The exercise keeps a node's operands in ``_prev``; real engines also write
``_children``, ``prev``, ``parents``, ``inputs``... The child looks for them
there when it learns how to make nodes of a class (it is sent these names with
the submission to load), and the grading process reads a ``backward()``'s
traversal by them (``grader.diagnosis.syntax``, ``grader.diagnosis.traversal``).
"""

CHILDREN_NAMES = ("_prev", "_children", "prev", "children", "parents", "_parents", "inputs", "_inputs")
