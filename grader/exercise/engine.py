"""The course's own engine, as the course describes it: the ``[engine]`` and ``[ops]`` tables.

micrograde grades engines shaped like micrograd without being told anything (a node's ``data``,
``grad``, ``_prev`` and ``_backward``, or the usual aliases of them). A course whose engine has
another shape says how to drive it, in words a TA knows from the engine itself: how a leaf is made
(``Scalar(x)``), where a node keeps its number, its gradient and its operands (``history.inputs``),
how a backward pass starts (``backpropagate(out, 1.0)``), a node's chain-rule step
(``node.chain_rule(grad)``), and for each op how it is called (``Mul.apply(a, b)``) and where the
learner writes it (the Function class ``Mul``, the function ``mul``). An op micrograde does not know
is named with its formula (``[ops.sin] formula = "sin(a)"``).

Every value is a *form* (``grader.exercise.forms``), parsed here and sent to the grading child, which
runs it there; nothing of it runs in the grading process. What a course leaves out is inferred in the
child, as for micrograd's shape.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from grader.errors import ConfigError
from grader.exercise import forms, ops
from grader.exercise.formula import Formula, FormulaError
from grader.exercise.formula import parse as parse_formula

# Each key of ``[engine]``: the names its form may use, and whether a bare attribute path means one of ``node``.
ENGINE_KEYS: dict[str, tuple[tuple[str, ...], bool]] = {
    "leaf": (("x",), False),
    "value": (("node",), True),
    "grad": (("node", "returned"), True),
    "operands": (("node",), True),
    "backward": (("out",), False),
    "step": (("node", "grad"), False),
    "local": (("node",), True),
}
GRAD_ON = ("all", "leaves")
OP_KEYS = ("call", "written", "formula", "method")
OPERANDS = ("a", "b")  # what an op's formula and call name its operands; ``k`` is pow's exponent


@dataclass(frozen=True)
class Engine:
    """A course's description of its engine: each key's form, as text and as a tree (nothing for micrograd's
    shape), and each op's call form and written part."""

    texts: tuple[tuple[str, str], ...] = ()  # [engine] as the course wrote it, key by key
    grad_on: str = "all"
    calls: tuple[tuple[str, str], ...] = ()  # op -> how the course calls it
    written: tuple[tuple[str, str], ...] = ()  # op -> what the learner writes for it (a class or function)
    formulas: tuple[tuple[str, str], ...] = ()  # op -> its formula, for an op micrograde does not know

    @property
    def described(self) -> bool:
        """Whether the child is told anything of the engine (else it infers micrograd's shape)."""
        return bool(self.texts or self.calls or self.grad_on != "all")

    @property
    def said(self) -> bool:
        """Whether the course says anything of its engine at all."""
        return self.described or bool(self.written or self.formulas)

    def form(self, key: str) -> tuple | None:
        text = dict(self.texts).get(key)
        if not text:
            return None  # not said, or (operands) said to be none
        names, path = ENGINE_KEYS[key]
        return forms.parse(text, f"[engine] {key}", names, "node" if path else None)

    def request(self) -> dict | None:
        """What the grading child is sent (the load request's ``engine``): the forms as trees, each op's call by
        the method the child knows it by; ``None`` for micrograd's shape, which it infers."""
        if not self.described:
            return None
        trees = {key: self.form(key) for key, _ in self.texts}
        if self.grad_on != "all":
            trees["grad_on"] = self.grad_on
        calls = {ops.OPS[name].method: forms.parse(text, f"[ops.{name}] call", ("a", "b", "k"))
                 for name, text in self.calls}
        return {"forms": trees, "calls": calls}

    @property
    def stores_gradients(self) -> bool:
        """Whether a backward pass leaves its gradients on the nodes (else it returns them: ``returned[node]``), so
        that a second pass adds to what the first left."""
        form = self.form("grad")
        return form is None or "returned" not in forms.names(form)

    def tables(self) -> dict:
        """``[engine]`` and ``[ops]`` as the course wrote them (nothing for micrograd's shape)."""
        found: dict = {}
        texts = dict(self.texts)
        if self.grad_on != "all":
            texts["grad_on"] = self.grad_on
        if texts:
            found["engine"] = texts
        operations: dict = {}
        for table, key in ((self.formulas, "formula"), (self.calls, "call"), (self.written, "written")):
            for name, value in table:
                operations.setdefault(name, {})[key] = value
        if operations:
            found["ops"] = operations
        return found

    def written_for(self, op: str) -> str | None:
        return dict(self.written).get(op)

    def parts(self) -> tuple[str, ...]:
        """The classes and functions the learner writes that are not the value class's methods: each op's Function
        class or function (``Mul``, ``mul``), and the function that runs the backward pass (``backpropagate``)."""
        names = [name for _, name in self.written if "." not in name]
        if self.backward_function() is not None:
            names.append(self.backward_function())
        return tuple(dict.fromkeys(names))

    def backward_function(self) -> str | None:
        """The function the learner writes for ``backward``, where the course starts the pass with one of its
        module (``backpropagate(out, 1.0)``), else ``None`` (a method of the class)."""
        form = self.form("backward")
        if form is None or form[0] != "call" or form[1][0] != "name":
            return None
        return form[1][1]


