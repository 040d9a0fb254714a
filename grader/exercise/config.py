"""A course's configuration: which targets are graded, for how many points, and how.

Read from ``micrograde.toml`` or from ``[tool.micrograde]`` in a course
repository's ``pyproject.toml``, and validated here, so that every mistake is
one clear message naming the key, before anything is graded. Without a file,
the default configuration is the classic exercise (``DEFAULT``), whose
verdicts are those micrograde has always given.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from grader.child.inside.policy import FORBIDDEN_MODULES, UNSAFE_MODULES
from grader.errors import ConfigError
from grader.exercise import ops
from grader.exercise.engine import Engine
from grader.exercise.engine import parse as parse_engine
from grader.exercise.formula import FormulaError
from grader.exercise.formula import parse as parse_formula
from grader.exercise.kinds import GIVEN_TARGETS, KINDS, ROLES, Kind, Role, kind_of
from grader.exercise.knobs import SUBMISSION_DEFAULTS, TARGET_KEYS, Knobs, submission_table, target_knobs, target_points
from grader.exercise.options import option
from grader.exercise.toml import as_toml
from grader.exercise.words import MICROGRAD, Words, words_of

# The classic exercise: five methods of Value and train_step. Kept as data, not as TOML text to parse,
# so that a grade with the default reads no TOML (importing ``tomllib`` costs a grade about 3 ms);
# ``DEFAULT`` is the same written as a ``micrograde.toml`` (what ``micrograde template`` pins).
DEFAULT_TABLES: dict = {
    "targets": {"add": {"points": 15}, "mul": {"points": 15}, "pow": {"points": 15}, "tanh": {"points": 15},
                "backward": {"points": 20}, "train_step": {"points": 20}},
    "limits": {"time_limit": 10, "load_time_limit": 10, "examples": 30},
    "tolerance": {"reference": 1e-6, "finite_difference": 1e-4},
    "scaffold": {"class": "Value", "engine_file": "engine.py", "train_function": "train_step",
                 "train_file": "train.py", "notebook": "micrograd.ipynb"},
    "policy": {"allowed_modules": []},
}
# Written out only when a course sets them (``tables``): the classic exercise's file stays as it was.
OPTIONAL_TABLES: dict = {"submission": SUBMISSION_DEFAULTS}


DEFAULT = as_toml(DEFAULT_TABLES, "The classic exercise: five methods of Value and train_step.")


@dataclass(frozen=True)
class TargetConfig:
    name: str
    points: float
    hidden: tuple[str, ...]  # check names (``generated``) hidden from students until release
    time_limit: float
    kind: str  # ``grader.exercise.kinds``: an op's is "op"
    options: tuple[tuple[str, object], ...] = ()  # what the course set for the kind's options, in its order
    knobs: Knobs = Knobs()  # given, cell, checks off and weights (``grader.exercise.knobs``)

    @property
    def settings(self) -> dict:
        return dict(self.options)


@dataclass(frozen=True)
class Config:
    """A validated course configuration, every value given (a default is written once: ``DEFAULT_TABLES``)."""

    targets: tuple[TargetConfig, ...]
    time_limit: float
    load_time_limit: float
    examples: int
    reference_tolerance: float
    difference_tolerance: float
    scaffold: dict[str, str]
    allowed_modules: tuple[str, ...]  # modules beyond the standard library the course lets learners use
    source: str  # the file it was read from, or "default"
    sha256: str = ""  # ``fingerprint``: what it means, not how it is spelled
    skip_cells: tuple[str, ...] = ()  # notebook cells that are the course's (its solutions): never run nor graded
    given: tuple[str, ...] = ()  # the course's own functions and classes that no target grades
    engine: Engine = Engine()  # how the course's engine is driven, where it is not shaped like micrograd

    @property
    def class_name(self) -> str:
        return self.scaffold["class"]

    @property
    def train_function(self) -> str:
        return self.scaffold["train_function"]

    def name_of(self, role: Role) -> str:
        """The name the course gives the part ``role`` of a submission (its class, its training function, the
        function a target names)."""
        return self.scaffold[role.setting] if role.setting is not None else role.key

    def parts(self) -> dict[Role, str]:
        """Every part of a submission the course reads, by the name it gives it: the class and the training
        function, then what each target of another kind names."""
        found = {role: self.name_of(role) for role in ROLES}
        for target in self.targets:
            role = KINDS[target.kind].role_of(target.settings)
            found.setdefault(role, self.name_of(role))
        for name in self.engine.parts():
            found.setdefault(Role(name, "part"), name)
        return found

    def target(self, name: str) -> TargetConfig:
        return next(t for t in self.targets if t.name == name)

    def with_time_limit(self, seconds: float) -> Config:
        """The same configuration with every time limit set to ``seconds`` (``--timeout``)."""
        targets = tuple(replace(t, time_limit=seconds) for t in self.targets)
        changed = replace(self, targets=targets, time_limit=seconds, load_time_limit=seconds)
        return replace(changed, sha256=fingerprint(changed))

    def to_json(self) -> dict:
        return {"source": self.source, "sha256": self.sha256}


def _number(table: dict, key: str, where: str, default: float) -> float:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise ConfigError(f"{where} {key}: expected a positive number, got {value!r}")
    return float(value)


def _table(data: dict, key: str, where: str) -> dict:
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: [{key}] must be a table")
    return value


def _known_keys(table: dict, known: set[str], where: str) -> None:
    unknown = sorted(set(table) - known)
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r} (known: {', '.join(sorted(known))})")


def parse(data: dict, where: str) -> Config:
    """Validate a parsed configuration; ``ConfigError`` names the first problem's key."""
    defaults = DEFAULT_TABLES
    _known_keys(data, {"targets", "limits", "tolerance", "scaffold", "policy", "submission", "engine", "ops"}, where)
    engine = parse_engine(data.get("engine"), data.get("ops"), where)  # before the targets: an op it names is one
    limits = _table(data, "limits", where)
    _known_keys(limits, {"time_limit", "load_time_limit", "examples"}, f"{where} [limits]")
    time_limit = _number(limits, "time_limit", f"{where} [limits]", defaults["limits"]["time_limit"])
    examples = limits.get("examples", defaults["limits"]["examples"])
    if isinstance(examples, bool) or not isinstance(examples, int) or not 1 <= examples <= 100_000:
        raise ConfigError(f"{where} [limits] examples: expected a whole number from 1 to 100000, got {examples!r}")
    tolerance = _table(data, "tolerance", where)
    _known_keys(tolerance, {"reference", "finite_difference"}, f"{where} [tolerance]")
    scaffold = {**defaults["scaffold"], **_table(data, "scaffold", where)}
    _known_keys(scaffold, set(defaults["scaffold"]), f"{where} [scaffold]")
    for key, value in scaffold.items():
        if not isinstance(value, str) or not value:
            raise ConfigError(f"{where} [scaffold] {key}: expected a non-empty string, got {value!r}")
    for key in ("class", "train_function"):
        if not scaffold[key].isidentifier():
            raise ConfigError(f"{where} [scaffold] {key}: {scaffold[key]!r} is not a Python name")
    targets_table = data.get("targets", defaults["targets"])
    if not isinstance(targets_table, dict) or not targets_table:
        raise ConfigError(f"{where}: [targets] must list at least one target")
    targets = [parse_target(name, table, f"{where} [targets.{name}]", time_limit, words_of(engine))
               for name, table in targets_table.items()]
    config = Config(
        tuple(targets), time_limit,
        _number(limits, "load_time_limit", f"{where} [limits]", defaults["limits"]["load_time_limit"]), examples,
        _number(tolerance, "reference", f"{where} [tolerance]", defaults["tolerance"]["reference"]),
        _number(tolerance, "finite_difference", f"{where} [tolerance]", defaults["tolerance"]["finite_difference"]),
        scaffold, _allowed_modules(_table(data, "policy", where), f"{where} [policy]"), where)
    submission = submission_table(data.get("submission", {}), where)
    config = replace(config, skip_cells=tuple(submission["skip_cells"]), given=tuple(submission["given"]),
                     engine=engine)
    return replace(config, sha256=fingerprint(config))


