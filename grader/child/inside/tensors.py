"""Answering a tensor case: the course's Tensor built from the student's Values, its op, a backward pass.

The child knows no tensor op: it builds the request's tensors (nested lists of
the student's Values, or of plain numbers where the course's Tensor makes its own
Values), applies the op as code applies it (an operator, so a reflected method
is reached only as Python reaches it, or a method call), gives each entry of the
result the gradient the request says and runs the grader's own backward pass
over the student's closures. It sends back plain numbers and lists only: the
result's shape and entries, each leaf's gradient, which leaves the pass reached,
and the result's entries at the probes' leaf values.

What a student's op returns is read without running its code where that can be
done: lists and tuples through their base types, a numpy array (or a subclass of
one) through ``numpy.ndarray``'s own ``tolist`` and ``size`` (never ``__array__``,
``__iter__`` or ``tolist`` of the subclass), a Tensor's entries from what it stores;
never more than ``MAX_ENTRIES`` entries, nor deeper than ``MAX_DEPTH``. numpy is
the submission's import, never the child's: its classes are looked up only if
the submission imported it.
"""

import operator
import sys

from .cases import with_interface
from .failures import MissingMethod, SubmissionError, error_report
from .graphs import run_closures, topological
from .reading import address, number, stored_items, stored_or_none

OPERATORS = {"add": operator.add, "sub": operator.sub, "mul": operator.mul, "truediv": operator.truediv,
             "floordiv": operator.floordiv, "matmul": operator.matmul}
MAX_ENTRIES = 1024  # entries a result may hold: far more than any case's result, far fewer than a flood
MAX_DEPTH = 8  # axes a result may have
MAX_NODES = 100_000  # nodes of a result's graph the backward pass walks
# Where a Tensor keeps its entries, most likely first; else the one list, tuple or array it stores.
STORAGE = ("data", "_data", "values", "_values", "rows", "_rows", "array", "arr", "entries", "elements", "items",
           "tensor", "matrix")


def numpy_types():
    """numpy's array class and its scalars' base class, where the submission imported numpy (else ``None``)."""
    numpy = sys.modules.get("numpy")
    found = [getattr(numpy, name, None) if numpy is not None else None for name in ("ndarray", "generic")]
    return tuple(t if isinstance(t, type) else None for t in found)


def items(x, array):
    """The items of ``x`` if it is a list, a tuple or an array of at least one axis (``None`` for an entry),
    read through the base types' own methods, never more than ``MAX_ENTRIES`` of them."""
    kind = type(x)
    if issubclass(kind, (list, tuple)):
        base = list if issubclass(kind, list) else tuple
        if base.__len__(x) > MAX_ENTRIES:
            raise SubmissionError(f"returned more than {MAX_ENTRIES} entries")
        return list(base.__iter__(x))
    if array is not None and issubclass(kind, array) and array.ndim.__get__(x) > 0:
        if array.size.__get__(x) > MAX_ENTRIES:
            raise SubmissionError(f"returned more than {MAX_ENTRIES} entries")
        return array.tolist(x)
    return None


def storage(x, kinds, array):
    """Where ``x`` keeps its entries: ``x`` itself if it is one of ``kinds`` (a Value, a number, a list, a tuple,
    an array); else the first of ``STORAGE`` it stores that is one of those (a Tensor's ``.data``), or the
    only list, tuple or array it stores."""
    if isinstance(x, kinds):
        return x
    for name in STORAGE:
        found = stored_or_none(x, name)
        if found is not None and isinstance(found, kinds):
            return found
    held = [value for _, value in stored_items(x) if isinstance(value, (list, tuple, *(t for t in (array,) if t)))]
    if len(held) == 1:
        return held[0]
    raise SubmissionError(f"returned a {type(x).__name__}, which holds no entries micrograde can find "
                          f"(a Value, a number, a list, an array, or one of them in .{', .'.join(STORAGE[:5])}...)")


def entry(x, array, scalar):
    """An entry as itself: the item of a 0-d array, a numpy scalar as a Python number."""
    if array is not None and issubclass(type(x), array):
        return array.tolist(x)
    if scalar is not None and issubclass(type(x), scalar):
        return scalar.item(x)
    return x


def shaped(result, V):
    """The shape of ``result`` and its entries, row by row, as numpy would lay them out."""
    array, scalar = numpy_types()
    kinds = tuple(t for t in (V, int, float, list, tuple, array, scalar) if t is not None)
    level, shape = [result], []
    for depth in range(MAX_DEPTH + 1):
        level = [x if type(x) is V else storage(x, kinds, array) for x in level]
        found = [None if type(x) is V else items(x, array) for x in level]
        if all(f is None for f in found):
            return shape, [entry(x, array, scalar) for x in level]
        if depth == MAX_DEPTH:
            raise SubmissionError(f"returned a result nested more than {MAX_DEPTH} deep")
        if any(f is None for f in found) or len({len(f) for f in found}) != 1:
            raise SubmissionError("returned a ragged result: its rows are not all of one length")
        shape.append(len(found[0]))
        level = [y for f in found for y in f]
        if len(level) > MAX_ENTRIES:
            raise SubmissionError(f"returned more than {MAX_ENTRIES} entries")
    raise SubmissionError("unreachable")  # the loop returns or raises at MAX_DEPTH


