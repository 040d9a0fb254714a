"""The value of one of a kind's options (``grader.exercise.kinds.Option``), checked for its type.

Each option a course sets for a target is validated as the configuration is read, so that a mistake is one
``ConfigError`` naming the key, what the option is for and what it must be; values are kept as tuples, so that
a target's configuration is hashable and its checks can be cached.
"""

from __future__ import annotations

import json
import math

from grader.errors import ConfigError
from grader.exercise import forms
from grader.exercise.calls import CallError
from grader.exercise.calls import parse as parse_call
from grader.exercise.kinds import Option


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
    if spec.type == "form" and isinstance(value, str):
        forms.parse(value, f"{key} {spec.key}", ("out", "lr"))
        return value.strip()
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
            "call": "a call, as a string", "form": "a Python expression on one line, as a string"}[spec.type]


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
