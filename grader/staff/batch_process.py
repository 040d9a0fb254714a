"""A batch worker: grades the submissions it is given on stdin, one JSON line each way.

Its stdout is kept for replies only; anything else that prints goes to stderr.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path


def main() -> None:
    from grader.child import launcher

    launcher.warm_up()  # the fork server starts while the rest is imported (see ``warm_up``)
    from grader.errors import InputError
    from grader.exercise.config import load
    from grader.grade import Options, grade
    from grader.staff.batch import failure

    replies = os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="utf-8")
    sys.stdout = sys.stderr
    for line in sys.stdin:
        task = json.loads(line)
        try:
            config = load(Path(task["config"]) if task["config"] else None)
            # Each entry is one student: the files beside it are other students' work.
            reply = grade(Path(task["path"]), Options(config, task["timeout"], audience="staff"),
                          siblings=False).to_json()
        except InputError as exc:
            reply = failure("unreadable", str(exc))
        except Exception as exc:  # the grader's own failure, recorded for this student only
            reply = failure("grader-failed", f"{type(exc).__name__}: {exc}")
        replies.write(json.dumps(reply) + "\n")
        replies.flush()


if __name__ == "__main__":
    main()
