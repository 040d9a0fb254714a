"""The methods of a graded class that no target reads: listed as not graded, so full marks never hide them.

A target grades one method of a class (``__mul__``, ``backward``, ``Tensor.dot``, ``SGD.step``); the class
holds more (a loss the learner added to ``Value``, ``zero_grad``, ``__lt__``). A report that lists only
top-level functions and classes would say "All checks passed" over two wrong methods of a class it graded.
So each method of a graded class is read or listed, from the source alone:

- read: a target's method (with its reflected one: ``__radd__`` is reached through ``add``'s cases), what a
  kind calls of its class (a module's ``__call__``, ``forward``, ``parameters``, ``zero_grad``), and every
  method those call in turn (``self.exp()``, ``-self`` for ``__neg__``, ``other ** -1`` for ``__pow__``);
- not listed: the plumbing every class has and nobody grades (``__init__``, ``__repr__``, ``__hash__``...),
  a stub still as handed out, and the course's own code (a method ``[submission] given`` names, such as
  ``Value.__sub__``, or one still as the course's scaffold gives it: ``return self * -1``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from grader.diagnosis.placeholder import trivial
from grader.exercise import ops
from grader.exercise.kinds import VALUE
from grader.exercise.targets import Exercise
from grader.submission.source import Submission
from grader.submission.tree import walk

# Construction, representation, attribute access, hashing and copying: what a class has whatever it computes.
PLUMBING = frozenset({
    "__init__", "__post_init__", "__new__", "__init_subclass__", "__class_getitem__", "__repr__", "__str__",
    "__format__", "__hash__", "__getattr__", "__getattribute__", "__setattr__", "__delattr__", "__dir__",
    "__copy__", "__deepcopy__", "__getstate__", "__setstate__", "__reduce__", "__reduce_ex__", "__sizeof__",
    "__del__", "__enter__", "__exit__"})
# What a kind calls of the class its target names, beside the target's own method.
READ_BY_KIND = {"module": ("__call__", "forward", "parameters", "zero_grad")}
OPERATORS = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "truediv", ast.Pow: "pow",
             ast.MatMult: "matmul", ast.FloorDiv: "floordiv", ast.Mod: "mod"}
COMPARISONS = {ast.Lt: "__lt__", ast.LtE: "__le__", ast.Gt: "__gt__", ast.GtE: "__ge__", ast.Eq: "__eq__",
               ast.NotEq: "__ne__"}
UNARY = {ast.USub: "__neg__", ast.UAdd: "__pos__", ast.Invert: "__invert__"}
SCAFFOLD = {method: body for _, method, _, body, _ in ops.GIVEN}


def covered(submission: Submission, exercise: Exercise) -> dict[str, set[str]]:
    """Each class a target grades a method of, with the methods its targets read directly."""
    found: dict[str, set[str]] = {}
    value = submission.names.get(VALUE)
    for target in exercise.targets:
        method = exercise.method(target.name)
        cls = target.settings.get("class")
        if "." in method:
            cls, _, method = method.rpartition(".")
        elif cls is None and target.kind.role is VALUE:
            cls = value
        if not isinstance(cls, str):
            continue
        names = found.setdefault(cls, set())
        names.add(method)
        if target.op_name in ops.OPS and (reflected := ops.reflection(target.op_name)) is not None:
            names.add(ops.OPS[reflected].method)
        for also in target.settings.get("also", ()) or ():
            if also in ops.OPS:
                names.add(ops.OPS[also].method)
        names.update(READ_BY_KIND.get(target.kind.name, ()))
    return found


def calls(function: ast.AST, methods: set[str]) -> set[str]:
    """The methods of ``methods`` that ``function`` reaches: called by name (``self.exp()``), or through an
    operator on one of its own arguments or on a call's result (``-self``, ``other ** -1``, ``(self * 2)``)."""
    args = {a.arg for a in function.args.args} if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) \
        else set()

    def node_like(x: ast.AST) -> bool:
        return (isinstance(x, ast.Name) and x.id in args) or isinstance(x, (ast.Call, ast.BinOp, ast.UnaryOp))

    reached = set()
    for node in walk(function):
        if isinstance(node, ast.Attribute) and node.attr in methods:
            reached.add(node.attr)
        elif isinstance(node, ast.BinOp) and type(node.op) in OPERATORS and (
                node_like(node.left) or node_like(node.right)):
            name = OPERATORS[type(node.op)]
            reached |= {f"__{name}__", f"__r{name}__"}
        elif isinstance(node, ast.UnaryOp) and type(node.op) in UNARY and node_like(node.operand):
            reached.add(UNARY[type(node.op)])
        elif isinstance(node, ast.Compare) and any(node_like(x) for x in (node.left, *node.comparators)):
            reached |= {COMPARISONS[type(op)] for op in node.ops if type(op) in COMPARISONS}
    return reached & methods


def stub(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether a function's body is only a stub's (``raise NotImplementedError``, ``pass``...), its docstring
    aside."""
    body = function.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    return bool(body) and all(trivial(statement) for statement in body)


def body_text(function: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    """A method's body without its docstring, as code (comments and spacing aside)."""
    body = function.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    return "\n".join(ast.unparse(statement) for statement in body)


def scaffold_given(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether a method is still as the course's scaffold gives it (``__neg__`` as ``return self * -1``)."""
    body = SCAFFOLD.get(function.name)
    return body is not None and body_text(function) == ast.unparse(ast.parse(body))


def unread(cls: ast.ClassDef, read: Iterable[str], given: set[str]) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    """The methods of ``cls`` that no target reads (``read``: the targets' own), in the class's order."""
    methods = {n.name: n for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    seen, stack = set(), [m for m in read if m in methods]
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        seen.add(name)
        stack += list(calls(methods[name], set(methods)) - seen)
    return [m for name, m in methods.items() if name not in seen and name not in PLUMBING
            and f"{cls.name}.{name}" not in given and not stub(m) and not scaffold_given(m)]
