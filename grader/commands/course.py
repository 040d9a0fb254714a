"""The course a command grades, as every route chooses it (``grader.course.course_for``): ``--config``, else a
course file where the command runs, else the classic exercise, unless what it grades was made for a course."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

TYPE_CHECKING = False  # as in grader/__init__.py
if TYPE_CHECKING:
    from grader.course import Course


def course(args: argparse.Namespace, submissions: Sequence[Path] = ()) -> Course:
    """The course of the command line, for ``submissions`` (``UsageError`` when they were made for a course
    it cannot know; ``ConfigError`` names a wrong key)."""
    from grader.course import course_for  # not before: ``grader.cli`` starts children before importing it

    return course_for(args.config, [Path.cwd()], submissions, flag="--config")
