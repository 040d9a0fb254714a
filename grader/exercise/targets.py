"""The exercise a course grades, derived from its configuration.

``Exercise`` is the one place the rest of the grader asks what is graded: the
targets in report order, each target's checks with their points and
visibility, the method a student writes for it, its time limit, and the ops
that generated expressions may use. Nothing else holds a list of targets.
"""

from __future__ import annotations

from dataclasses import dataclass

from grader.exercise import ops
from grader.exercise.cases import Check, checks_for
from grader.exercise.config import Config
from grader.exercise.kinds import Kind, Lane, Role, kind_of


@dataclass(frozen=True)
class Target:
    name: str
    kind: Kind
    points: float
    checks: tuple[Check, ...]
    hidden: frozenset[str]  # ids of the checks hidden from students until release
    time_limit: float

    @property
    def op(self) -> ops.Op | None:
        return ops.OPS.get(self.name)

    def points_of(self, check: Check) -> float:
        """A target's points, spread evenly over its checks."""
        return self.points / len(self.checks)


class Exercise:
    """Targets, checks, points and names, all from one course configuration."""

    def __init__(self, config: Config):
        self.config = config
        self.targets: tuple[Target, ...] = tuple(
            Target(t.name, kind_of(t.name), t.points, tuple(checks_for(t.name)),
                   frozenset(f"{t.name}.{h}" for h in t.hidden), t.time_limit)
            for t in config.targets)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(t.name for t in self.targets)

    def target(self, name: str) -> Target:
        return next(t for t in self.targets if t.name == name)

    @property
    def op_targets(self) -> tuple[Target, ...]:
        return tuple(t for t in self.targets if t.kind.name == "op")

    @property
    def generated_ops(self) -> tuple[str, ...]:
        """The ops generated expressions are made of: the graded ops, else the classic four."""
        graded = tuple(t.name for t in self.op_targets if not ops.OPS[t.name].number_first)
        return graded or ops.CLASSIC

    def method(self, target: str) -> str:
        """What the student writes for ``target``: ``__add__``, ``backward``, ``train_step`` (the function's name
        the course gives it)."""
        if target in ops.OPS:
            return ops.OPS[target].method
        role = kind_of(target).role
        return self.config.name_of(role) if role.what == "function" else target

    @property
    def roles(self) -> tuple[Role, ...]:
        """The parts of the submission this exercise grades, in the order of their first target."""
        return tuple(dict.fromkeys(t.kind.role for t in self.targets))

    @property
    def lanes(self) -> tuple[Lane, ...]:
        """The children a grade of this exercise needs, in the order of their first target."""
        return tuple(dict.fromkeys(t.kind.lane for t in self.targets))

    def time_budget(self) -> float:
        """Wall-clock seconds all the work of one grade is given: loading, then every target in turn."""
        return self.config.load_time_limit + sum(t.time_limit for t in self.targets)
