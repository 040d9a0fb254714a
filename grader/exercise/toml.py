"""A course configuration written as TOML that ``tomllib`` reads back to the same values: what ``micrograde
template`` pins, the course file the scaffold and the templates carry, and the classic exercise's own."""

from __future__ import annotations

import json


def as_toml(tables: dict, heading: str) -> str:
    """``tables`` (tables of numbers and strings; ``targets`` a table of them) as a ``micrograde.toml``
    headed by the comment ``heading``: a blank line between tables, none between the targets."""
    blocks = []
    for name, table in tables.items():
        sections = [(f"{name}.{toml_key(key)}", value) for key, value in table.items()] \
            if name in ("targets", "ops") else [(name, table)]
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
