"""The course's engine as its ``micrograde.toml`` describes it: every ``[engine]`` and ``[ops]`` form evaluated
against the learner's own names, with the builtins the draft allows a form, and nothing else.

``reference_pass`` is a right backward pass over the learner's own chain-rule steps (the ``step`` or ``local``
form): with it an op is checked apart from the learner's backward pass, and the backward pass apart from the ops.
"""

from __future__ import annotations

import builtins
import math
import re

import numpy as np

FORM_BUILTINS = {name: getattr(builtins, name) for name in ("id", "len", "float", "int", "list", "tuple", "abs", "sum")}
PATH = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")
FORM_NAMES = {"node", "out", "returned"}  # a value starting so is a form, not an attribute path

# The ops micrograde knows, as a person writes them and as floats compute them.
KNOWN_CALLS = {"add": "a + b", "sub": "a - b", "mul": "a * b", "truediv": "a / b", "pow": "a ** k", "neg": "-a",
               "radd": "k + a", "rmul": "k * a"}
KNOWN_FORMULAS = {
    "add": "a + b", "sub": "a - b", "mul": "a * b", "truediv": "a / b", "pow": "a ** k", "neg": "-a",
    "tanh": "tanh(a)", "exp": "exp(a)", "log": "log(a)", "relu": "max(a, 0.0)", "sigmoid": "1 / (1 + exp(-a))",
    "lt": "float(a < b)", "gt": "float(a > b)", "le": "float(a <= b)", "ge": "float(a >= b)", "eq": "float(a == b)",
}
MATH = {name: getattr(math, name) for name in ("sin", "cos", "tan", "exp", "log", "sqrt", "tanh")} | {"max": max}


def formula_function(text: str, names: tuple[str, ...]):
    """A formula of ``names`` as a function of floats (numbers, arithmetic, one comparison, math's functions)."""
    code = compile(text, "<formula>", "eval")
    return lambda *values: float(eval(code, {"__builtins__": FORM_BUILTINS}, MATH | dict(zip(names, values))))  # noqa: S307


def as_number(value) -> float:
    return float(np.asarray(value, dtype=float).reshape(-1)[0])


class Engine:
    """Leaves, values, gradients, operands and ops of the learner's engine, through the course's forms."""

    def __init__(self, config: dict, namespace: dict):
        engine = config.get("engine", {})
        self.namespace = namespace
        self.node_class = namespace[config["scaffold"]["class"]]
        self.leaf_form = engine.get("leaf", config["scaffold"]["class"] + "(x)")
        self.value_form = engine.get("value", "data")
        self.grad_form = engine.get("grad", "grad")
        self.grad_on = engine.get("grad_on", "all")
        # Operands: where the course says; with stored pairs, the pairs' inputs; else micrograd's _prev.
        self.operands_form = engine.get("operands", "" if "local" in engine else "_prev")
        self.backward_form = engine.get("backward", "out.backward()")
        self.local_form = engine.get("local")
        self.step_form = engine.get("step", None if self.local_form else "node._backward()")
        self.ops = config.get("ops", {})

    # -- forms ------------------------------------------------------------------------------------------------
    def form(self, text: str, **names):
        return eval(text, {"__builtins__": FORM_BUILTINS}, {**self.namespace, **names})  # noqa: S307

    def read(self, text: str, node, **names):
        """A path (``history.inputs``: an attribute of node) or a form on node."""
        if PATH.match(text) and text.split(".")[0] not in FORM_NAMES:
            for part in text.split("."):
                if node is None:  # a path through nothing (a constant's absent history): nothing there
                    return None
                node = getattr(node, part)
            return node
        return self.form(text, node=node, **names)

    def write_grad(self, node, value) -> None:
        """Only for an engine whose gradient is an attribute (``grad``), as a closure-style engine's is."""
        *path, last = self.grad_form.split(".")
        for part in path:
            node = getattr(node, part)
        setattr(node, last, value)

    def leaf(self, x):
        return self.form(self.leaf_form, x=x)

    def value(self, node):
        return self.read(self.value_form, node)

    def number(self, node) -> float:
        return as_number(self.value(node))

    def ones(self, node):
        """The seed of a backward pass from ``node``: 1, of its value's shape where the value is an array."""
        value = self.value(node)
        return np.ones_like(value, dtype=float) if isinstance(value, np.ndarray) else 1.0

    def operands(self, node) -> list:
        if not self.operands_form:
            return [pair[0] for pair in self.read(self.local_form, node)] if self.local_form else []
        found = self.read(self.operands_form, node)
        return list(found) if found is not None else []

    @property
    def keeps_operands(self) -> bool:
        """Whether a node says what it was made of (else structure checks are off; gradients still checked)."""
        return bool(self.operands_form or self.local_form)

    def is_node(self, thing) -> bool:
        return isinstance(thing, self.node_class)

    def backward(self, out):
        return self.form(self.backward_form, out=out)

    def grad(self, node, returned):
        """The learner's gradient of ``node`` after the backward form returned ``returned`` (None: it has none)."""
        try:
            found = self.read(self.grad_form, node, returned=returned)
        except (KeyError, IndexError):
            return None
        return None if found is None else found

    def apply(self, op: str, a, b=None, k=None):
        call = self.ops.get(op, {}).get("call") or KNOWN_CALLS.get(op) or f"a.{op}()"
        return self.form(call, a=a, b=b, k=k)

    def formula(self, op: str, arity: int):
        text = self.ops.get(op, {}).get("formula") or KNOWN_FORMULAS[op]
        return formula_function(text, ("a", "b", "k")[: max(arity, 1)] if op != "pow" else ("a", "k"))

    # -- a right backward pass over the learner's own steps -----------------------------------------------------
    def order(self, roots: list) -> list:
        """Every node the roots depend on, each after all of its users (reverse topological order)."""
        seen, post = set(), []
        for root in roots:
            stack = [(root, False)]
            while stack:
                node, done = stack.pop()
                if done:
                    post.append(node)
                    continue
                if id(node) in seen:
                    continue
                seen.add(id(node))
                stack.append((node, True))
                stack.extend((o, False) for o in self.operands(node) if self.is_node(o))
        return post[::-1]

    def reference_pass(self, roots: list, seeds: list) -> dict:
        """Gradients (by id) of every node, from the learner's steps run in a right order, each once."""
        order = self.order(roots)
        closures = self.step_form is not None and "grad" not in re.findall(r"\w+", self.step_form)
        if closures:
            for node in order:
                self.write_grad(node, self.ones(node) * 0.0)
            for root, seed in zip(roots, seeds):
                self.write_grad(root, seed)
            for node in order:
                if self.operands(node):
                    self.read(self.step_form, node)
            return {id(node): self.read(self.grad_form, node) for node in order}
        grads = {id(root): seed for root, seed in zip(roots, seeds)}
        for node in order:
            operands = self.operands(node)
            if not operands:
                continue
            g = grads.get(id(node), 0.0)
            if self.local_form:
                pairs = [(i, local * g) for i, local in self.read(self.local_form, node)]
            else:
                result = self.read(self.step_form, node, grad=g)
                result = list(result) if isinstance(result, (list, tuple)) else [result]
                pairs = result if all(isinstance(r, tuple) and len(r) == 2 and self.is_node(r[0]) for r in result) \
                    else list(zip(operands, result))
            for inp, contribution in pairs:
                if self.is_node(inp):
                    grads[id(inp)] = grads.get(id(inp), 0.0) + contribution
        return grads
