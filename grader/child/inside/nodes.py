"""Reading and writing a node's parts by attribute path, and the nodes micrograde makes of the learner's class.

What every ``Engine`` (``engine``) needs of a node, whatever names its engine gives the parts: a number
made like the node's value (an array of its shape for a numpy array), an attribute path read as the node
stores it and written without changing a record another node shares, and the *fixed* nodes, whose value
and local derivatives are numbers the grading process computed, made so that the learner's engine (or
micrograde's own pass) runs through them like any of its own.
"""

import sys

from .failures import SubmissionError
from .forms import path_of
from .reading import address, stored

CONTAINERS = (set, frozenset, list, tuple)


def array_type():
    """numpy's array class, where the submission imported numpy (the child never imports it itself)."""
    numpy = sys.modules.get("numpy")
    found = getattr(numpy, "ndarray", None) if numpy is not None else None
    return found if isinstance(found, type) else None


def like(value, x):
    """The number ``x`` as ``value`` holds numbers: an array of ``value``'s shape full of ``x`` for an array,
    else the float itself."""
    array = array_type()
    if array is not None and isinstance(value, array):
        return sys.modules["numpy"].full(array.shape.__get__(value), float(x))
    return float(x)


def read(obj, path):
    """What ``obj`` holds at the attribute ``path``: the first attribute as the object stores it (none of the
    class's code runs), those past it as Python reads them (a course's own record); ``AttributeError`` when
    there is none."""
    value = stored(obj, path[0])
    for name in path[1:]:
        value = getattr(value, name)
    return value


def write(obj, path, value):
    """Set the attribute ``path`` of ``obj`` to ``value``. An object met on the way is copied first and the copy
    put in its place, so that a record two nodes share (a default argument's) is never changed for both."""
    import copy

    for name in path[:-1]:
        inner = copy.copy(getattr(obj, name))
        setattr(obj, name, inner)
        obj = inner
    setattr(obj, path[-1], value)



class Traced(float):
    """A local derivative micrograde stores on a node of its own, that reports each time it is multiplied (by the
    gradient flowing into the node, as a backward pass over stored pairs does); the product is a plain number."""

    def __new__(cls, value, on_multiply=None):
        made = super().__new__(cls, value)
        made.on_multiply = on_multiply
        return made

    def __mul__(self, other):
        if self.on_multiply is not None:
            self.on_multiply(other)
        product = float.__mul__(self, other)
        return other * float(self) if product is NotImplemented else product

    __rmul__ = __mul__


def get(obj, path):
    """``obj``'s attribute ``path``, read as Python reads it (the way a learner's closure reads it too)."""
    for name in path:
        obj = getattr(obj, name)
    return obj


def one_path(form):
    """The attributes a form reads of ``node`` when it is no more than that (a tuple), else ``None``."""
    if form is None:
        return None
    path = path_of(form, "node")
    return tuple(path) if path is not None else None


def shares(returned, operands, V):
    """A step's result read as ``(operand, share)`` pairs: the pairs it returned, one share per operand, or
    a lone share for a node of one operand."""
    if isinstance(returned, CONTAINERS) and returned and all(
            isinstance(p, tuple) and len(p) == 2 and isinstance(p[0], V) for p in returned):
        return list(returned)
    if isinstance(returned, (list, tuple)):
        # One per operand, as the engine pairs them (a share past the operands kept, or an operand past the shares,
        # goes nowhere: what the node's record or step leaves out is seen in the gradients).
        return list(zip(operands, returned))
    if len(operands) == 1:
        return [(operands[0], returned)]
    raise SubmissionError(f"the chain-rule step returned a {type(returned).__name__}, not one gradient per operand")


def fixed_node(engine, data, operands, derivs, label, on_backward=None):
    """A node of the learner's class whose value and local derivatives micrograde gives: in the ``closure`` mode
    with a closure of micrograde's (run by any pass, the learner's too); otherwise micrograde's own pass knows its
    step (``Engine.fixed``)."""
    children = [o for o in operands if isinstance(o, engine.V)]
    if engine.mode == "returns" and on_backward is not None:
        return stepped_node(engine, data, children, [d for o, d in zip(operands, derivs) if isinstance(o, engine.V)],
                            on_backward)
    out = engine.make(data, children, label)
    if engine.mode != "closure":
        engine.fixed[address(out)] = (out, list(operands), derivs if callable(derivs) else list(derivs))
        return out
    V, path = engine.V, engine.grad_path

    def _backward():
        if on_backward is not None:
            on_backward()
        g = get(out, path)
        for operand, d in zip(operands, derivs() if callable(derivs) else derivs):
            if isinstance(operand, V):
                engine.put_grad(operand, get(operand, path) + d * g)

    engine.set_step(out, _backward)
    return out


def stepped_node(engine, data, children, derivs, on_backward):
    """A node whose chain-rule step is micrograde's, for a backward pass the learner's code runs (``returns``
    mode): a node an op of the engine makes of ``children`` (so its record is the engine's own: not a leaf,
    its inputs where the engine keeps them), given ``data`` as its value, and its step (the callee of the
    course's ``step`` form, or the pairs of ``local``) replaced by one that reports the gradient it is given
    (``on_backward(g)``) and returns ``derivs`` times it, in the shape the engine's own step returns."""
    node = engine.carrier(children)
    write(node, engine.data_path, like(engine.value(node), data))
    if engine.operands_path is not None:
        held = read(node, engine.operands_path)
        write(node, engine.operands_path, (list if isinstance(held, list) else tuple)(children))
    if "local" in engine.forms:
        # The pass runs the node's step when it multiplies a local derivative by the node's gradient: the first
        # pair's derivative reports that (and the gradient it is multiplied by) each time.
        pairs = [(c, Traced(d, on_backward if k == 0 else None)) for k, (c, d) in enumerate(zip(children, derivs))]
        write(node, path_of(engine.forms["local"], "node"), pairs)
        return node
    form = engine.forms["step"]
    callee = path_of(form[1], "node")
    position = next(i for i, a in enumerate(form[2]) if a == ["name", "grad"] or a == ("name", "grad"))
    several, one = engine.step_shape

    def step(*args, **kwargs):
        g = args[position]
        on_backward(g)
        found = [(c, d * g) for c, d in zip(children, derivs)]
        if several == "pairs":
            return found
        return found[0][1] if len(found) == 1 and one == "bare" else tuple(share for _, share in found)

    write(node, callee, step)
    return node
