"""How a course writes one step of its own engine: a *form*, a short Python expression read as data.

A course whose engine is not shaped like micrograd says how to drive it in its configuration
(``grader.exercise.engine``): ``Scalar(x)`` makes a leaf, ``history.inputs`` holds a node's operands,
``backpropagate(out, 1.0)`` starts a backward pass, ``Mul.apply(a, b)`` applies an op. Each is parsed
here into a small tree of plain lists, and nothing of it runs in the grading process: the grading child
interprets the tree (``grader.child.inside.forms``) against the submission's own names. Only what such a
step needs is accepted: names, attributes, calls, subscripts, literals, arithmetic, one comparison,
tuples and lists; never a dunder attribute, a lambda, a comprehension or an assignment.
"""

from __future__ import annotations

import ast

from grader.errors import ConfigError

OPERATORS = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "truediv", ast.Pow: "pow",
             ast.MatMult: "matmul", ast.FloorDiv: "floordiv"}
UNARY = {ast.USub: "neg", ast.UAdd: "pos"}
COMPARISONS = {ast.Lt: "lt", ast.Gt: "gt", ast.LtE: "le", ast.GtE: "ge", ast.Eq: "eq", ast.NotEq: "ne"}
# What a form may call beside the submission's own names (a node's id, a gradient's list).
BUILTINS = ("id", "len", "float", "int", "list", "tuple", "abs", "sum")
MAX_LENGTH = 300  # a form is one short expression: a longer one is not a step of an engine


def parse(text: object, key: str, names: tuple[str, ...], path_of: str | None = None) -> tuple:
    """The form ``text`` as a tree of tuples; ``ConfigError`` naming ``key`` for anything else.

    ``names`` are the names the form may use that the grader gives (``x``, ``node``, ``grad``); every
    other name is the submission's. With ``path_of``, a bare attribute path (``history.inputs``) is read
    as one of that name (``node.history.inputs``)."""
    if not isinstance(text, str) or not text.strip() or len(text) > MAX_LENGTH or "\n" in text:
        raise ConfigError(f"{key}: expected a short Python expression on one line, such as "
                          f"{EXAMPLES.get(key.rpartition(' ')[2], 'node.data')!r}, got {text!r}")
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as exc:
        raise ConfigError(f"{key}: {text!r} is not a Python expression ({exc.msg})") from None
    if path_of is not None and is_path(tree) and root_name(tree) not in names:
        tree = prefixed(tree, path_of)
    return converted(tree, key, text)


EXAMPLES = {"leaf": "Scalar(x)", "value": "data", "grad": "grad", "operands": "history.inputs",
            "backward": "out.backward()", "step": "node.chain_rule(grad)", "local": "node.parents",
            "call": "Mul.apply(a, b)"}


def is_path(tree: ast.expr) -> bool:
    """Whether ``tree`` is a name or a chain of attributes of one (``history.inputs``)."""
    while isinstance(tree, ast.Attribute):
        tree = tree.value
    return isinstance(tree, ast.Name)


def root_name(tree: ast.expr) -> str:
    while isinstance(tree, ast.Attribute):
        tree = tree.value
    return tree.id


def prefixed(tree: ast.expr, name: str) -> ast.expr:
    """The attribute path ``tree`` read from ``name``: ``history.inputs`` as ``node.history.inputs``."""
    if isinstance(tree, ast.Name):
        return ast.Attribute(ast.Name(name, ast.Load()), tree.id, ast.Load())
    return ast.Attribute(prefixed(tree.value, name), tree.attr, ast.Load())


