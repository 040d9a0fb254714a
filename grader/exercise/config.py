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
from grader.exercise.calls import CallError
from grader.exercise.calls import parse as parse_call
from grader.exercise.formula import FormulaError
from grader.exercise.formula import parse as parse_formula
from grader.exercise.kinds import GIVEN_TARGETS, KINDS, ROLES, Kind, Option, Role, kind_of
from grader.exercise.knobs import SUBMISSION_DEFAULTS, TARGET_KEYS, Knobs, submission_table, target_knobs, target_points

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


def as_toml(tables: dict, heading: str) -> str:
    """``tables`` (tables of numbers and strings; ``targets`` a table of them) as a ``micrograde.toml``
    headed by the comment ``heading``: a blank line between tables, none between the targets."""
    blocks = []
    for name, table in tables.items():
        sections = [(f"{name}.{toml_key(key)}", value) for key, value in table.items()] if name == "targets" \
            else [(name, table)]
        blocks.append("".join(f"[{section}]\n" + "".join(f"{key} = {toml_value(value)}\n"
                                                          for key, value in values.items())
                              for section, values in sections))
    return f"# {heading}\n" + "\n".join(blocks)


def toml_key(key: str) -> str:
    """A key as TOML reads it back: bare where it can be, else quoted (``"SGD.step"``, a name with a dot)."""
    return key if key and all(c.isalnum() or c in "_-" for c in key) and key.isascii() else json.dumps(key)


