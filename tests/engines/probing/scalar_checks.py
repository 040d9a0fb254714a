"""An op and the backward pass of a scalar engine, observed as a TA checks them.

An op: its value against the course's formula (``wrong-forward``), its operands recorded (``missing-child``), the
gradient a right backward pass over its own step gives each operand against the formula's derivative
(``wrong-local-grad``), a node used twice (``grad-overwrite``), a plain number as the other operand
(``constant-operand``); and, apart from the verdict, the learner's own backward pass on small expressions against
central differences of the learner's own forward pass (``fd``).

The backward pass: the learner's ``backward`` form against a right pass over the same steps, on a leaf alone, a
product, a chain, a tree, a leaf used three times and a node used at two depths; what failed, and in what order
the learner's pass ran the steps (watched where the steps are methods, closures or stored pairs), says which
misconception it is.
"""

from __future__ import annotations

import re

from probing.forms import KNOWN_FORMULAS, Engine, as_number

SEED = 1.7
POSITIVE = (1.5, 0.7, 2.3)
MIXED = (1.5, -0.8, 0.6, -1.7)
POSITIVE_OPS = {"log", "inv", "pow", "sqrt"}
BINARY = {"add", "sub", "mul", "truediv"}
UNARY = {"neg", "tanh", "exp", "log", "relu", "sigmoid"}
EXPONENT = 3.0


def close(got, want, tol=1e-5) -> bool:
    return abs(got - want) <= tol * (1.0 + abs(want))


def partial(f, point, i, h=1e-4):
    """d f / d point[i], a Richardson-extrapolated central difference (error of order h**4)."""
    def d(step):
        up, down = list(point), list(point)
        up[i] += step
        down[i] -= step
        return (f(*up) - f(*down)) / (2 * step)
    return (4 * d(h / 2) - d(h)) / 3


def arity(engine: Engine, op: str) -> int:
    if op in BINARY:
        return 2
    if op in UNARY or op == "pow":
        return 1
    return 2 if re.search(r"\bb\b", engine.ops.get(op, {}).get("formula") or KNOWN_FORMULAS[op]) else 1


def points(op: str, n: int) -> list[tuple[float, ...]]:
    values = POSITIVE if op in POSITIVE_OPS else MIXED
    if n == 1:
        return [(v,) for v in values]
    return [(values[i], values[(i + 1) % len(values)]) for i in range(len(values))]


class Failed(Exception):
    """A check found what is wrong: ``code`` (and a few words on the smallest case)."""

    def __init__(self, code: str, why: str):
        super().__init__(why)
        self.code, self.why = code, why


def apply(engine: Engine, op: str, operands: list):
    return engine.apply(op, *operands, k=EXPONENT) if op == "pow" else engine.apply(op, *operands)


def check_op(engine: Engine, op: str) -> dict:
    """Every case of one op; the first that fails names the misconception. ``fd``: the learner's own backward pass
    agrees with central differences of the learner's forward pass on small expressions."""
    n = arity(engine, op)
    raw = engine.formula(op, n)
    f = (lambda *v: raw(*v, EXPONENT)) if op == "pow" else raw
    cases = points(op, n) + ([(2.0, 2.0), (1.0, 3.0)] if n == 2 else [])
    for point in cases:
        leaves = [engine.leaf(x) for x in point]
        out = apply(engine, op, leaves)
        if not close(engine.number(out), f(*point)):
            raise Failed("wrong-forward", f"{op}{point} = {engine.number(out)}, not {f(*point)}")
        if engine.keeps_operands:  # among its operands, or theirs: an op may be written with others
            held = {id(node) for node in engine.order([out])}
            if any(id(leaf) not in held for leaf in leaves):
                raise Failed("missing-child", f"{op}{point}: an operand is not in the result's graph")
    for point in points(op, n):
        leaves = [engine.leaf(x) for x in point]
        out = apply(engine, op, leaves)
        grads = engine.reference_pass([out], [SEED * engine.ones(out)])
        for i, leaf in enumerate(leaves):
            got, want = as_number(grads.get(id(leaf), 0.0)), SEED * partial(f, point, i)
            if not close(got, want):
                raise Failed("wrong-local-grad", f"{op}{point}: operand {i} gets {got}, not {want}")
    check_reuse(engine, op, n, f)
    if n == 2:
        for (x, _) in points(op, n):
            a = engine.leaf(x)
            out = apply(engine, op, [a, 2.5])
            grads = engine.reference_pass([out], [SEED * engine.ones(out)])
            want = SEED * partial(lambda v: f(v, 2.5), (x,), 0)
            if not close(engine.number(out), f(x, 2.5)) or not close(as_number(grads.get(id(a), 0.0)), want):
                raise Failed("constant-operand", f"{op}({x}, 2.5) is wrong with a plain number")
    try:
        return {"fd": fd_agrees(engine, op, n)}
    except Exception:  # noqa: BLE001 (an op of those expressions that is not written yet, or raises)
        return {"fd": False}


