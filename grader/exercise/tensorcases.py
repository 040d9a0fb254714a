"""The checks of a tensor op target, and the cases each is made of.

Each kind of op has a few checks, each one idea a person would test by hand:
entries of one shape, a plain number, broadcasting, one tensor as both operands
(its entries then get two contributions), a Value held at two places, a matrix
product, a reduction whole and along an axis, a reshape. A check holds
hand-picked shapes, small ones first, then shapes drawn at random within the
course's numbers of dimensions; every value is drawn from numbers a person reads
at a glance (quarters, no 0 and no 1), distinct within a tensor (so ``max`` has one
largest entry) and where the op is defined and smooth (no divisor near 0, no
quotient near a whole number for ``//``). Everything is drawn from generators
seeded by the target's name, so every machine grades the same cases.
"""

from __future__ import annotations

import functools
import random
from dataclasses import replace

from grader.exercise import shapes
from grader.exercise.cases import Check
from grader.exercise.tensors import TENSOR_OPS, Operand, TensorCase, size_of

POOL = tuple(x / 4 for x in range(-12, 13) if x not in (0, 4, -4))  # -3 .. 3 by quarters, no 0, 1 or -1
DIVISORS = tuple(x for x in POOL if abs(x) >= 0.5)
POSITIVE = tuple(x for x in POOL if x > 0)
NUMBERS = (2.5, -0.5, 1.5, -2.0, 0.75, 3.0)
WEIGHTS = (1.5, -0.5, 2.0, 0.25, -1.5, 2.5, -2.0, 0.75, 3.0, -0.25, 1.25, -0.75)  # the gradients results are given
GENERATED = 2  # cases drawn at random per check, beside the hand-picked ones
DEFAULT_DIMS = (1, 2)

# A case to make: its tensors' shapes (by name, in order), the operands in call order (a name, or "#": a plain
# number), and what else it needs.
Plan = tuple[tuple[tuple[str, tuple[int, ...]], ...], tuple[str, ...], dict]


def plan(shaped: list[tuple[str, tuple[int, ...]]], operands: list[str], **more: object) -> Plan:
    return tuple(shaped), tuple(operands), more


def random_shape(rng: random.Random, dims: tuple[int, ...], most: int = 12) -> tuple[int, ...]:
    """A shape of one of ``dims`` dimensions, sizes 1 to 3, at most ``most`` entries, not all of size 1."""
    while True:
        shape = tuple(rng.randint(1, 3) for _ in range(rng.choice(dims)))
        if size_of(shape) <= most and size_of(shape) > 1:
            return shape