def toml_value(value: str | int | float | bool | list | dict) -> str:
    """A string, a number, a truth value, a list of strings or numbers, or a table of numbers as TOML reads it
    back (an exponent without Python's leading zero: ``1e-6``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list) and not all(isinstance(v, str) for v in value):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, (str, list)):
        return json.dumps(value)  # a TOML basic string (and an array of them) is written as JSON writes it
    mantissa, e, exponent = repr(value).partition("e")
    return f"{mantissa}e{int(exponent)}" if e else mantissa


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
    _known_keys(data, {"targets", "limits", "tolerance", "scaffold", "policy", "submission"}, where)
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
    targets = [parse_target(name, table, f"{where} [targets.{name}]", time_limit)
               for name, table in targets_table.items()]
    config = Config(
        tuple(targets), time_limit,
        _number(limits, "load_time_limit", f"{where} [limits]", defaults["limits"]["load_time_limit"]), examples,
        _number(tolerance, "reference", f"{where} [tolerance]", defaults["tolerance"]["reference"]),
        _number(tolerance, "finite_difference", f"{where} [tolerance]", defaults["tolerance"]["finite_difference"]),
        scaffold, _allowed_modules(_table(data, "policy", where), f"{where} [policy]"), where)
    submission = submission_table(data.get("submission", {}), where)
    config = replace(config, skip_cells=tuple(submission["skip_cells"]), given=tuple(submission["given"]))
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


def parse_target(name: str, table: object, key: str, time_limit: float) -> TargetConfig:
    """One ``[targets.NAME]`` table: its kind (said, or an op's, ``backward``'s or ``train_step``'s), points,
    hidden checks, time limit, the kind's options and the course's knobs (``grader.exercise.knobs``)."""
    if not isinstance(table, dict):
        raise ConfigError(f"{key}: must be a table")
    kind = target_kind(name, table.get("kind"), key)
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
        check_names = [c.id.removeprefix(f"{name}.") for c in kind.checks(name, options)]  # a name may hold dots
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


def target_kind(name: str, said: object, key: str) -> Kind:
    """The kind of target ``name``: its ``kind`` key, else what its name is (an op, ``backward``, ``train_step``)."""
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


def option(table: dict, spec: Option, key: str) -> object:
    """The value of the kind's option ``spec`` in ``table``, checked for its type (kept as tuples: hashable)."""
    if spec.key not in table:
        raise ConfigError(f"{key} {spec.key}: missing ({spec.doc})")
    value = table[spec.key]
    if spec.type == "name" and isinstance(value, str) and value.isidentifier():
        return value
    if spec.type == "names" and isinstance(value, list) and value and all(
            isinstance(v, str) and v.isidentifier() for v in value) and len(set(value)) == len(value):
        return tuple(value)
    if spec.type == "formula" and isinstance(value, str) and value.strip():
        return value
    if spec.type == "points" and isinstance(value, list) and value and all(
            isinstance(p, list) and p and all(_finite(x) for x in p) for p in value):
        return tuple(tuple(float(x) for x in p) for p in value)
    if spec.type == "choice" and value in spec.choices:
        return value
    if spec.type == "choices" and isinstance(value, list) and all(v in spec.choices for v in value) and \
            len(set(value)) == len(value):
        return tuple(value)
    if spec.type == "flag" and isinstance(value, bool):
        return value
    if spec.type == "counts" and isinstance(value, list) and value and all(
            type(n) is int and 1 <= n <= 3 for n in value) and len(set(value)) == len(value):
        return tuple(sorted(value))
    if spec.type == "numbers" and isinstance(value, list) and value and all(_finite(x) for x in value):
        return tuple(float(x) for x in value)
    if spec.type == "number" and _finite(value) and value > 0:
        return float(value)
    if spec.type == "formulas" and isinstance(value, list) and value and all(
            isinstance(v, str) and v.strip() for v in value):
        return tuple(value)
    if spec.type == "code" and isinstance(value, str) and value.strip():
        return code_option(value, spec, key)
    if spec.type == "sizes" and isinstance(value, list) and len(value) >= 2 and all(
            type(v) is int and 1 <= v <= 64 for v in value):
        return tuple(value)
    if spec.type == "call" and isinstance(value, str):
        try:
            parse_call(value, spec.choices)
        except CallError as exc:
            raise ConfigError(f"{key} {spec.key}: {exc} ({spec.doc}), got {value!r}") from None
        return value
    raise ConfigError(f"{key} {spec.key}: expected {expected(spec)} ({spec.doc}), got {value!r}")


def expected(spec: Option) -> str:
    """What an option of ``spec``'s type must be, in words."""
    one_of = ", ".join(map(json.dumps, spec.choices))  # as TOML spells them
    return {"name": "a Python name", "names": "a list of distinct Python names",
            "formula": "a formula of the inputs, as a string", "formulas": "a list of formulas of the inputs, as "
            "strings", "points": "a list of points, each a list of numbers", "numbers": "a list of numbers",
            "number": "a positive number", "choice": f"one of {one_of}", "choices": f"a list of some of {one_of}, "
            "each once", "flag": "true or false", "counts": "a list of distinct whole numbers from 1 to 3",
            "code": "Python code, as a string", "sizes": "a list of at least two whole numbers from 1 to 64",
            "call": "a call, as a string"}[spec.type]


def code_option(value: str, spec: Option, key: str) -> str:
    """Course-given Python (a computation on the class's nodes): it must at least compile; what else a kind
    needs of it, its checks say when they are made."""
    try:
        compile(value, f"<{spec.key}>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as exc:
        where = f" (line {exc.lineno})" if getattr(exc, "lineno", None) else ""
        raise ConfigError(f"{key} {spec.key}: not valid Python{where}: {getattr(exc, 'msg', exc)}") from None
    return value


def _finite(x: object) -> bool:
    return not isinstance(x, bool) and isinstance(x, (int, float)) and math.isfinite(x)


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


def ignored(directories: list[Path], used: Config) -> list[str]:
    """Warnings for every course configuration in ``directories`` (the submission's) other than the one
    that grades (``used``): a submission never configures its own grading."""
    in_use = Path(used.source).resolve() if used.source != "default" else None
    paths = dict.fromkeys(path.resolve() for directory in directories for path in found_in(directory))
    return [f"{path.name} in the submission ({path.parent}) was ignored: the course's own configuration "
            "grades it" + (" (the pyproject.toml's [tool.micrograde] table)" if path.name == "pyproject.toml" else "")
            for path in paths if path != in_use]
