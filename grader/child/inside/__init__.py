"""What runs inside the sandboxed child process and the fork server that starts it.

These modules import only the standard library and nothing of ``grader`` (a test
proves it): the grading process compiles them and ships the code objects to the
fork server and to every child (``grader.child.shipping``), which never import
anything from the grader's installation. Everything else under ``grader/`` runs
in the grading process and never executes submission code.
"""
