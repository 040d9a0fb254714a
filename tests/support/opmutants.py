"""Generated mutants of every op: a correct engine written from a table, and each classic bug made from it.

``engine()`` writes a ``Value`` with every op of ``grader.exercise.ops`` written out in full, the way
micrograd writes ``__add__`` (lift a plain number, make the result with its children, a ``_backward``
closure that adds each operand's local derivative times ``out.grad``, attach it, return the result).
``mutants()`` then applies every bug class of ``BUGS`` to every op it applies to, by rewriting that op's
table entry, never by hand: so a new op or a new bug class is one row, and every op meets every bug.
Each mutant carries the code it must get and the line that code must point at.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from grader.exercise.ops import BUILT_IN, OPS


@dataclass(frozen=True)
class Written:
    """One op as a learner writes it out in full (``self`` is the Value Python calls the method on)."""

    signature: str  # "__add__(self, other)"
    forward: str  # the result's data: "self.data + other.data"
    label: str
    grads: tuple[tuple[str, str], ...]  # (operand, local derivative), self first
    wrong_forward: str
    wrong_local: tuple[str, ...]  # a learner's wrong local derivative, operand by operand
    wraps: bool = False  # lifts a plain-number ``other`` into a Value first
    children: tuple[str, ...] = ("self",)
    closure: str = "out"  # the node the closure is attached to
    returns: bool = True
    out_grad: bool = True  # each local derivative is multiplied by out.grad
    assign: tuple[bool, ...] = (False, False)  # ``=`` instead of ``+=``, operand by operand

    def lines(self) -> list[str]:
        """The method's source, indented as in a class."""
        body = [f"    def {self.signature}:"]
        if self.wraps:
            body.append("        other = other if isinstance(other, Value) else Value(other)")
        children = ", ".join(self.children) + ("," if len(self.children) == 1 else "")
        body.append(f"        out = Value({self.forward}, ({children}), {self.label!r})")
        body += ["", "        def _backward():"]
        for k, (operand, local) in enumerate(self.grads):
            update = "=" if self.assign[k] else "+="
            body.append(f"            {operand}.grad {update} {local}" + (" * out.grad" if self.out_grad else ""))
        body += ["", f"        {self.closure}._backward = _backward"]
        if self.returns:
            body.append("        return out")
        return body


def binary(method: str, forward: str, label: str, local: tuple[str, str], wrong_forward: str,
           wrong_local: tuple[str, str], reflected: bool = False) -> Written:
    operands = ("other", "self") if reflected else ("self", "other")
    return Written(f"{method}(self, other)", forward, label, (("self", local[0]), ("other", local[1])),
                   wrong_forward, wrong_local, wraps=True, children=operands)


def unary(method: str, forward: str, label: str, local: str, wrong_forward: str, wrong_local: str) -> Written:
    return Written(f"{method}(self)", forward, label, (("self", local),), wrong_forward, (wrong_local,))


WRITTEN: dict[str, Written] = {
    "add": binary("__add__", "self.data + other.data", "+", ("1.0", "1.0"), "self.data - other.data",
                  ("other.data", "self.data")),
    "mul": binary("__mul__", "self.data * other.data", "*", ("other.data", "self.data"), "self.data + other.data",
                  ("self.data", "other.data")),
    "pow": Written("__pow__(self, other)", "self.data ** other", "**", (("self", "other * self.data ** (other - 1)"),),
                   "self.data * other", ("other * self.data ** other",)),
    "tanh": unary("tanh", "math.tanh(self.data)", "tanh", "(1 - out.data ** 2)", "math.sinh(self.data)",
                  "(1 - out.data)"),
    "relu": unary("relu", "self.data if self.data > 0 else 0.0", "ReLU", "(out.data > 0)", "abs(self.data)",
                  "(out.data < 0)"),
    "exp": unary("exp", "math.exp(self.data)", "exp", "out.data", "math.exp(-self.data)", "self.data"),
    "log": unary("log", "math.log(self.data)", "log", "(1 / self.data)", "math.log10(self.data)", "(1 / out.data)"),
    "sigmoid": unary("sigmoid", "1 / (1 + math.exp(-self.data))", "sigmoid", "out.data * (1 - out.data)",
                     "1 / (1 + math.exp(self.data))", "(1 - out.data)"),
    "neg": unary("__neg__", "-self.data", "neg", "-1.0", "self.data", "1.0"),
    "sub": binary("__sub__", "self.data - other.data", "-", ("1.0", "-1.0"), "other.data - self.data",
                  ("-1.0", "1.0")),
    "truediv": binary("__truediv__", "self.data / other.data", "/",
                      ("(1 / other.data)", "(-self.data / other.data ** 2)"), "other.data / self.data",
                      ("other.data", "(-self.data / other.data)")),
    "radd": binary("__radd__", "other.data + self.data", "+", ("1.0", "1.0"), "other.data - self.data",
                   ("other.data", "self.data"), reflected=True),
    "rmul": binary("__rmul__", "other.data * self.data", "*", ("other.data", "self.data"), "other.data + self.data",
                   ("self.data", "other.data"), reflected=True),
}
assert set(WRITTEN) == set(BUILT_IN), "every op of the op table is written out"