def _allowed_modules(policy: dict, where: str) -> tuple[str, ...]:
    """``[policy] allowed_modules``: modules a course lets its learners use (numpy), each to be installed where
    micrograde runs; never one that computes gradients for them or is micrograde's own."""
    _known_keys(policy, {"allowed_modules"}, where)
    modules = policy.get("allowed_modules", DEFAULT_TABLES["policy"]["allowed_modules"])
    if not isinstance(modules, list) or not all(isinstance(m, str) and m.isidentifier() for m in modules):
        raise ConfigError(f"{where} allowed_modules: expected a list of module names (\"numpy\"), got {modules!r}")
    for module in modules:
        if module in FORBIDDEN_MODULES or module in UNSAFE_MODULES:
            raise ConfigError(f"{where} allowed_modules: {module} cannot be allowed (micrograde never lets a "
                              "submission use an autograd library, micrograde itself, or a module that reaches past "
                              "the interpreter)")
    return tuple(dict.fromkeys(modules))


def parse_target(name: str, table: object, key: str, time_limit: float, words: Words = MICROGRAD) -> TargetConfig:
    """One ``[targets.NAME]`` table: its kind (said, or an op's, ``backward``'s or ``train_step``'s), points,
    hidden checks, time limit, the kind's options and the course's knobs (``grader.exercise.knobs``)."""
    if not isinstance(table, dict):
        raise ConfigError(f"{key}: must be a table")
    aliased = "op" in table and table.get("kind", "op") == "op"  # an op graded under a name of its own
    kind = target_kind(name, "op" if aliased else table.get("kind"), key, table["op"] if aliased else None)
    _known_keys(table, {"points", "hidden", "time_limit", "kind", *TARGET_KEYS, *(o.key for o in kind.options)}, key)
    options = {o.key: option(table, o, key) for o in kind.options if o.key in table or o.required}
    if "reflected" in options and ops.reflection(name) is None:
        raise ConfigError(f"{key} reflected: {name} has no reflected method; only "
                          f"{', '.join(o for o in ops.OPS if ops.reflection(o))} do")
    formulas = [o for o in kind.options if o.type in ("formula", "formulas") and o.key in options]
    for o in formulas:
        for text in (options[o.key],) if o.type == "formula" else options[o.key]:
            try:
                parse_formula(text, tuple(options.get("inputs", ())))
            except FormulaError as exc:
                raise ConfigError(f"{key} {o.key}: {exc}") from None
    for o in kind.options:
        if o.type == "points" and o.key in options and any(len(p) != len(options["inputs"]) for p in options[o.key]):
            raise ConfigError(f"{key} {o.key}: every point needs one number for each of inputs "
                              f"({', '.join(options['inputs'])})")
    hidden = table.get("hidden", [])
    try:  # a kind's checks are made from its options, which they validate together (a point in its domain...)
        check_names = [c.id.removeprefix(f"{name}.") for c in kind.checks_of(name, options, words)]  # may hold dots
    except (ConfigError, ValueError) as exc:  # options each right that do not go together, said by the kind
        raise ConfigError(f"{key} {exc}") from None
    knobs = target_knobs(table, key, check_names)
    points = target_points(table, key, knobs.given)
    if not isinstance(hidden, list) or not all(isinstance(h, str) for h in hidden):
        raise ConfigError(f"{key} hidden: expected a list of check names")
    for h in hidden:
        if h not in check_names or h in knobs.off:
            raise ConfigError(f"{key} hidden: no check {h!r} (checks: "
                              f"{', '.join(c for c in check_names if c not in knobs.off)})")
    return TargetConfig(name, points, tuple(hidden), _number(table, "time_limit", key, time_limit), kind.name,
                        tuple(options.items()), knobs)