def converted(node: ast.expr, key: str, text: str) -> tuple:
    """One node of the syntax tree as the child's tree: a tuple whose first item says what it is."""
    def again(child: ast.expr) -> tuple:
        return converted(child, key, text)

    if isinstance(node, ast.Name):
        return ("name", node.id)
    if isinstance(node, ast.Constant) and (node.value is None or isinstance(node.value, (bool, int, float, str))):
        return ("const", node.value)
    if isinstance(node, ast.Attribute):
        if node.attr.startswith("__"):
            raise ConfigError(f"{key}: {text!r} reads {node.attr}, a name of Python's own machinery: a form "
                              "names what the course's engine writes")
        return ("attr", again(node.value), node.attr)
    if isinstance(node, ast.Call):
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            raise ConfigError(f"{key}: {text!r} unpacks arguments (* or **): write each argument")
        return ("call", again(node.func), tuple(again(a) for a in node.args),
                tuple((k.arg, again(k.value)) for k in node.keywords))
    if isinstance(node, ast.Subscript):
        return ("item", again(node.value), again(node.slice))
    if isinstance(node, ast.BinOp) and type(node.op) in OPERATORS:
        return ("binop", OPERATORS[type(node.op)], again(node.left), again(node.right))
    if isinstance(node, ast.UnaryOp) and type(node.op) in UNARY:
        return ("unary", UNARY[type(node.op)], again(node.operand))
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in COMPARISONS:
        return ("compare", COMPARISONS[type(node.ops[0])], again(node.left), again(node.comparators[0]))
    if isinstance(node, (ast.Tuple, ast.List)):
        return ("tuple" if isinstance(node, ast.Tuple) else "list", tuple(again(e) for e in node.elts))
    raise ConfigError(f"{key}: {text!r} has {type(node).__name__.lower()} syntax, which a form does not take "
                      "(names, attributes, calls, subscripts, numbers, arithmetic and one comparison)")


def subtrees(tree: tuple) -> tuple[tuple, ...]:
    """The forms directly inside ``tree``: a call's function and arguments, an attribute's object..."""
    kind = tree[0]
    if kind in ("name", "const"):
        return ()
    if kind == "attr":
        return (tree[1],)
    if kind == "call":
        return (tree[1], *tree[2], *(value for _, value in tree[3]))
    if kind == "item":
        return (tree[1], tree[2])
    if kind in ("binop", "compare"):
        return (tree[2], tree[3])
    if kind == "unary":
        return (tree[2],)
    return tree[1]  # a tuple's or a list's items


def names(tree: tuple) -> set[str]:
    """Every name the form uses."""
    if tree[0] == "name":
        return {tree[1]}
    return set().union(*(names(t) for t in subtrees(tree)))


def attribute_path(tree: tuple, name: str) -> tuple[str, ...] | None:
    """The attributes ``tree`` reads of ``name`` when it is no more than that (``node.history.inputs``:
    ``("history", "inputs")``); ``None`` for any other form."""
    path: list[str] = []
    while tree[0] == "attr":
        path.insert(0, tree[2])
        tree = tree[1]
    return tuple(path) if tree == ("name", name) and path else None


def callee(tree: tuple) -> str | None:
    """The name a call form calls, as a learner's code defines it: ``backpropagate`` for
    ``backpropagate(out, 1.0)``, ``backward`` for ``out.backward()``, ``Mul`` for ``Mul.apply(a, b)``."""
    if tree[0] != "call":
        return None
    func = tree[1]
    if func[0] == "name":
        return func[1]
    if func[0] == "attr" and func[1][0] == "name" and func[1][1] not in ("out", "node", "a", "b", "x"):
        return func[1][1]  # a class's method: the class (Mul.apply), or a module's function (ops.mul)
    return func[2] if func[0] == "attr" else None


def text(tree: tuple) -> str:
    """The form written back as Python, for a message."""
    kind = tree[0]
    if kind == "name":
        return tree[1]
    if kind == "const":
        return repr(tree[1])
    if kind == "attr":
        return f"{text(tree[1])}.{tree[2]}"
    if kind == "call":
        args = [text(a) for a in tree[2]] + [f"{k}={text(v)}" for k, v in tree[3]]
        return f"{text(tree[1])}({', '.join(args)})"
    if kind == "item":
        return f"{text(tree[1])}[{text(tree[2])}]"
    if kind == "binop":
        symbol = {v: k for k, v in SYMBOLS.items()}[tree[1]]
        return f"{text(tree[2])} {symbol} {text(tree[3])}"
    if kind == "unary":
        return ("-" if tree[1] == "neg" else "+") + text(tree[2])
    if kind == "compare":
        return f"{text(tree[2])} {COMPARISON_SYMBOLS[tree[1]]} {text(tree[3])}"
    inner = ", ".join(text(e) for e in tree[1])
    return f"({inner}{',' if len(tree[1]) == 1 else ''})" if kind == "tuple" else f"[{inner}]"


SYMBOLS = {"+": "add", "-": "sub", "*": "mul", "/": "truediv", "**": "pow", "@": "matmul", "//": "floordiv"}
COMPARISON_SYMBOLS = {"lt": "<", "gt": ">", "le": "<=", "ge": ">=", "eq": "==", "ne": "!="}
