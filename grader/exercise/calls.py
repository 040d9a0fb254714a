"""A call as a course writes it in its configuration: ``train_one_epoch(model, criterion, optimizer, xs, ys,
batch_size=2)``, ``SGD(params, lr=lr)``.

Training code is graded with the course's own signature, which the course
writes down as the call its notebook makes. Its arguments are names of what
the grader passes (``model``, ``xs``, ``lr``...: each kind says which it has)
or plain numbers; nothing else is accepted, and nothing of it runs as code: it
is read into a syntax tree here, and the child is sent what to pass, in order.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass

from grader.errors import ConfigError


class CallError(ConfigError, ValueError):
    """A call micrograde cannot read: the message says what is not allowed (a course configuration's mistake, in
    the one family of errors)."""


@dataclass(frozen=True)
class Call:
    """A call of ``function`` with positional ``args`` and keyword ``keywords``: each a name the grader
    passes, or a number."""

    function: str
    args: tuple[str | int | float, ...]
    keywords: tuple[tuple[str, str | int | float], ...] = ()

    @property
    def text(self) -> str:
        shown = [str(a) if isinstance(a, str) else f"{a:g}" for a in self.args]
        shown += [f"{k}={v}" if isinstance(v, str) else f"{k}={v:g}" for k, v in self.keywords]
        return f"{self.function}({', '.join(shown)})"

    def names(self) -> set[str]:
        """The names the grader must pass, and the keywords' own names."""
        return {a for a in self.args if isinstance(a, str)} | {v for _, v in self.keywords if isinstance(v, str)}

    def given(self, name: str) -> str | int | float | None:
        """What the call gives for ``name``: a keyword ``name=...``, or the name itself among the arguments."""
        found = dict(self.keywords).get(name)
        if found is not None:
            return found
        return name if name in self.args else None

    def as_request(self) -> dict:
        """The call as the child runs it: each argument ``["name", x]`` or ``["number", x]``."""
        def one(x: str | int | float) -> list:
            if isinstance(x, str) and x.startswith("*"):
                return ["unpack", x[1:]]
            return ["name", x] if isinstance(x, str) else ["number", x]
        return {"args": [one(a) for a in self.args], "keywords": [[k, one(v)] for k, v in self.keywords]}


@functools.cache
def parse(text: str, names: tuple[str, ...]) -> Call:
    """The call ``text`` whose names are among ``names``; ``CallError`` says what it may not hold."""
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as exc:
        raise CallError(f"not a Python call ({exc.msg})") from None
    if not isinstance(tree, ast.Call) or not isinstance(tree.func, ast.Name):
        raise CallError("write one call of a function or class by its name, as the course's notebook makes it")

    def argument(node: ast.expr) -> str | int | float:
        if isinstance(node, ast.Name) and node.id in names:
            return node.id
        if isinstance(node, ast.Starred) and isinstance(node.value, ast.Name) and f"*{node.value.id}" in names:
            return f"*{node.value.id}"  # the grader's numbers, one argument each (``f(*vals)``)
        number = node.operand if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) else node
        if isinstance(number, ast.Constant) and type(number.value) in (int, float):
            return ast.literal_eval(node)  # an int stays one: batch_size=2 is a count
        raise CallError(f"{ast.unparse(node)}: each argument is a number or one of {', '.join(names)}")

    if any(k.arg is None for k in tree.keywords):
        raise CallError("** is not allowed: name each keyword")
    call = Call(tree.func.id, tuple(argument(a) for a in tree.args),
                tuple((k.arg, argument(k.value)) for k in tree.keywords))
    passed = [a.lstrip("*") for a in call.args if isinstance(a, str)] + [
        v for _, v in call.keywords if isinstance(v, str)]
    if len(set(passed)) != len(passed):
        raise CallError("each name is passed once")
    return call
