"""Running a course's form (``grader.exercise.forms``) on the submission's own objects.

A form arrives as a tree of plain lists (``["call", ["attr", ["name", "Mul"], "apply"], [...], []]``):
the grading process read it from the course's configuration and never ran it. Here it runs as Python
would run the expression: operators through ``operator`` (so reflected methods are reached as Python
reaches them), names from what the grader gives (``x``, ``node``, ``grad``), then a few builtins, then
the submission's own namespaces (its modules' globals, where ``np``, ``Mul`` and ``backpropagate`` live).
"""

import builtins
import operator

OPERATORS = {"add": operator.add, "sub": operator.sub, "mul": operator.mul, "truediv": operator.truediv,
             "pow": operator.pow, "matmul": operator.matmul, "floordiv": operator.floordiv,
             "lt": operator.lt, "gt": operator.gt, "le": operator.le, "ge": operator.ge, "eq": operator.eq,
             "ne": operator.ne, "neg": operator.neg, "pos": operator.pos}
BUILTINS = {name: getattr(builtins, name) for name in ("id", "len", "float", "int", "list", "tuple", "abs", "sum")}


class FormError(Exception):
    """A form names something the submission does not have (a name, a method): said as data."""


def evaluate(tree, given, namespaces):
    """The value of the form ``tree``: ``given`` are the grader's names, ``namespaces`` the submission's."""
    kind = tree[0]
    if kind == "name":
        return lookup(tree[1], given, namespaces)
    if kind == "const":
        return tree[1]
    if kind == "attr":
        return getattr(evaluate(tree[1], given, namespaces), tree[2])
    if kind == "call":
        function = evaluate(tree[1], given, namespaces)
        args = [evaluate(a, given, namespaces) for a in tree[2]]
        return function(*args, **{k: evaluate(v, given, namespaces) for k, v in tree[3]})
    if kind == "item":
        return evaluate(tree[1], given, namespaces)[evaluate(tree[2], given, namespaces)]
    if kind in ("binop", "compare"):
        return OPERATORS[tree[1]](evaluate(tree[2], given, namespaces), evaluate(tree[3], given, namespaces))
    if kind == "unary":
        return OPERATORS[tree[1]](evaluate(tree[2], given, namespaces))
    items = [evaluate(e, given, namespaces) for e in tree[1]]
    return tuple(items) if kind == "tuple" else items


def lookup(name, given, namespaces):
    if name in given:
        return given[name]
    if name in BUILTINS:
        return BUILTINS[name]
    for namespace in namespaces:
        if name in namespace:
            return namespace[name]
    raise FormError(f"the submission defines no {name}")


def path_of(tree, name):
    """The attributes ``tree`` reads of the name ``name`` when it is no more than that, else ``None``."""
    path = []
    while tree[0] == "attr":
        path.insert(0, tree[2])
        tree = tree[1]
    return path if tree[0] == "name" and tree[1] == name and path else None


def uses(tree, name):
    """Whether the form ``tree`` uses the name ``name``."""
    kind = tree[0]
    if kind == "name":
        return tree[1] == name
    if kind == "const":
        return False
    if kind == "call":
        return uses(tree[1], name) or any(uses(a, name) for a in tree[2]) or any(uses(v, name) for _, v in tree[3])
    if kind in ("attr", "unary"):
        return uses(tree[1] if kind == "attr" else tree[2], name)
    if kind == "item":
        return uses(tree[1], name) or uses(tree[2], name)
    if kind in ("binop", "compare"):
        return uses(tree[2], name) or uses(tree[3], name)
    return any(uses(e, name) for e in tree[1])