def fill(layout, made):
    """The nested lists ``layout`` (of leaf numbers) with each leaf's object in its place."""
    return [fill(x, made) for x in layout] if isinstance(layout, list) else made[layout]


def numbered(layout):
    """The leaf numbers of ``layout``, row by row."""
    return [n for x in layout for n in numbered(x)] if isinstance(layout, list) else [layout]


def build(iface, T, request, values, read_back=True):
    """The request's tensors of class ``T`` at leaf ``values``, and (``read_back``) the Value each leaf is in
    them, as read back from the tensors: a Tensor made from numbers makes its own."""
    made = [iface.leaf(x) for x in values] if request["entries"] == "values" else list(values)
    tensors = [T(fill(layout, made)) for layout in request["tensors"]]
    if not read_back:
        return tensors, None
    leaves = [None] * len(values)
    for layout, tensor in zip(request["tensors"], tensors):
        wanted = numbered(layout)
        held = shaped(tensor, iface.V)[1]
        if len(held) != len(wanted):
            raise SubmissionError(f"{T.__name__}() given {len(wanted)} entries holds {len(held)}")
        for leaf, v in zip(wanted, held):
            if leaves[leaf] is None:
                leaves[leaf] = v
    if not all(isinstance(v, iface.V) for v in leaves):
        raise SubmissionError(f"{T.__name__} does not hold its entries as {iface.V.__name__}s")
    return tensors, leaves


def call(T, request, tensors):
    """Apply the op as code does: ``a * b`` (so ``2.5 + a`` reaches ``__radd__`` only as Python reaches it),
    or ``a.dot(b)``, ``a.max(axis=1)``, ``a.reshape(3, 2)``."""
    if getattr(T, request["method"], None) is None:
        raise MissingMethod(f"{T.__name__} has no method {request['method']}")
    operands = [tensors[x] if kind == "tensor" else x for kind, x in request["operands"]]
    how, name = request["call"]
    if how == "operator":
        return OPERATORS[name](*operands)
    at = next(i for i, (kind, _) in enumerate(request["operands"]) if kind == "tensor")
    others = operands[:at] + operands[at + 1:]
    return getattr(operands[at], name)(*others, *request["args"], **request["kwargs"])


def data_of(entries, V):
    return [number(stored_or_none(e, "data")) if isinstance(e, V) else number(e) for e in entries]


def backpropagate(iface, entries, seed, leaves):
    """Give each entry of the result its gradient in ``seed`` and run every closure of the result's graph in
    reverse topological order (the grader's pass, not the student's ``backward``): each leaf's gradient,
    and whether the pass reached it."""
    roots = {}
    for v, w in zip(entries, seed):
        if isinstance(v, iface.V):
            roots[address(v)] = (v, roots.get(address(v), (v, 0.0))[1] + w)
    topo = topological(iface, [v for v, _ in roots.values()], limit=MAX_NODES)
    for v in (*leaves, *topo):
        setattr(v, iface.grad, 0.0)
    for v, w in roots.values():
        setattr(v, iface.grad, w)
    run_closures(iface, topo)
    reached = {address(v) for v in topo}
    return {"grads": [number(stored_or_none(v, iface.grad)) for v in leaves],
            "reached": [address(v) in reached for v in leaves]}


def tensor_case(api, request):
    """The result of one tensor case, its gradients after a backward pass from it, and its probes."""
    iface = api["interface"]
    T = api["parts"][request["needs"]]
    phase = "forward"
    try:
        tensors, leaves = build(iface, T, request, request["leaves"])
        shape, entries = shaped(call(T, request, tensors), iface.V)
        reply = {"shape": shape, "data": data_of(entries, iface.V),
                 "numbers": sum(not isinstance(e, iface.V) for e in entries)}
        if request["seed"]:
            phase = "backward"
            reply.update(backpropagate(iface, entries, request["seed"], leaves))
            phase = "forward"
            reply["probes"] = [data_of(shaped(call(T, request, build(iface, T, request, values, False)[0]),
                                              iface.V)[1], iface.V) for values in request["probes"]]
    except BaseException as exc:  # noqa: BLE001 - any failure of student code is data
        return {"error": error_report(exc, phase)}
    return reply


answer = with_interface(tensor_case)


def tensor_answer(api, request):
    """A tensor case, once the grader knows how to make the student's Values (the class must be there)."""
    if "Value" not in api["parts"]:
        return {"error": {"type": "NotImplementedError", "message": "no Value class to make the entries of",
                          "phase": "load", "line": None, "file": None}}
    return answer(api, request)
