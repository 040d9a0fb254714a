"""The course a command grades: ``--config``, else a ``micrograde.toml`` where it runs, else the classic one."""

from __future__ import annotations

import argparse
from pathlib import Path

TYPE_CHECKING = False  # as in grader/__init__.py
if TYPE_CHECKING:
    from grader.exercise.config import Config

COURSE_FILE = Path("micrograde.toml")  # the course's configuration, where staff grade in its folder


def course_file(args: argparse.Namespace) -> Path | None:
    """The course configuration's file: ``--config``, else ``./micrograde.toml`` if there is one (a course
    repository carries it, so students and its CI grade alike)."""
    return args.config or (COURSE_FILE if COURSE_FILE.is_file() else None)


def course_config(args: argparse.Namespace) -> Config:
    """The course configuration the command line names (``ConfigError`` names a wrong key)."""
    from grader.exercise.config import load  # not before: ``grader.cli`` reads COURSE_FILE before starting children

    return load(course_file(args))
