"""The checks of a whole computation the course names: did the learner's ops (and function) compose?

A course gives the computation as code in its configuration (``code``): Python on the
class's nodes, whose leaves are its ``inputs`` (one node each) and whose value is the
node it binds to ``result`` (``loss``). It may call a function the learner writes
(``function``, such as ``softmax``); the code then defines the course's own version of
it, which the reference side runs. The reference side runs the code on the reference
engine, in the grading process (the course's code, never the learner's); the child
runs it on the learner's class, with the learner's function in place of the course's.
Their value and every leaf's gradient are compared at the course's points and at
generated ones.
"""

from __future__ import annotations

import ast
import functools
import math
import operator
import random
from dataclasses import dataclass
from functools import cached_property

from grader.errors import ConfigError
from grader.exercise.cases import Check, simplicity
from grader.exercise.expr import fmt_number
from grader.exercise.gradients import AtPoint
from grader.exercise.ops import OPS
from grader.exercise.words import MICROGRAD, Words

RESULT = "loss"  # the name the computation's value has when the course does not say
# Generated inputs: simple ones first (whole numbers, one of them 0), then all positive ones (a log's domain),
# then a few drawn the same on every machine.
PATTERNS = ((1.0, -2.0, 0.0, 2.0, -1.0, 3.0), (2.0, 1.0, 3.0, 0.5, 1.5, 4.0), (-1.0, 0.5, 1.0, -0.5, 2.0, -3.0))
DRAWN = 3
GENERATED = 4  # generated points a target is checked at
HUGE = 1e6  # a value or gradient beyond this is not a case a person checks by hand


@dataclass(frozen=True)
class ExpressionCase(AtPoint):
    """The course's computation at one point: its leaves' values, by the course's names."""

    statement: str  # the statement that makes the result, as the course writes it: loss = -softmax(...)[2].log()
    inputs: tuple[tuple[str, float], ...]
    functions: tuple[tuple[str, str], ...] = ()  # the engine's functions the code calls (``Words.functions``)

    @property
    def label(self) -> str:
        return self.statement

    @cached_property
    def rank(self) -> tuple:
        return tuple(simplicity(x) for x in self.point), [fmt_number(x) for x in self.point]


def result_name(options: dict) -> str:
    return options.get("result", RESULT)


def tree(code: str) -> ast.Module:
    return ast.parse(code)


def validated(options: dict) -> ast.Module:
    """The course's code, parsed and checked for what the kind needs of it; ``ConfigError`` (naming the option)
    for what it must not do: it is a computation on the class's nodes, not a program."""
    module = tree(options["code"])
    for node in ast.walk(module):
        if isinstance(node, (ast.Import, ast.ImportFrom, ast.Global, ast.Nonlocal)):
            raise ConfigError(f"code: line {node.lineno}: {type(node).__name__.lower()} is not allowed: the "
                              "computation uses its inputs' operations (and math) only")
        name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
        if name.startswith("__"):
            raise ConfigError(f"code: line {node.lineno}: {name} is not allowed: the computation uses its inputs' "
                              "operations (and math) only")
    if result_statement(module, result_name(options)) is None:
        raise ConfigError(f"code: it never assigns {result_name(options)!r}, the computation's result (the "
                          "`result` option names it)")
    function = options.get("function")
    if function is not None and definition(module, function) is None:
        raise ConfigError(f"code: it does not define {function}(), the course's own version of the learner's "
                          "function (the reference engine runs it)")
    return module


def result_statement(module: ast.Module, name: str) -> ast.stmt | None:
    """The last top-level statement that assigns ``name``."""
    found = [node for node in module.body if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign))
             and any(isinstance(t, ast.Name) and t.id == name
                     for t in (node.targets if isinstance(node, ast.Assign) else [node.target]))]
    return found[-1] if found else None


def definition(module: ast.Module, name: str) -> ast.FunctionDef | None:
    return next((node for node in module.body if isinstance(node, ast.FunctionDef) and node.name == name), None)


def learner_code(options: dict) -> str:
    """The code the child runs: the course's, without its own definition of the learner's function (its lines
    left blank, so a line of the code keeps its number)."""
    code = options["code"]
    function = options.get("function")
    if function is None:
        return code
    node = definition(tree(code), function)
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    lines = code.splitlines()
    return "\n".join("" if first <= i + 1 <= node.end_lineno else line for i, line in enumerate(lines)) + "\n"


@functools.lru_cache(maxsize=256)
def compiled(code: str):
    return compile(code, "<the course's computation>", "exec", dont_inherit=True)


def applying(op: str, Value: type):
    """The engine's function that applies ``op`` (``exp(a)``, ``add(a, b)``), on the reference engine's Values."""
    spec = OPS[op]
    how, _, name = spec.call.partition(".")

    def function(*args):
        if how == "operator":
            return getattr(operator, name)(*args)
        first = args[0] if isinstance(args[0], Value) else Value(float(args[0]))
        return getattr(first, name)(*args[1:])

    return function