def broadcast_pair(rng: random.Random, dims: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Two shapes that broadcast to the first's (or a larger) shape: sizes of one, or fewer leading axes."""
    while True:
        full = random_shape(rng, tuple(d for d in dims if d >= 2) or dims)
        other = tuple(1 if rng.random() < 0.5 else n for n in full)
        if rng.random() < 0.5 and len(full) - 1 in dims and len(full) > 1:
            other = other[1:]
        if other != full and shapes.broadcast(full, other) == full:
            return (full, other) if rng.random() < 0.5 else (other, full)


def elementwise(op: str, dims: tuple[int, ...], broadcasting: bool, rng: random.Random) -> list[tuple]:
    vector = (3,) if 1 in dims else (1, 3)
    same = [plan([("a", (2, 3)), ("b", (2, 3))], ["a", "b"]),
            plan([("a", vector), ("b", vector)], ["a", "b"], weighted=True),
            plan([("a", (2, 3)), ("b", (2, 3))], ["a", "b"], weighted=True)]
    for _ in range(GENERATED):
        shape = random_shape(rng, dims)
        same.append(plan([("a", shape), ("b", shape)], ["a", "b"], weighted=True))
    found = [("same-shape", "entry by entry, operands of one shape", same),
             ("number", "with a plain number as the other operand",
              [plan([("a", (2, 3))], ["a", "#"]), plan([("a", vector)], ["a", "#"], weighted=True)])]
    if broadcasting:
        pairs = [((2, 3), vector), ((2, 3), (2, 1)), ((2, 1), (1, 3)), ((1, 3), (2, 3))]
        pairs += [broadcast_pair(rng, dims) for _ in range(GENERATED)]
        found.append(("broadcast", "operands of shapes that broadcast (numpy's rules)",
                      [plan([("a", left), ("b", right)], ["a", "b"], weighted=k != 2)
                       for k, (left, right) in enumerate(pairs)]))
    if TENSOR_OPS[op].domain != "quotient":  # a // a is 1 wherever it is defined: nothing to differentiate
        found.append(("shared", "one tensor as both operands: each entry gets two contributions",
                      [plan([("a", vector)], ["a", "a"]), plan([("a", (2, 3))], ["a", "a"], weighted=True)]))
    return found


def reflected(op: str, dims: tuple[int, ...], rng: random.Random) -> list[tuple]:
    vector = (3,) if 1 in dims else (1, 3)
    cases = [plan([("a", (2, 3))], ["#", "a"]), plan([("a", vector)], ["#", "a"], weighted=True),
             plan([("a", (2, 3))], ["#", "a"], weighted=True)]
    cases += [plan([("a", random_shape(rng, dims))], ["#", "a"], weighted=True) for _ in range(GENERATED)]
    return [("number-first", "a plain number first: Python reaches the reflected method", cases)]


def unary(op: str, dims: tuple[int, ...], rng: random.Random) -> list[tuple]:
    vector = (3,) if 1 in dims else (1, 3)
    cases = [plan([("a", (2, 3))], ["a"]), plan([("a", vector)], ["a"], weighted=True),
             plan([("a", (2, 3))], ["a"], weighted=True)]
    cases += [plan([("a", random_shape(rng, dims))], ["a"], weighted=True) for _ in range(GENERATED)]
    return [("entries", "every entry", cases),
            ("repeated", "a Value held at two places: its gradient adds up",
             [plan([("a", (2, 2))], ["a"], weighted=True, repeat=((2, 0),))])]


def matrix(op: str, dims: tuple[int, ...], rng: random.Random) -> list[tuple]:
    cases = [plan([("a", (1, 3)), ("b", (3, 1))], ["a", "b"]), plan([("a", (2, 3)), ("b", (3, 2))], ["a", "b"]),
             plan([("a", (2, 3)), ("b", (3, 2))], ["a", "b"], weighted=True),
             plan([("a", (1, 2)), ("b", (2, 3))], ["a", "b"], weighted=True)]
    for _ in range(GENERATED):
        n, k, m = (rng.randint(1, 3) for _ in range(3))
        cases.append(plan([("a", (n, k)), ("b", (k, m))], ["a", "b"], weighted=True))
    return [("product", "the matrix product: each entry a row times a column", cases),
            ("shared", "one tensor as both operands", [plan([("a", (2, 2))], ["a", "a"], weighted=True)])]


def along_axes(dims: tuple[int, ...], rng: random.Random, weighted: bool) -> list[Plan]:
    """A reduction along each axis of a (2, 3) tensor (or of a vector), then along random ones."""
    if 2 in dims:
        cases = [plan([("a", (2, 3))], ["a"], axis=1), plan([("a", (2, 3))], ["a"], axis=0, weighted=weighted),
                 plan([("a", (3, 2))], ["a"], axis=-1, weighted=weighted)]
    else:
        cases = [plan([("a", (3,))], ["a"], axis=0)]
    for _ in range(GENERATED):
        shape = random_shape(rng, dims)
        cases.append(plan([("a", shape)], ["a"], axis=rng.randrange(len(shape)), weighted=weighted))
    return cases


def reduce(op: str, dims: tuple[int, ...], axis: bool, rng: random.Random, weighted: bool = True) -> list[tuple]:
    vector = (3,) if 1 in dims else (1, 3)
    whole = [plan([("a", (2, 3))], ["a"]), plan([("a", vector)], ["a"], weighted=weighted)]
    whole += [plan([("a", random_shape(rng, dims))], ["a"], weighted=weighted) for _ in range(GENERATED)]
    found = [("whole", "over every entry", whole)]
    if axis:
        found.append(("axis", "along an axis", along_axes(dims, rng, weighted)))
    return found


def reshape(op: str, dims: tuple[int, ...], rng: random.Random) -> list[tuple]:
    wanted = [((2, 3), (3, 2)), ((2, 3), (6,)), ((6,), (2, 3)), ((2, 3), (1, 6))]
    for _ in range(GENERATED):
        shape = random_shape(rng, dims)
        others = [s for s in (random_shape(rng, dims, size_of(shape)) for _ in range(20))
                  if size_of(s) == size_of(shape) and s != shape]
        if others:
            wanted.append((shape, others[0]))
    fits = [(a, b) for a, b in wanted if len(a) in dims and len(b) in dims]
    return [("reshape", "the same entries in another shape",
             [plan([("a", a)], ["a"], sizes=b, weighted=k > 0) for k, (a, b) in enumerate(fits)])]


def plans(op: str, settings: dict, rng: random.Random) -> list[tuple[str, str, list[Plan]]]:
    """The checks of ``op`` as (name, title, plans), for the course's ``settings``."""
    family = TENSOR_OPS[op].family
    dims = tuple(settings.get("dims", DEFAULT_DIMS))
    if family == "elementwise":
        return elementwise(op, dims, settings.get("broadcasting", True), rng)
    if family == "reflected":
        return reflected(op, dims, rng)
    if family == "unary":
        return unary(op, dims, rng)
    if family == "matrix":
        return matrix(op, dims, rng)
    if family == "reshape":
        return reshape(op, dims, rng)
    return reduce(op, dims, settings.get("axis", True), rng, weighted=family == "reduce")


def draw(values: tuple[float, ...], count: int, rng: random.Random) -> list[float]:
    """``count`` distinct values (repeating only once they run out)."""
    found: list[float] = []
    while len(found) < count:
        found += rng.sample(values, min(count - len(found), len(values)))
    return found


def usable(case: TensorCase) -> bool:
    """Whether the op is defined and smooth at the case's values: every quotient of ``//`` well away from a
    whole number, so a small step never crosses one."""
    if case.spec.domain != "quotient" or case.result_shape is None:
        return True
    left, right = case.operands
    out = case.result_shape

    def entries(x: str | float) -> list[float]:
        if isinstance(x, str):
            t = case.tensor(x)
            return [case.leaves[t.leaves[shapes.source(i, out, t.shape)]] for i in range(size_of(out))]
        return [x] * size_of(out)

    return all(0.1 < (p / q) % 1 < 0.9 for p, q in zip(entries(left), entries(right)))


def make(op: str, method: str, order: int, planned: Plan, rng: random.Random) -> TensorCase:
    """The case ``planned``, with values drawn from ``rng`` where ``op`` is defined."""
    shaped, operands, more = planned
    for _ in range(200):
        case = build(op, method, order, planned, rng)
        if usable(case):
            return case
    raise ValueError(f"no usable values for {op} on {shaped} {operands}")  # a table above that cannot be met


def build(op: str, method: str, order: int, planned: Plan, rng: random.Random) -> TensorCase:
    shaped, operands, more = planned
    spec = TENSOR_OPS[op]
    leaves: list[float] = []
    tensors = []
    for k, (name, shape) in enumerate(shaped):
        divisor = spec.domain in ("divisor", "quotient") and operands.index(name) == 1
        pool = POSITIVE if spec.domain == "positive" else DIVISORS if divisor else POOL
        ids = list(range(len(leaves), len(leaves) + size_of(shape)))
        leaves += draw(pool, size_of(shape), rng)
        for place, same in more.get("repeat", ()) if k == 0 else ():
            ids[place] = ids[same]
        tensors.append(Operand(name, shape, tuple(ids)))
    used = sorted({i for t in tensors for i in t.leaves})
    renumber = {old: new for new, old in enumerate(used)}
    tensors = [Operand(t.name, t.shape, tuple(renumber[i] for i in t.leaves)) for t in tensors]
    called = tuple(x if x != "#" else rng.choice(NUMBERS) for x in operands)
    case = TensorCase(op, method, tuple(leaves[i] for i in used), tuple(tensors), called, more.get("axis"),
                      tuple(more.get("sizes", ())), order=order)
    if more.get("weighted") and case.backward and case.result_shape is not None:
        count = size_of(case.result_shape)
        case = TensorCase(case.op, method, case.leaves, case.tensors, called, case.axis, case.sizes,
                          tuple(WEIGHTS[i % len(WEIGHTS)] for i in range(count)), order)
    return case


def values_given(options: dict) -> bool:
    """Whether the course's Tensor is made from Values (one Value can then be held twice), not from numbers."""
    return options.get("gradients", "entries") == "entries" and options.get("entries", "values") == "values"


def checks(name: str, options: dict) -> list[Check]:
    """The checks of the tensor target ``name``: those of its op, then of each op it grades ``also``
    (named ``<op>-<check>``); a Value held twice only where the course's tensors are given Values."""
    return list(made_checks(name, tuple(sorted(options.items()))))


@functools.lru_cache(maxsize=256)  # asked when the configuration is read and for every exercise made of it
def made_checks(name: str, settings: tuple) -> tuple[Check, ...]:
    options = dict(settings)
    ops = [options["op"], *options.get("also", ())]
    style = (options.get("shape_as"), options.get("axis_keyword"))
    found = []
    for order, op in enumerate(ops):
        method = options.get("method", TENSOR_OPS[op].method) if order == 0 else TENSOR_OPS[op].method
        for check, title, planned in plans(op, options, random.Random(f"{name}:{op}")):
            if check == "repeated" and values_given(options) is False:
                continue
            rng = random.Random(f"{name}:{op}:{check}")
            focus = "data" if TENSOR_OPS[op].family == "index" else "both"
            cases = tuple(make(op, method, order, p, rng) for p in planned)
            if style != (None, None):
                cases = tuple(replace(c, style=style) for c in cases)
            found.append(Check(f"{name}.{check if order == 0 else f'{op}-{check}'}", title, focus, cases))
    return tuple(found)
