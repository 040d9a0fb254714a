"""The exercise a course grades, derived from its configuration.

``Exercise`` is the one place the rest of the grader asks what is graded: the
targets in report order, each target's checks with their points and
visibility, the method a student writes for it, its time limit, and the ops
that generated expressions may use. Nothing else holds a list of targets.
"""

from __future__ import annotations

from dataclasses import dataclass

from grader.exercise import ops
from grader.exercise.cases import Check, course_checks
from grader.exercise.config import Config, TargetConfig
from grader.exercise.kinds import GIVEN_TARGETS, KINDS, Kind, Lane, Role


@dataclass(frozen=True)
class Target:
    name: str
    kind: Kind
    points: float
    checks: tuple[Check, ...]
    hidden: frozenset[str]  # ids of the checks hidden from students until release
    time_limit: float
    options: tuple[tuple[str, object], ...] = ()  # the kind's options, as the course set them
    apart: bool = False  # its reflected op (radd for add) is a target of its own: plain numbers stay on its right

    @property
    def settings(self) -> dict:
        return dict(self.options)

    @property
    def role(self) -> Role:
        """The part of the submission it grades."""
        return self.kind.role_of(self.settings)

    @property
    def op(self) -> ops.Op | None:
        return ops.OPS.get(self.name)

    def points_of(self, check: Check) -> float:
        """A target's points, spread evenly over its checks."""
        return self.points / len(self.checks)


def checks_of(target: TargetConfig, apart: bool, have: frozenset[str]) -> list[Check]:
    """A target's checks: a classic target's hand-picked ones as the course grades them (``course_checks``),
    another kind's from its options."""
    if target.name in ops.OPS or target.name in GIVEN_TARGETS:
        return course_checks(target.name, apart, have)
    return KINDS[target.kind].checks(target.name, target.settings)


class Exercise:
    """Targets, checks, points and names, all from one course configuration."""

    def __init__(self, config: Config):
        self.config = config
        graded = {t.name for t in config.targets}
        apart = {t.name for t in config.targets if ops.reflection(t.name) in graded}
        have = ops.available(graded & set(ops.OPS))
        self.targets: tuple[Target, ...] = tuple(
            Target(t.name, KINDS[t.kind], t.points, tuple(checks_of(t, t.name in apart, have)),
                   frozenset(f"{t.name}.{h}" for h in t.hidden), t.time_limit, t.options, t.name in apart)
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
        the course gives it), ``gradf``, ``Neuron`` (the class a target's option names)."""
        if target in ops.OPS:
            return ops.OPS[target].method
        chosen = self.target(target)
        role = chosen.role
        if role.what == "class" and role.setting is None and "method" in chosen.settings:
            return f"{role.key}.{chosen.settings['method']}"  # a method of a class a target's option names
        return self.config.name_of(role) if role.what == "function" or role.setting is None else target


    @property
    def roles(self) -> tuple[Role, ...]:
        """The parts of the submission this exercise grades, in the order of their first target."""
        return tuple(dict.fromkeys(t.role for t in self.targets))

    @property
    def lanes(self) -> tuple[Lane, ...]:
        """The children a grade of this exercise needs, in the order of their first target."""
        return tuple(dict.fromkeys(t.kind.lane for t in self.targets))

    def time_budget(self) -> float:
        """Wall-clock seconds all the work of one grade is given: loading, then every target in turn."""
        return self.config.load_time_limit + sum(t.time_limit for t in self.targets)
