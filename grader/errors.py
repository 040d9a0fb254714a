"""Every error micrograde raises on purpose, in one family, each with the exit status it earns.

A command catches ``MicrogradeError`` once and exits with the error's ``exit_status``, saying its
message in one line (``grader.cli``); an error of any other class is the grader's own bug. The
statuses are the command's contract: 0 full marks, 1 points were lost, 2 input that cannot be
graded (a path, a notebook, a course configuration, the command line), 3 the grader or its machine.

A child lost while grading (``grader.child.worker.WorkerLost``) is not in the family: it is an
outcome of the submission (its code hung or died), recorded against the target it was grading,
never an error of the command.
"""

from __future__ import annotations

EXIT_OK, EXIT_LOST_POINTS, EXIT_BAD_INPUT, EXIT_INTERNAL = 0, 1, 2, 3


class MicrogradeError(Exception):
    """The root of micrograde's own errors; its message is one line, for the person who ran the command."""

    exit_status = EXIT_INTERNAL


class InputError(MicrogradeError):
    """The path cannot be graded at all: not the student's code's fault, and nothing was graded."""

    exit_status = EXIT_BAD_INPUT


class ConfigError(InputError):
    """The course configuration is invalid: the message names the key."""


class UsageError(InputError):
    """The command line asks for something that cannot be done (an option that needs a notebook...)."""


class MachineError(MicrogradeError):
    """This machine cannot start the submission's sandboxed process: never the submission's fault."""

    exit_status = EXIT_INTERNAL


class CheckFailed(MicrogradeError):
    """A check lost points (the pytest plugin's failure of a check's test item)."""

    exit_status = EXIT_LOST_POINTS
