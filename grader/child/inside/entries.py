"""Reading what a student's tensor op returns, and applying the op as code applies it.

What a student's op returns is read without running its code where that can be
done: lists and tuples through their base types, a numpy array (or a subclass of
one) through ``numpy.ndarray``'s own ``tolist``, ``ndim`` and ``size`` (never
``__array__``, ``__iter__`` or ``tolist`` of the subclass), a Tensor's entries from
what it stores; never more than ``MAX_ENTRIES`` entries, nor deeper than
``MAX_DEPTH``. numpy is the submission's import, never the child's: its classes are
looked up only if the submission imported it.
"""

import operator
import sys

from .failures import MissingMethod, SubmissionError
from .reading import number, stored_items, stored_or_none
from .styles import styled

OPERATORS = {"add": operator.add, "sub": operator.sub, "mul": operator.mul, "truediv": operator.truediv,
             "floordiv": operator.floordiv, "matmul": operator.matmul}
MAX_ENTRIES = 1024  # entries a result may hold: far more than any case's result, far fewer than a flood
MAX_DEPTH = 8  # axes a result may have
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


def call(T, request, tensors):
    """Apply the op as code does: ``a * b`` (so ``2.5 + a`` reaches ``__radd__`` only as Python reaches it),
    or ``a.dot(b)``, ``a.max(axis=1)``, ``a.reshape(3, 2)``, in the course's call style (``styles``)."""
    if getattr(T, request["method"], None) is None:
        raise MissingMethod(f"{T.__name__} has no method {request['method']}")
    operands = [tensors[x] if kind == "tensor" else x for kind, x in request["operands"]]
    how, name = request["call"]
    if how == "operator":
        return OPERATORS[name](*operands)
    at = next(i for i, (kind, _) in enumerate(request["operands"]) if kind == "tensor")
    others = operands[:at] + operands[at + 1:]
    args, kwargs, _ = styled(getattr(T, request["method"]), request)
    return getattr(operands[at], name)(*others, *args, **kwargs)


def data_of(entries, engine):
    """The entries' numbers: a node's (of ``engine``'s class) value, a number itself."""
    return [engine.data(e) if engine is not None and isinstance(e, engine.V) else number(e) for e in entries]


def like(tensor, flat, shape):
    """``flat`` numbers laid out in ``shape`` as ``tensor`` holds its own gradient (or, before it has one, its
    numbers): a numpy array of floats where that is one (made by the numpy the submission imported), else
    nested lists (a bare number for ``()``)."""
    array, scalar = numpy_types()
    held = stored_or_none(tensor, "grad")
    if not isinstance(held, tuple(t for t in (list, tuple, array) if t is not None)):
        held = storage(tensor, tuple(t for t in (int, float, list, tuple, array, scalar) if t is not None), array)
    if array is not None and isinstance(held, array):
        return sys.modules["numpy"].array(flat, dtype=float).reshape(shape)
    return fill(nest(list(range(len(flat))), shape), flat)


def nest(flat, shape):
    """Row-major ``flat`` as nested lists of ``shape``."""
    if not shape:
        return flat[0]
    step = len(flat) // shape[0] if shape[0] else 0
    return [nest(flat[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0])] if len(shape) > 1 else flat
