"""The exercise a course grades, derived from its configuration.

``Exercise`` is the one place the rest of the grader asks what is graded: the
targets in report order, each target's checks with their points and
visibility, the method a student writes for it, its time limit, and the ops
that generated expressions may use. Nothing else holds a list of targets.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, replace

from grader.exercise import ops
from grader.exercise.cases import Check
from grader.exercise.checks import course_checks
from grader.exercise.config import Config, TargetConfig
from grader.exercise.kinds import GIVEN_TARGETS, KINDS, Kind, Lane, Role
from grader.exercise.knobs import Knobs, weight_of
from grader.exercise.words import MICROGRAD, Words, words_of


@dataclass(frozen=True)
class Target:
    name: str
    kind: Kind
    points: float
    checks: tuple[Check, ...]
    hidden: frozenset[str]  # ids of the checks hidden from students until release
    time_limit: float
    options: tuple[tuple[str, object], ...] = ()  # the kind's options, as the course set them
    apart: bool = False  # its reflected op (radd for add) is a target of its own, or is not asked for: plain
    # numbers stay on its right
    knobs: Knobs = Knobs()  # given, cell, checks off and weights, as the course set them
    course: frozenset[str] = frozenset()  # every target of the course: what is graded (and charged) on its own
    words: Words = MICROGRAD  # what the course's engine calls a node's parts (messages, reading the learner's code)
    passes: int = 2  # backward passes a case may run one after another: 1 where the engine returns its gradients
    given_code: frozenset[str] = frozenset()  # the course's own functions and classes (``[submission] given``)

    @property
    def settings(self) -> dict:
        return dict(self.options)

    @property
    def given(self) -> bool:
        """The course's own code: graded for regressions, worth no points."""
        return self.knobs.given

    @property
    def role(self) -> Role:
        """The part of the submission it grades."""
        return self.kind.role_of(self.settings)

    @property
    def op(self) -> ops.Op | None:
        return ops.OPS.get(self.op_name)

    @property
    def op_name(self) -> str:
        """The op the target grades: its name's, or the one its ``op`` option names (``add_forward``'s ``add``)."""
        return self.settings.get("op", self.name) if self.kind.name == "op" else self.name

    def points_of(self, check: Check) -> float:
        """A check's share of the target's points: even over its checks, unless the course weighs them."""
        weights = dict(self.knobs.weights)
        name = check.id.split(".", 1)[1]
        return self.points * weight_of(weights, name) / sum(weight_of(weights, c.id.split(".", 1)[1])
                                                            for c in self.checks)


def checks_of(target: TargetConfig, apart: bool, have: frozenset[str], words: Words, stores: bool = True
              ) -> list[Check]:
    """A target's checks: a classic target's hand-picked ones as the course grades them (``course_checks``),
    another kind's from its options; those the course turned off left out. Where the engine's backward pass
    returns its gradients rather than leaving them on the nodes (not ``stores``), no case runs a second pass
    to add to the first's."""
    op = target.settings.get("op") if target.kind == "op" else None
    if op is not None:  # an op under a name of its own: its checks, named for the target
        checks = [replace(c, id=f"{target.name}.{c.id.split('.', 1)[1]}") for c in course_checks(op, apart, have)]
    elif target.name in ops.OPS or target.name in GIVEN_TARGETS:
        checks = course_checks(target.name, apart, have)
    else:
        checks = KINDS[target.kind].checks_of(target.name, target.settings, words)
    if not stores:
        checks = [replace(c, cases=tuple(case for case in c.cases if len(getattr(case, "exprs", ())) <= 1))
                  for c in checks]
        checks = [c for c in checks if c.cases or c.generated]
    return [c for c in checks if c.id.split(".", 1)[1] not in target.knobs.off]


class Exercise:
    """Targets, checks, points and names, all from one course configuration."""

    def __init__(self, config: Config):
        self.config = config
        graded = {t.name for t in config.targets}
        graded |= {t.settings["op"] for t in config.targets if t.kind == "op" and "op" in t.settings}
        apart = {t.name for t in config.targets
                 if ops.reflection(t.settings.get("op", t.name) if t.kind == "op" else t.name) in graded
                 or t.settings.get("reflected") is False}
        have = ops.available(graded & set(ops.OPS))
        words = words_of(config.engine)
        self.targets: tuple[Target, ...] = tuple(
            Target(t.name, KINDS[t.kind], t.points,
                   tuple(checks_of(t, t.name in apart, have, words, config.engine.stores_gradients)),
                   frozenset(f"{t.name}.{h}" for h in t.hidden), t.time_limit, t.options, t.name in apart, t.knobs,
                   frozenset(graded), words, 2 if config.engine.stores_gradients else 1, frozenset(config.given))
            for t in config.targets)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(t.name for t in self.targets)

    def only(self, names: set[str]) -> Exercise:
        """The same exercise grading only the targets ``names`` (checks and points as the whole course has
        them): what one stage of a notebook grades (``grader.stages``)."""
        part = copy.copy(self)
        part.targets = tuple(t for t in self.targets if t.name in names)
        return part

    def target(self, name: str) -> Target:
        return next(t for t in self.targets if t.name == name)

    @property
    def op_targets(self) -> tuple[Target, ...]:
        return tuple(t for t in self.targets if t.kind.name == "op")

    @property
    def generated_ops(self) -> tuple[str, ...]:
        """The ops generated expressions are made of: the graded ops, else the classic four."""
        graded = tuple(dict.fromkeys(t.op_name for t in self.op_targets
                                     if not ops.OPS[t.op_name].number_first and not ops.OPS[t.op_name].comparison))
        return graded or ops.CLASSIC

    def method(self, target: str) -> str:
        """What the student writes for ``target``: ``__add__``, ``backward``, ``train_step`` (the function's name
        the course gives it), ``gradf``, ``numerical_grad`` (a value a cell computes), ``Neuron`` (the class a
        target's option names), ``Tensor.__mul__``."""
        op = self.target(target).op_name if target in self.names else target
        if op in ops.OPS:
            return self.config.engine.written_for(op) or ops.OPS[op].method
        if target == "backward" and self.config.engine.backward_function() is not None:
            return self.config.engine.backward_function()  # the pass is a function of the engine's module
        chosen = self.target(target)
        if chosen.kind.written is not None:
            return chosen.kind.written(chosen.settings)
        role = chosen.role
        if role.what == "class" and role.setting is None and "method" in chosen.settings:
            return f"{role.key}.{chosen.settings['method']}"  # a method of a class a target's option names
        return self.config.name_of(role) if role.what in ("function", "value") or role.setting is None else target


    @property
    def roles(self) -> tuple[Role, ...]:
        """The parts of the submission this exercise grades, in the order of their first target."""
        return tuple(dict.fromkeys(t.role for t in self.targets))

    @property
    def lanes(self) -> tuple[Lane, ...]:
        """The children a grade of this exercise needs, in the order of their first target."""
        return tuple(dict.fromkeys(t.kind.lane for t in self.targets))

    def missing_modules(self) -> dict[str, list[str]]:
        """What the targets' kinds need that is not installed where micrograde runs: each module, with the
        targets that need it (found without importing it)."""
        needed: dict[str, list[str]] = {}
        for t in self.targets:
            for module in t.kind.modules:
                needed.setdefault(module, []).append(t.name)
        if not needed:
            return {}
        import importlib.util

        return {module: names for module, names in needed.items() if importlib.util.find_spec(module) is None}

    def time_budget(self) -> float:
        """Wall-clock seconds all the work of one grade is given: loading, then every target in turn."""
        return self.config.load_time_limit + sum(t.time_limit for t in self.targets)
