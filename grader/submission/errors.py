"""The one error a submission's input can cause before anything runs."""


class InputError(Exception):
    """The path cannot be graded at all (exit status 2): not the student's code's fault."""
