"""Grading each op in isolation: while one target's op runs, the other targets' methods stand aside.

A learner writes ``__neg__`` as ``self * -1`` and ``tanh`` through ``exp`` and ``/``: that op is right in
itself when the ops it calls are, whatever their own bugs, which their own targets are charged for. So while
the op of one target runs (its cases and their probes), every method of the *other* op targets the exercise
grades (the grading process names them: ``isolation`` in the load request) is wrapped: the wrapper calls the
learner's own method for the value of its result, and returns a node of the learner's class with that value,
the call's operands as its children, and a ``_backward`` whose derivatives are measured from that same method
(a central difference of its forward value, on fresh leaves). A bug in another op's gradient then never
reaches the op under test; a bug in its forward value still does (the value is the learner's), and is charged
to that op as well.

The child still holds no derivative rule: the derivatives are those of the learner's own forward pass. A
wrapper works only while the case it was installed for runs: kept and called later, or put back on the class
for another target's case, it is the learner's own method (the op under test never gets one for itself). A
part built on the class's ops without being one (a course's Tensor whose entries are the learner's Values) has
every op target's methods stand aside while its case runs (``every``): a given ``Tensor.dot`` is then never
charged for the learner's ``__mul__``. The class is put back as it was after each case. Wrappers called from
inside a wrapper (the forward value of ``/`` calling ``*``) are the learner's methods: only the value is
wanted there.
"""

import types

from .reading import class_attribute

STEP = 1e-5  # the central difference's step, relative to the operand (as the grading process's probes)


class Isolated:
    """The other targets' methods of the learner's class, wrapped while one target's op runs."""

    def __init__(self, engine, table, method, every=False):
        self.engine = engine
        own = table.get(method, {}).get("target")
        if every:  # a part built on the class's ops (a course's Tensor of Values): every op stands aside
            self.wanted = dict(table)
        else:
            self.wanted = {} if own is None else {m: spec for m, spec in table.items() if spec.get("target") != own}
        self.saved = {}
        self.active = False  # off while a wrapper's own call of the learner's method runs

    def __enter__(self):
        V = self.engine.V
        namespace = type.__dict__["__dict__"].__get__(V)
        for name, spec in self.wanted.items():
            original = class_attribute(V, name)
            if type(original) is not types.FunctionType:
                continue  # not written, or not a plain method: left as it is
            self.saved[name] = namespace.get(name, MISSING)
            try:
                type.__setattr__(V, name, wrapper(self, original, spec.get("label", name)))
            except (TypeError, AttributeError):  # a class that cannot be changed is graded as it is
                self.saved.pop(name)
        CURRENT[0], self.active = self, True
        return self

    def __exit__(self, *exc):
        CURRENT[0], self.active = None, False
        V = self.engine.V
        for name, before in self.saved.items():
            if before is MISSING:
                type.__delattr__(V, name)
            else:
                type.__setattr__(V, name, before)
        self.saved.clear()
        return False


MISSING = object()
CURRENT = [None]  # the ``Isolated`` whose op is running: a wrapper kept from another case is the learner's method


def wrapper(isolated, original, label):
    """The method standing in for ``original`` while ``isolated`` is the op that runs: the learner's value,
    measured derivatives."""
    engine = isolated.engine

    def stand_in(*args):
        if CURRENT[0] is not isolated or not isolated.active:
            return original(*args)
        isolated.active = False  # what ``original`` calls in turn is the learner's own: only its value counts
        try:
            out = original(*args)
            value = engine.data(out) if isinstance(out, engine.V) else None
        finally:
            isolated.active = True
        if type(value) is not float:
            return out  # no number to stand on: the learner's node, as it is
        operands = [a for a in args if isinstance(a, engine.V)]
        slopes = []

        def derivatives():
            if not slopes:
                slopes.extend(measured(engine, original, args))
            return slopes

        return engine.fixed_node(value, operands, derivatives, label)

    return stand_in


def measured(engine, original, args):
    """d result / d operand for each of ``args`` that is a node: the central difference of ``original``'s
    value, each operand nudged on a fresh leaf and the others made fresh leaves of the same value."""
    values = [engine.data(a) if isinstance(a, engine.V) else None for a in args]
    slopes = []
    for k, x in enumerate(values):
        if x is None:
            continue
        if type(x) is not float:
            raise ArithmeticError(f"an operand of {engine.V.__name__} holds no number to differentiate at")
        h = STEP * max(1.0, abs(x))
        ends = []
        for nudged in (x + h, x - h):
            fresh = [a if v is None else engine.leaf(nudged if j == k else v) for j, (a, v) in
                     enumerate(zip(args, values))]
            ends.append(engine.data(original(*fresh)))
        if type(ends[0]) is not float or type(ends[1]) is not float:
            raise ArithmeticError("the op has no value to differentiate next to these operands")
        slopes.append((ends[0] - ends[1]) / (2 * h))
    return slopes