def target_kind(name: str, said: object, key: str, op: object = None) -> Kind:
    """The kind of target ``name``: its ``kind`` key, else what its name is (an op, ``backward``, ``train_step``); an
    op graded under a name of its own (``op``: a tutorial's forward pass at one cell, its gradients at another) is
    of kind ``op``."""
    if op is not None:
        if not isinstance(op, str) or not (op in ops.OPS or op in ops.ON_REQUEST):
            raise ConfigError(f"{key} op: {op!r} is not an op micrograde knows (known: {', '.join(ops.OPS)}; name an "
                              "op of your own under [ops] with its formula)")
        if op in ops.ON_REQUEST:
            ops.register(ops.ON_REQUEST[op])
        if said != "op" or name in ops.OPS or name in GIVEN_TARGETS:
            raise ConfigError(f"{key} op: a target that grades an op under a name of its own is of kind \"op\", "
                              f"and its name ({name!r}) is no op's")
        return KINDS["op"]
    if name in ops.ON_REQUEST:
        ops.register(ops.ON_REQUEST[name])  # a comparison the course grades: an op from now on
    if said is None:
        try:
            return kind_of(name)
        except KeyError:
            known = ", ".join([*ops.OPS, *GIVEN_TARGETS])
            others = ", ".join(k for k in KINDS if k not in ("op", *GIVEN_TARGETS.values()))
            raise ConfigError(f"{key}: unknown target {name!r} (known: {known}; or give it a kind: {others})") from None
    if not isinstance(said, str) or said not in KINDS:
        raise ConfigError(f"{key} kind: {said!r} is not a kind of target (known: {', '.join(KINDS)})")
    kind = KINDS[said]
    if name in ops.OPS or name in GIVEN_TARGETS:
        if kind is not kind_of(name):
            raise ConfigError(f"{key}: {name!r} is a target of the classic exercise, of kind {kind_of(name).name!r}; "
                              "give this one a name of its own")
    elif said == "op" or said in GIVEN_TARGETS.values():
        raise ConfigError(f"{key} kind: a target of kind {said!r} is named by what it grades "
                          f"({', '.join(n for n in [*ops.OPS, *GIVEN_TARGETS] if kind_of(n) is kind)})")
    return kind