def check_reuse(engine: Engine, op: str, n: int, f) -> None:
    """One node used twice: as both operands, or by two results of the op (two roots of one pass)."""
    for (x, *_) in points(op, n):
        a = engine.leaf(x)
        if n == 2:
            out = apply(engine, op, [a, a])
            grads = engine.reference_pass([out], [SEED * engine.ones(out)])
            want = SEED * partial(lambda v: f(v, v), (x,), 0)
        else:
            u, v = apply(engine, op, [a]), apply(engine, op, [a])
            grads = engine.reference_pass([u, v], [SEED * engine.ones(u), 2.0 * engine.ones(v)])
            want = (SEED + 2.0) * partial(f, (x,), 0)
        got = as_number(grads.get(id(a), 0.0))
        if not close(got, want):
            raise Failed("grad-overwrite", f"{op} with one node used twice at {x}: {got}, not {want}")


def fd_agrees(engine: Engine, op: str, n: int, h=1e-6) -> bool:
    """The learner's backward form on op(a, b), op(a, a), op(a, b) * a (unary: op(a), op(a) * a, op(a * a)) against
    central differences of the learner's own values."""
    def expressions(leaves):
        a = leaves[0]
        first = apply(engine, op, leaves[:n])
        yield first
        yield apply(engine, op, [a, a]) if n == 2 else apply(engine, "mul", [first, a])
        yield apply(engine, "mul", [first, a]) if n == 2 else apply(engine, op, [apply(engine, "mul", [a, a])])

    for point in points(op, n)[:2]:
        point = tuple(point) + (0.9,)
        count = len(list(expressions([engine.leaf(x) for x in point])))
        for which in range(count):
            def value(*xs, which=which):
                return engine.number(list(expressions([engine.leaf(x) for x in xs]))[which])
            leaves = [engine.leaf(x) for x in point]
            out = list(expressions(leaves))[which]
            returned = engine.backward(out)
            for i, leaf in enumerate(leaves):
                grad = engine.grad(leaf, returned)
                got = 0.0 if grad is None else as_number(grad)
                if not close(got, partial(value, point, i, h), 1e-4):
                    return False
    return True


# -- the backward pass ----------------------------------------------------------------------------------------
GRAPHS = {  # name: (leaves, how the output is made of them), every local derivative positive
    "leaf": (1, lambda e, a: a),
    "product": (2, lambda e, a, b: e.apply("mul", a, b)),
    "chain": (3, lambda e, a, b, c: e.apply("mul", e.apply("mul", a, b), c)),
    "tree": (4, lambda e, a, b, c, d: e.apply("add", e.apply("mul", a, b), e.apply("mul", c, d))),
    "leaf-reused": (1, lambda e, a: e.apply("add", e.apply("mul", a, a), a)),
    "node-reused": (3, lambda e, a, b, c: _two_depths(e, a, b, c)),
    "node-twice": (2, lambda e, a, b: _twice(e, a, b)),
}
REUSE = {"leaf-reused", "node-reused", "node-twice"}
VALUES = (1.5, 0.7, 2.3, 1.2)


def _two_depths(e, a, b, c):
    x = e.apply("add", a, b)
    return e.apply("mul", e.apply("mul", x, c), x)


def _twice(e, a, b):
    x = e.apply("mul", a, b)
    return e.apply("add", x, x)


def build(engine: Engine, name: str):
    count, make = GRAPHS[name]
    leaves = [engine.leaf(v) for v in VALUES[:count]]
    return leaves, make(engine, *leaves)


def learner_grads(engine: Engine, name: str, watch=None) -> list[float]:
    leaves, out = build(engine, name)
    if watch is not None:
        watch(engine.order([out]))
    returned = engine.backward(out)
    return [0.0 if (g := engine.grad(leaf, returned)) is None else as_number(g) for leaf in leaves]


