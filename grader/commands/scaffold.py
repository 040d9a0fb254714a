"""``micrograde scaffold``: write the student files of the course's exercise."""

from __future__ import annotations

import argparse

from grader.commands.course import course_config
from grader.errors import EXIT_OK
from grader.exercise.targets import Exercise
from grader.staff.scaffold import write_scaffold


def run(args: argparse.Namespace) -> int:
    for path in write_scaffold(Exercise(course_config(args)), args.directory):
        print(path)
    return EXIT_OK