def tables(config: Config) -> dict:
    """The configuration as ``micrograde.toml``'s tables, every value written out: what it means, whatever
    file (a ``pyproject.toml``'s table too) and spelling it came from (``as_toml`` writes them)."""
    submission = {"skip_cells": list(config.skip_cells), "given": list(config.given)}
    return {
        "targets": {t.name: {**({"kind": t.kind, **plain(t.settings)} if t.options else {}), **knob_tables(t),
                             **({"hidden": list(t.hidden)} if t.hidden else {}), "time_limit": t.time_limit}
                    for t in config.targets},
        "limits": {"time_limit": config.time_limit, "load_time_limit": config.load_time_limit,
                   "examples": config.examples},
        "tolerance": {"reference": config.reference_tolerance, "finite_difference": config.difference_tolerance},
        "scaffold": dict(config.scaffold),
        "policy": {"allowed_modules": list(config.allowed_modules)},
        **({"submission": submission} if submission != OPTIONAL_TABLES["submission"] else {}),
        **config.engine.tables(),
    }


def knob_tables(target: TargetConfig) -> dict:
    """A target's points and knobs as TOML writes them: only those the course set."""
    knobs = target.knobs
    return {**({"given": True} if knobs.given else {"points": target.points}),
            **({"cell": knobs.cell} if knobs.cell is not None else {}),
            **({"off": list(knobs.off)} if knobs.off else {}),
            **({"weights": dict(knobs.weights)} if knobs.weights else {})}


def plain(options: dict) -> dict:
    """A target's options as TOML writes them: lists, not the tuples they are kept as."""
    return {key: [list(v) if isinstance(v, tuple) else v for v in value] if isinstance(value, tuple) else value
            for key, value in options.items()}


def fingerprint(config: Config) -> str:
    """A hash of what a configuration means (every value after defaults), not of how it is spelled. What a course
    says of its own exercise (``grader.exercise.knobs``) counts where it says something: a course without it
    keeps the hash it always had."""
    meaning = asdict(replace(config, source="", sha256=""))
    if not meaning["allowed_modules"]:
        del meaning["allowed_modules"]  # none allowed means what it meant before there was the key
    for key in ("skip_cells", "given"):
        if not meaning[key]:
            del meaning[key]
    if not config.engine.said:
        del meaning["engine"]  # micrograd's shape means what it meant before there was the table
    for target in meaning["targets"]:
        if target["knobs"] == asdict(Knobs()):
            del target["knobs"]
    return hashlib.sha256(json.dumps(meaning, sort_keys=True).encode()).hexdigest()


@functools.cache
def default() -> Config:
    """The classic exercise's configuration (parsed once: a ``Config`` is never changed)."""
    return parse(DEFAULT_TABLES, "default")


def load(path: Path | None) -> Config:
    """The configuration at ``path`` (``micrograde.toml`` or a ``pyproject.toml``), or the default."""
    if path is None:
        return default()
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the configuration ({exc})") from None
    import tomllib  # only for a file: the default is data (``DEFAULT_TABLES``)

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc})") from None
    if path.name == "pyproject.toml":
        data = data.get("tool", {}).get("micrograde")
        if not isinstance(data, dict):
            raise ConfigError(f"{path}: no [tool.micrograde] table")
    return parse(data, str(path))


CONFIG_BYTES = 1024 * 1024  # a course configuration is a few lines; a bigger file is nobody's


def found_in(directory: Path) -> list[Path]:
    """The course configurations in ``directory``: ``micrograde.toml``, and a ``pyproject.toml`` with a
    ``[tool.micrograde]`` table (nothing is followed or read beyond ``CONFIG_BYTES``)."""
    found = []
    for name in ("micrograde.toml", "pyproject.toml"):
        path = directory / name
        try:
            if not path.is_file() or path.stat().st_size > CONFIG_BYTES:
                continue
        except OSError:
            continue
        if name == "micrograde.toml" or configures(path):
            found.append(path)
    return found


def configures(pyproject: Path) -> bool:
    """Whether a ``pyproject.toml`` has a ``[tool.micrograde]`` table (not if it cannot be read)."""
    import tomllib  # only for a file that is there: the default is data (``DEFAULT_TABLES``)

    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return False
    return isinstance(data.get("tool", {}).get("micrograde"), dict)