def right_grads(engine: Engine, name: str) -> list[float]:
    leaves, out = build(engine, name)
    grads = engine.reference_pass([out], [engine.ones(out)])
    return [as_number(grads.get(id(leaf), 0.0)) for leaf in leaves]


class Watch:
    """Which interior nodes' steps the learner's backward pass ran, in its order: the step is a method of the class
    (patched) or a closure each node keeps (wrapped, node by node)."""

    def __init__(self, engine: Engine):
        self.engine, self.ran, self.nodes = engine, [], []
        form = engine.step_form or ""
        found = re.match(r"^(?:node\.)?([A-Za-z_]\w*)\(.*\)$", form)
        # Stored pairs are read by the learner's sort as well as by its pass: which read is the step cannot be told.
        self.attribute = found.group(1) if found else None
        self.watchable = found is not None
        self.restore = lambda: None

    def __call__(self, order: list) -> None:
        self.nodes = [n for n in order if self.engine.operands(n)]
        if not self.nodes:
            return
        kept_by_node = self.attribute in getattr(self.nodes[0], "__dict__", {}) or \
            not callable(getattr(self.engine.node_class, self.attribute, None))  # a closure, or a slot holding one
        if kept_by_node:
            for node in self.nodes:
                setattr(node, self.attribute, self._closure(node, getattr(node, self.attribute)))
            return
        original = getattr(self.engine.node_class, self.attribute)
        ran = self.ran

        def watched(node, *args, **kwargs):
            ran.append(id(node))
            return original(node, *args, **kwargs)
        setattr(self.engine.node_class, self.attribute, watched)
        self.restore = lambda: setattr(self.engine.node_class, self.attribute, original)

    def _closure(self, node, kept):
        def watched(*args, **kwargs):
            self.ran.append(id(node))
            return kept(*args, **kwargs)
        return watched

    def verdict(self) -> set[str]:
        ids = [id(n) for n in self.nodes]
        if len(self.ran) != len(set(self.ran)):
            return {"repeated-visit"}
        if set(ids) - set(self.ran):
            return {"incomplete-traversal"}
        position = {i: k for k, i in enumerate(self.ran)}
        for node in self.nodes:  # every user of a node must run before it
            for operand in self.engine.operands(node):
                if id(operand) in position and position[id(operand)] < position[id(node)]:
                    return {"wrong-order"}
        return set()


def check_backward(engine: Engine) -> dict:
    learner = {name: learner_grads(engine, name) for name in GRAPHS}
    right = {name: right_grads(engine, name) for name in GRAPHS}
    failing = [n for n in GRAPHS if not all(close(g, w) for g, w in zip(learner[n], right[n]))]
    fd = all(close(g, w, 1e-4) for n in GRAPHS for g, w in zip(learner[n], fd_grads(engine, n)))
    if not failing:
        return {"fd": fd}
    if "leaf" in failing:
        raise Failed("missing-seed", f"backward from a leaf alone gives it {learner['leaf'][0]}, not 1")
    watchable = Watch(engine).watchable
    found: set[str] = set()
    for name in failing if watchable else []:
        watch = Watch(engine)
        try:
            learner_grads(engine, name, watch)
        finally:
            watch.restore()
        found |= watch.verdict()
    case = failing[0]
    why = f"{case}: leaves get {learner[case]}, not {right[case]}"
    if found:
        raise Failed("/".join(sorted(found)), why)
    larger = sum(sum(learner[n]) for n in failing) > sum(sum(right[n]) for n in failing)
    if all(n in REUSE for n in failing):
        raise Failed("repeated-visit" if larger else "no-accumulation", why)
    if watchable:  # every step ran once, in a right order, and still every gradient is off by one factor
        ratios = {round(g / w, 6) for n in failing for g, w in zip(learner[n], right[n]) if w}
        if len(ratios) == 1:
            raise Failed("missing-seed", why)
        raise Failed("no-accumulation", why)
    raise Failed("wrong-order/incomplete-traversal", why)  # a node reached once cannot be run twice


def fd_grads(engine: Engine, name: str, h=1e-6) -> list[float]:
    count, make = GRAPHS[name]
    point = VALUES[:count]
    return [partial(lambda *xs: engine.number(make(engine, *[engine.leaf(x) for x in xs])), point, i, h)
            for i in range(count)]