def parse(engine: object, operations: object, where: str) -> Engine:
    """``[engine]`` and ``[ops]`` of a configuration, validated (``ConfigError`` naming the key); ops named with a
    formula are added to micrograde's table of ops (``grader.exercise.ops``)."""
    texts: list[tuple[str, str]] = []
    grad_on = "all"
    if engine is not None:
        if not isinstance(engine, dict):
            raise ConfigError(f"{where}: [engine] must be a table")
        unknown = sorted(set(engine) - set(ENGINE_KEYS) - {"grad_on"})
        if unknown:
            raise ConfigError(f"{where} [engine]: unknown key {unknown[0]!r} (known: "
                              f"{', '.join([*ENGINE_KEYS, 'grad_on'])})")
        for key in ENGINE_KEYS:
            if key not in engine:
                continue
            text = engine[key]
            if key == "operands" and text == "":
                texts.append((key, ""))  # the engine keeps no operands: structure checks are off
                continue
            names, path = ENGINE_KEYS[key]
            tree = forms.parse(text, f"{where} [engine] {key}", names, "node" if path else None)
            check_form(tree, key, f"{where} [engine] {key}")
            texts.append((key, text.strip()))
        grad_on = engine.get("grad_on", "all")
        if grad_on not in GRAD_ON:
            raise ConfigError(f"{where} [engine] grad_on: expected \"all\" or \"leaves\" (which nodes keep a gradient "
                              f"after backward), got {grad_on!r}")
        if "step" in engine and "local" in engine:
            raise ConfigError(f"{where} [engine]: step and local both say how a node passes gradient on: give one")
    calls, written, formulas = [], [], []
    if operations is not None:
        if not isinstance(operations, dict):
            raise ConfigError(f"{where}: [ops] must be a table of ops, such as [ops.mul]")
        for name, table in operations.items():
            key = f"{where} [ops.{name}]"
            if not isinstance(table, dict):
                raise ConfigError(f"{key}: must be a table (call, written, formula)")
            unknown = sorted(set(table) - set(OP_KEYS))
            if unknown:
                raise ConfigError(f"{key}: unknown key {unknown[0]!r} (known: {', '.join(OP_KEYS)})")
            if name in ops.ON_REQUEST:
                if "formula" in table:
                    raise ConfigError(f"{key} formula: {name} is a comparison micrograde knows "
                                      f"({ops.ON_REQUEST[name].summary}, with no gradient): leave its formula out")
                ops.register(ops.ON_REQUEST[name])
            elif name not in ops.OPS or "formula" in table:
                formulas.append((name, course_op(name, table, key)))
            if "call" in table:
                tree = forms.parse(table["call"], f"{key} call", ("a", "b", "k"))
                used = forms.names(tree) & {"a", "b", "k"}
                if "a" not in used:
                    raise ConfigError(f"{key} call: {table['call']!r} does not use a, the op's first operand")
                calls.append((name, table["call"].strip()))
            if "written" in table:
                value = table["written"]
                if not isinstance(value, str) or not all(p.isidentifier() for p in value.split(".")):
                    raise ConfigError(f"{key} written: expected the name of the class or function the learner "
                                      f"writes for it (Mul, mul, Scalar.__mul__), got {value!r}")
                written.append((name, value))
    # Each op's lines sorted by op: what the course says, whatever order its tables come in (the same hash).
    return Engine(tuple(texts), grad_on, tuple(sorted(calls)), tuple(sorted(written)), tuple(sorted(formulas)))


def check_form(tree: tuple, key: str, where: str) -> None:
    """What each key's form must do beyond parsing: a leaf is made of ``x``, a pass starts from ``out``."""
    needed = {"leaf": "x", "backward": "out"}.get(key)
    if needed is not None and needed not in forms.names(tree):
        raise ConfigError(f"{where}: {forms.text(tree)!r} does not use {needed}")
    if key == "step" and tree[0] != "call":
        raise ConfigError(f"{where}: expected a call, such as node._backward() (a closure the node keeps) or "
                          f"node.chain_rule(grad) (given the gradient, returning each operand's share)")


def course_op(name: str, table: dict, key: str) -> str:
    """An op micrograde does not know, from its formula of ``a`` (and ``b``): added to the table of ops (the same
    formula again is the same op); returns the formula."""
    if not name.isidentifier():
        raise ConfigError(f"{key}: {name!r} is not a name an op can have (a Python name, such as sin)")
    text = table.get("formula")
    if not isinstance(text, str) or not text.strip():
        raise ConfigError(f"{key}: {name} is not an op micrograde knows ({', '.join(ops.OPS)}): give its formula "
                          f"of a (and b), such as formula = \"sin(a)\"")
    try:
        formula = parse_formula(text, OPERANDS)
    except FormulaError as exc:
        raise ConfigError(f"{key} formula: {exc}") from None
    arity = 2 if "b" in formula_names(formula) else 1
    method = table.get("method", name)
    if not isinstance(method, str) or not method.isidentifier():
        raise ConfigError(f"{key} method: expected the name of the class's method, got {method!r}")
    existing = ops.OPS.get(name)
    if existing is not None:
        if existing.formula != text.strip():
            raise ConfigError(f"{key}: {name} is an op micrograde knows already; its formula cannot be changed")
        return text.strip()
    ops.register(ops.formula_op(name, method, arity, formula, text.strip()))
    return text.strip()


def formula_names(formula: Formula) -> set[str]:
    """The operands a formula uses (``a``, ``b``)."""
    return {node.id for node in ast.walk(formula.tree) if isinstance(node, ast.Name) and node.id in OPERANDS}
