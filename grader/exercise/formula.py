"""A course's function of a few numbers, written as a formula: ``a**2 * c - cos(2*b) + 3.0/c``.

A gradient the learner computes (by hand, or numerically) is of a function the
course gives. The course writes it in its configuration as a Python expression
of the inputs, with numbers, ``+ - * / **`` and ``sin cos tan exp log sqrt tanh``
(bare, or as ``math.sin``); nothing else is accepted, and nothing of it runs as
code in the grading process: it is read into a syntax tree and evaluated by this
module. Its derivatives are exact (forward-mode dual numbers, one pass per input),
so they are the reference a learner's gradient is compared with; a central
difference of the same formula is the second oracle.
"""

from __future__ import annotations

import ast
import functools
import math
from collections.abc import Callable
from dataclasses import dataclass

from grader.errors import ConfigError

BINARY = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)
FUNCTIONS = ("sin", "cos", "tan", "exp", "log", "sqrt", "tanh")


class FormulaError(ConfigError, ValueError):
    """A formula micrograde cannot read: the message says what is not allowed (a course configuration's
    mistake, in the one family of errors; a ``ValueError`` to code that evaluates formulas)."""


@dataclass(frozen=True)
class Dual:
    """A number and its derivative along one input."""

    value: float
    slope: float = 0.0

    def __add__(self, other: Dual) -> Dual:
        return Dual(self.value + other.value, self.slope + other.slope)

    def __sub__(self, other: Dual) -> Dual:
        return Dual(self.value - other.value, self.slope - other.slope)

    def __mul__(self, other: Dual) -> Dual:
        return Dual(self.value * other.value, self.slope * other.value + self.value * other.slope)

    def __truediv__(self, other: Dual) -> Dual:
        return Dual(self.value / other.value,
                    (self.slope * other.value - self.value * other.slope) / (other.value * other.value))

    def __pow__(self, other: Dual) -> Dual:
        value = self.value ** other.value
        if isinstance(value, complex):
            raise ValueError("a negative number to a fractional power")
        slope = other.value * self.value ** (other.value - 1) * self.slope if self.slope else 0.0
        if other.slope:
            slope += value * math.log(self.value) * other.slope
        return Dual(value, slope)

    def __neg__(self) -> Dual:
        return Dual(-self.value, -self.slope)


def _derivative(name: str, x: float, fx: float) -> float:
    return {"sin": math.cos(x), "cos": -math.sin(x), "tan": 1.0 + fx * fx, "exp": fx, "log": 1.0 / x,
            "sqrt": 0.5 / fx if fx else math.inf, "tanh": 1.0 - fx * fx}[name]


def _apply(name: str, x: Dual) -> Dual:
    fx = getattr(math, name)(x.value)
    return Dual(fx, _derivative(name, x.value, fx) * x.slope if x.slope else 0.0)


@dataclass(frozen=True)
class Formula:
    """A course's function of ``inputs``, read from ``text``."""

    text: str
    inputs: tuple[str, ...]
    tree: ast.expr

    def __call__(self, *point: float) -> float:
        return self._evaluate(dict(zip(self.inputs, (Dual(float(x)) for x in point)))).value

    def gradient(self, *point: float) -> tuple[float, ...]:
        """Every partial derivative at ``point``, exact up to rounding; ``ValueError``/``ArithmeticError`` where
        the function is not defined."""
        return tuple(self._evaluate({name: Dual(float(x), float(i == j)) for j, (name, x)
                                     in enumerate(zip(self.inputs, point))}).slope for i in range(len(self.inputs)))

    def central_difference(self, *point: float) -> tuple[float, ...]:
        """Every partial derivative at ``point`` by a central difference of the formula: the second oracle."""
        found = []
        for i, x in enumerate(point):
            h = 1e-6 * max(1.0, abs(x))
            up, down = list(point), list(point)
            up[i], down[i] = x + h, x - h
            found.append((self(*up) - self(*down)) / (2 * h))
        return tuple(found)

    def _evaluate(self, values: dict[str, Dual]) -> Dual:
        return _evaluate(self.tree, values)


def _evaluate(node: ast.expr, values: dict[str, Dual]) -> Dual:
    if isinstance(node, ast.Constant):
        return Dual(float(node.value))
    if isinstance(node, ast.Name):
        return values[node.id]
    if isinstance(node, ast.UnaryOp):
        operand = _evaluate(node.operand, values)
        return -operand if isinstance(node.op, ast.USub) else operand
    if isinstance(node, ast.BinOp):
        left, right = _evaluate(node.left, values), _evaluate(node.right, values)
        operation: Callable[[Dual, Dual], Dual] = {
            ast.Add: Dual.__add__, ast.Sub: Dual.__sub__, ast.Mult: Dual.__mul__, ast.Div: Dual.__truediv__,
            ast.Pow: Dual.__pow__}[type(node.op)]
        return operation(left, right)
    assert isinstance(node, ast.Call)
    return _apply(function_name(node.func), _evaluate(node.args[0], values))


def function_name(func: ast.expr) -> str:
    return func.attr if isinstance(func, ast.Attribute) else func.id


@functools.cache
def parse(text: str, inputs: tuple[str, ...]) -> Formula:
    """The formula ``text`` of ``inputs`` (read once a process); ``FormulaError`` says what it may not hold."""
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as exc:
        raise FormulaError(f"not a Python expression ({exc.msg})") from None
    for node in ast.walk(tree):
        allowed = (isinstance(node, (ast.Constant, ast.UnaryOp, ast.BinOp, ast.Call, ast.Name, ast.Load,
                                     ast.Attribute, ast.USub, ast.UAdd, *BINARY)))
        if not allowed:
            raise FormulaError(f"{type(node).__name__} is not allowed: numbers, {', '.join(inputs)}, "
                               f"+ - * / ** and {', '.join(FUNCTIONS)} only")
        if isinstance(node, ast.Constant) and (isinstance(node.value, bool) or
                                               not isinstance(node.value, (int, float))):
            raise FormulaError(f"{node.value!r} is not a number")
        if isinstance(node, ast.Call) and (node.keywords or len(node.args) != 1 or not _known(node.func)):
            raise FormulaError(f"{ast.unparse(node)}: only {', '.join(FUNCTIONS)} of one argument")
        if isinstance(node, ast.Attribute) and not _known(node):
            raise FormulaError(f"{ast.unparse(node)} is not allowed")
        if isinstance(node, ast.Name) and node.id not in inputs and not _is_function(node, tree):
            raise FormulaError(f"{node.id} is not one of its inputs ({', '.join(inputs)})")
    return Formula(text, inputs, tree)


def _known(func: ast.expr) -> bool:
    if isinstance(func, ast.Name):
        return func.id in FUNCTIONS
    return (isinstance(func, ast.Attribute) and func.attr in FUNCTIONS and isinstance(func.value, ast.Name)
            and func.value.id in ("math", "np", "numpy"))


def _is_function(name: ast.Name, tree: ast.expr) -> bool:
    """Whether ``name`` is a function's name in a call (``sin``), or the module of one (``math`` in ``math.sin``)."""
    return any(isinstance(node, ast.Call) and (node.func is name or (isinstance(node.func, ast.Attribute)
                                                                    and node.func.value is name))
               for node in ast.walk(tree))
