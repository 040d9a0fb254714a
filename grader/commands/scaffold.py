"""``micrograde scaffold``: write the student files of the course's exercise, or adopt the course's own notebook
(``--adopt``: ``grader.staff.adopt``)."""

from __future__ import annotations

import argparse
import sys

from grader.commands.course import course
from grader.errors import EXIT_OK
from grader.exercise.targets import Exercise
from grader.staff.scaffold import without_stubs, write_scaffold


def run(args: argparse.Namespace) -> int:
    exercise = Exercise(course(args).config)
    if args.adopt is not None:
        from grader.staff.adopt import write_adopted

        written, notes = write_adopted(exercise, args.adopt, args.directory)
        for note in notes:
            print(f"micrograde: note: {note}", file=sys.stderr)
    else:
        written = write_scaffold(exercise, args.directory)
        if exercise.config.engine.said:
            print("micrograde: note: the course describes an engine of its own ([engine], [ops]): the files written "
                  "are of micrograd's shape; hand out the course's own engine instead, or adopt its notebook "
                  "(micrograde scaffold DIR --adopt NOTEBOOK)", file=sys.stderr)
        if missing := without_stubs(exercise):
            print(f"micrograde: note: no stub is written for {', '.join(missing)}: hand out the course's own files "
                  "for them, or adopt its notebook (micrograde scaffold DIR --adopt NOTEBOOK)", file=sys.stderr)
    for path in written:
        print(path)
    return EXIT_OK