@functools.lru_cache(maxsize=4096)
def reference_run(code: str, inputs: tuple[str, ...], point: tuple[float, ...], result: str,
                  functions: tuple[tuple[str, str], ...] = ()) -> tuple[float, tuple[float, ...]]:
    """The computation's value and each input's gradient on the reference engine (in the grading process: the
    course's code only), the engine's ``functions`` it calls applying their ops. Raises whatever the code raises
    where it is not defined."""
    from reference.engine import Value

    leaves = [Value(float(x)) for x in point]
    namespace = {"math": math, "Value": Value, **{name: applying(op, Value) for name, op in functions},
                 **dict(zip(inputs, leaves))}
    exec(compiled(code), namespace)  # the course's own configuration, on the reference engine
    out = namespace[result]
    if not isinstance(out, Value):
        raise TypeError(f"{result} is a {type(out).__name__}, not a Value")
    out.backward()
    return float(out.data), tuple(float(leaf.grad) for leaf in leaves)


def reference_value(code: str, inputs: tuple[str, ...], point: tuple[float, ...], result: str,
                    functions: tuple[tuple[str, str], ...] = ()) -> float:
    return reference_run(code, inputs, point, result, functions)[0]


def usable(options: dict, point: tuple[float, ...], functions: tuple[tuple[str, str], ...] = ()) -> bool:
    """Whether the computation is defined at ``point`` on the reference engine, finite and of a size a person
    reads, and stays so a step away (where finite differences look)."""
    inputs = tuple(options["inputs"])
    try:
        value, grads = reference_run(options["code"], inputs, point, result_name(options), functions)
        nudged = [reference_value(options["code"], inputs, tuple(x + 1e-6 * (i == j) * max(1.0, abs(x))
                                                                 for j, x in enumerate(point)), result_name(options),
                                  functions)
                  for i in range(len(point))]
    except Exception:  # noqa: BLE001 - the course's code outside its domain: not a point to check at
        return False
    return all(math.isfinite(x) and abs(x) < HUGE for x in (value, *grads, *nudged))


def generated_points(options: dict, course: list[tuple[float, ...]], functions: tuple[tuple[str, str], ...] = ()
                     ) -> list[tuple[float, ...]]:
    """Points beside the course's: simple ones, then drawn ones, where the computation is defined."""
    n = len(options["inputs"])
    draw = random.Random(2024 + n)
    candidates = [tuple(pattern[(i + shift) % len(pattern)] for i in range(n)) for pattern in PATTERNS
                  for shift in (0, 1)]
    candidates += [tuple(round(draw.uniform(-2.5, 2.5), 2) for _ in range(n)) for _ in range(DRAWN)]
    found: list[tuple[float, ...]] = []
    for point in candidates:
        if point not in course and point not in found and usable(options, point, functions):
            found.append(point)
        if len(found) == GENERATED:
            break
    return found


def checks(name: str, options: dict, words: Words = MICROGRAD) -> list[Check]:
    """The checks of the expression target ``name``: at the course's points (where it gives some), and at
    generated ones; the course's code may call the engine's functions (``words.functions``)."""
    functions = words.functions
    module = validated(options)
    inputs = tuple(options["inputs"])
    course = [tuple(float(x) for x in p) for p in options.get("at", ())]
    for point in course:
        if len(point) != len(inputs):
            raise ConfigError(f"at: every point needs one number for each of inputs ({', '.join(inputs)})")
        try:
            reference_run(options["code"], inputs, point, result_name(options), functions)
        except Exception as exc:  # noqa: BLE001 - the course's code, said as a configuration mistake
            hint = (" (if it is a function of the course's engine that applies an op, say so under [ops], such as "
                    f"[ops.log] call = \"{exc.name}(a)\")") if isinstance(exc, NameError) and exc.name else ""
            raise ConfigError(f"code: on the reference engine at ({', '.join(fmt_number(x) for x in point)}) it "
                              f"raises {type(exc).__name__}: {exc}{hint}") from None
    generated = generated_points(options, course, functions)
    if not generated:
        raise ConfigError("code: the computation is defined at none of the generated inputs on the reference "
                          "engine (it raises, or is not finite)")
    statement = ast.unparse(result_statement(module, result_name(options)))

    def cases(points: list[tuple[float, ...]]) -> tuple[ExpressionCase, ...]:
        return tuple(ExpressionCase(statement, tuple(zip(inputs, point)), functions) for point in points)

    found = []
    if course:
        found.append(Check(f"{name}.course-point", "the computation where the course's notebook checks it", "both",
                           cases(course)))
    found.append(Check(f"{name}.generated", "the computation at generated inputs: value and every gradient",
                       "both", cases(generated)))
    return found
