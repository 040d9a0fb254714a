"""Children started ahead of the grade, while ``micrograde grade`` is still importing itself.

A grade's first child is ready about 17 ms after it is asked for: the launcher
forks it, it enters its namespaces, confines itself, and only then loads the
submission. ``micrograde grade`` spends about 40 ms importing the rest of
micrograde after it has started the launcher (``launcher.warm_up``), and the
launcher is up about halfway through. So ``start``, called then, has a thread
wait for the launcher's namespace probe and start the two children a grade of the default course asks for (the
ops' and ``train_step``'s): they confine themselves while the imports go on.

The grade takes those children from ``workspace``;
its session adopts a child only where it would have started the same one (the
same role and CPU limit: the course is the default, or one with the same time
limits) and its submission is a file (a folder's files are copied into the
working directory before a child confines itself, which binds them). Whatever
is not adopted is ended (and its working directory removed with it), also when the
command stops before grading (``discard``, when it returns or, at the latest, at exit). Nothing of the
confinement changes: each child is started, confined and checked by
``Worker.start``, as any other, only earlier.
"""

from __future__ import annotations

import atexit
import contextlib
import threading
from collections.abc import Iterator

from grader.child.worker import Streams, Worker, cpu_limit
from grader.exercise.kinds import Lane

_STARTED: list[Ahead] = []  # at most one: a command grades once


class Ahead:
    """The children started ahead of the grade, by lane, each in a working directory of its own."""

    def __init__(self) -> None:
        self.workers: dict[Lane, Worker] = {}
        self.thread = threading.Thread(target=self.start_children, name="micrograde-ahead", daemon=True)

    def start_children(self) -> None:
        """Start the default course's children, with its limits, in the order it needs them (the ops', then
        ``train_step``'s); stop at the first that cannot start (the grade then starts its own, and says why)."""
        try:
            from grader.exercise.config import default
            from grader.exercise.targets import Exercise

            exercise = Exercise(default())
            cpu_seconds = cpu_limit(exercise.time_budget())
            for lane in exercise.lanes:
                worker = Worker(Streams(), cpu_seconds=cpu_seconds, lane=lane)
                self.workers[lane] = worker
                worker.start()
        except Exception:  # noqa: BLE001 - the grade's own start meets the same trouble, and reports it
            return

    def discard(self) -> None:
        """End every child not adopted (which removes its working directory)."""
        self.thread.join()
        for worker in self.workers.values():
            worker.close()
        self.workers.clear()


def start() -> None:
    """Start the children of a default grade in a thread (see the module's docstring); once a process."""
    if _STARTED:
        return
    ahead = Ahead()
    _STARTED.append(ahead)
    atexit.register(ahead.discard)
    ahead.thread.start()


def taken() -> Ahead | None:
    """What was started ahead, taken from this process's keeping (and from its exit handlers); ``None``
    if nothing was."""
    if not _STARTED:
        return None
    ahead = _STARTED.pop()
    atexit.unregister(ahead.discard)
    return ahead


def discard() -> None:
    """End the children started ahead and not taken by a grade, and remove their working directories: a
    command that grades in a process that goes on (a test, a script calling ``grader.cli.main``) ends
    what it started before it returns."""
    if (ahead := taken()) is not None:
        ahead.discard()


@contextlib.contextmanager
def workspace() -> Iterator[dict[Lane, Worker]]:
    """The children started ahead for a grade, by lane (the session takes those it adopts out of the
    dict); the rest are ended after."""
    ahead = taken()
    if ahead is None:
        yield {}
        return
    ahead.thread.join()
    try:
        yield ahead.workers
    finally:
        ahead.discard()