HEAD = '''import math


class Value:
    def __init__(self, data, _children=(), _op="", label=""):
        self.data = data
        self.grad = 0.0
        self._backward = lambda: None
        self._prev = set(_children)
        self._op = _op
        self.label = label

    def __repr__(self):
        return f"Value(data={self.data}, grad={self.grad})"

    def backward(self):
        topo = []
        visited = set()

        def build_topo(v):
            if v not in visited:
                visited.add(v)
                for child in v._prev:
                    build_topo(child)
                topo.append(v)

        build_topo(self)
        self.grad = 1.0
        for node in reversed(topo):
            node._backward()
'''

TAIL = '''

def train_step(model, xs, ys, lr):
    ypred = [model(x) for x in xs]
    loss = sum((yout - ygt) ** 2 for ygt, yout in zip(ys, ypred))
    model.zero_grad()
    loss.backward()
    for p in model.parameters():
        p.data += -lr * p.grad
    return loss.data
'''


def engine(written: dict[str, Written] = WRITTEN) -> str:
    """The engine's source with every op of ``written``, in the op table's order."""
    methods = ["\n".join(written[name].lines()) for name in BUILT_IN]
    return HEAD + "\n" + "\n\n".join(methods) + "\n" + TAIL


@dataclass(frozen=True)
class Bug:
    """A bug class: what it does to an op's table entry, where it applies, the code it must get, and the
    statement of the op (a marker the mutated source holds) that code must point at."""

    name: str
    code: str
    applies: Callable[[str, Written], bool]
    mutate: Callable[[Written], Written]
    blamed: Callable[[Written], str]  # the text of the line the diagnosis points at


def grad_line(operand: str) -> Callable[[Written], str]:
    return lambda w: f"            {operand}.grad "


def two_operands(name: str, w: Written) -> bool:
    return len(w.grads) == 2 and not OPS[name].number_first


def replace_local(w: Written, k: int) -> Written:
    grads = list(w.grads)
    grads[k] = (grads[k][0], w.wrong_local[k])
    return dataclasses.replace(w, grads=tuple(grads))


def result_line(w: Written) -> str:
    return "        out = Value("


BUGS: tuple[Bug, ...] = (
    Bug("forgets-out-grad", "wrong-local-grad", lambda n, w: True,
        lambda w: dataclasses.replace(w, out_grad=False), grad_line("self")),
    Bug("overwrites-grad", "grad-overwrite", lambda n, w: True,
        lambda w: dataclasses.replace(w, assign=(True, True)), grad_line("self")),
    Bug("overwrites-other-grad", "grad-overwrite", two_operands,
        lambda w: dataclasses.replace(w, assign=(False, True)), grad_line("other")),
    Bug("wrong-local-grad", "wrong-local-grad", lambda n, w: True, lambda w: replace_local(w, 0), grad_line("self")),
    Bug("wrong-other-local-grad", "wrong-local-grad", two_operands, lambda w: replace_local(w, 1), grad_line("other")),
    Bug("wrong-forward", "wrong-forward", lambda n, w: True,
        lambda w: dataclasses.replace(w, forward=w.wrong_forward), result_line),
    Bug("number-not-wrapped", "constant-operand", lambda n, w: w.wraps,
        lambda w: dataclasses.replace(w, wraps=False), result_line),
    Bug("returns-none", "crash", lambda n, w: True,
        lambda w: dataclasses.replace(w, returns=False), lambda w: f"        {w.closure}._backward = _backward"),
    Bug("closure-on-self", "detached-backward", lambda n, w: True,
        lambda w: dataclasses.replace(w, closure="self"), lambda w: "        self._backward = _backward"),
    Bug("closure-on-other", "detached-backward", two_operands,
        lambda w: dataclasses.replace(w, closure="other"), lambda w: "        other._backward = _backward"),
    Bug("children-miss-other", "missing-child", two_operands,
        lambda w: dataclasses.replace(w, children=("self",)), result_line),
    Bug("children-miss-self", "missing-child", lambda n, w: True,
        lambda w: dataclasses.replace(w, children=tuple(c for c in w.children if c != "self") or ()), result_line),
    Bug("children-self-twice", "missing-child", two_operands,
        lambda w: dataclasses.replace(w, children=("self", "self")), result_line),
)


@dataclass(frozen=True)
class Mutant:
    name: str
    op: str
    bug: str
    source: str
    code: str
    line: int


def mutants() -> list[Mutant]:
    """Every bug class applied to every op it applies to, each in an otherwise correct engine."""
    found = []
    for name, w in WRITTEN.items():
        for bug in BUGS:
            if not bug.applies(name, w):
                continue
            wrong = bug.mutate(w)
            source = engine({**WRITTEN, name: wrong})
            start = source.index(f"    def {w.signature}:")
            marker = bug.blamed(wrong)
            at = source.index(marker, start)
            found.append(Mutant(f"{name}-{bug.name}", name, bug.name, source, bug.code,
                                source.count("\n", 0, at) + 1))
    return found
