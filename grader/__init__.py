"""micrograde: grades a build-micrograd-yourself submission and names its gradient bugs.

The student API is ``check``: from a notebook or a script,
``from grader import check; check(Value, train_step)`` grades your own classes and
shows the report. The course API is ``grade_file``, ``Options`` and ``load_config``:
``grade_file(Path("work.py"), Options(config=load_config(Path("micrograde.toml"))))``
returns the report that every output format is rendered from. Every error micrograde raises on
purpose is a ``MicrogradeError`` (``grader.errors``), with the exit status the command gives it.
Everything else is internal.
"""

from __future__ import annotations

from grader.errors import CheckFailed, ConfigError, InputError, MachineError, MicrogradeError, UsageError
from grader.version import __version__

TYPE_CHECKING = False  # what type checkers take as true; importing typing costs a grade ~10 ms

__all__ = ["CheckFailed", "ConfigError", "InputError", "MachineError", "MicrogradeError", "Options", "UsageError",
           "__version__", "check", "grade_file", "load_config"]

if TYPE_CHECKING:
    from pathlib import Path

    from grader.exercise.config import Config
    from grader.grade import Options
    from grader.report.model import Report
    from grader.student import Feedback


def check(*args, **kwargs) -> Feedback:
    """Grade your ``Value`` and ``train_step``: see ``grader.student.check``."""
    from grader.student import check as run

    return run(*args, **kwargs)


def grade_file(path: Path, options: Options | None = None) -> Report:
    """Grade the submission at ``path`` (a ``.py``, a notebook or a folder); see ``grader.grade.grade``."""
    from grader.grade import grade as run

    return run(path, options)


def load_config(path: Path | None) -> Config:
    """A course configuration (``micrograde.toml`` or a ``pyproject.toml``); ``None`` gives the default."""
    from grader.exercise.config import load

    return load(path)


def __getattr__(name: str):
    """``grader.Options`` without importing the grading machinery on ``import grader``."""
    if name == "Options":
        from grader.grade import Options

        return Options
    raise AttributeError(name)
