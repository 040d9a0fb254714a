"""How to make nodes of the student's class, found by probing its constructor once."""

import types

from .failures import InterfaceError
from .reading import stored, stored_items, stored_or_none


def holds(container, items):
    """True when ``container`` holds exactly the objects ``items`` (by identity, not by ``==``)."""
    try:
        found = list(container)
    except TypeError:
        return False
    return len(found) == len(items) and all(any(f is i for f in found) for i in items)


class Interface:
    """How to make nodes of the student's class, and what it names their parts.

    Real engines write ``Value(data, _children=(), _op='')``, ``Value(data, children, op)``,
    keyword-only arguments, a dataclass whose second field is ``grad``, or no children
    argument at all, and keep the operands in ``_prev``, ``_children``, ``prev`` or
    ``parents``, as a set, list or tuple (or ``None`` on a leaf). Some name the number ``value``,
    the gradient ``gradient`` or ``g``, and the closure ``grad_fn`` or ``backward``. The constructor is
    probed with two distinct leaves, the names are found by watching what the class's own
    nodes store and what an op's closure writes, and nothing about the class is changed.
    ``inferred`` says which names differ from the exercise's. ``children_names`` are where a class
    may keep a node's operands, in the order they are tried (the grading process sends them).
    """

    def __init__(self, V, children_names):
        self.V = V
        self.children_names = tuple(children_names)
        self.leaf, a, b = probe_leaf(V)
        self.equality = comparison(a, self.leaf(2.0))
        self.data = data_name(a, b, 2.0, 3.0)
        self.grad = gradient_name(a, self.data)
        self.closure = "_backward"
        self.attr, self.make = self.children_of(a, b)
        if self.grad != "grad" or stored_or_none(a, "grad") is None or "_backward" not in class_names_used(V):
            # Names other than the exercise's: watch an op's result (only then is any op run here).
            self.closure, grad = closure_and_gradient(self, a, b)
            self.grad = grad or self.grad
        self.inferred = {role: name for role, name in (("data", self.data), ("grad", self.grad),
                                                        ("_backward", self.closure)) if name != role}

    def children_of(self, a, b):
        """Where the class keeps a node's operands, and how to make a node with given operands.

        The operands' attribute is one that is a container (or ``None``) on a leaf, and that the
        class's own ``backward()`` reads (a label that happens to be given the tuple of children
        is not, nor is a gradient)."""
        V = self.V
        used = names_used(getattr(V, "backward", None)) or set(self.children_names)
        empty = {n for n, v in stored_items(a) if v is None or (isinstance(v, CONTAINERS) and len(v) == 0)}
        tried = []
        for shown, make in self.constructions():
            tried.append(shown)
            try:
                node = make(5.0, (a, b), "+")
            except Exception:  # noqa: BLE001 - this constructor does not take children that way
                continue
            attr = next((n for n, v in stored_items(node) if n in empty and n in used and holds(v, (a, b))), None)
            if attr is not None:
                return attr, make
        attr = next((n for n in self.children_names if n in empty), None)
        if attr is None:
            raise InterfaceError(f"{V.__name__} keeps a node's operands in none of {', '.join(self.children_names)} "
                                 f"(a set, list or tuple, or None on a leaf), and none of {', '.join(tried)} "
                                 f"puts them anywhere its backward() reads")
        kind = type(stored(a, attr)) if stored(a, attr) is not None else tuple

        def make(d, ch, op):
            node = self.leaf(d)
            setattr(node, attr, kind(ch))
            return node

        return attr, make

    def constructions(self):
        """Ways of making a node with operands: the usual ones, then one per parameter of the
        constructor that could take them (by keyword, with the op's label where there is a place)."""
        V = self.V
        yield "V(x, children, op)", lambda d, ch, op: V(d, tuple(ch), op)
        yield "V(x, _children=children, _op=op)", lambda d, ch, op: V(d, _children=tuple(ch), _op=op)
        yield "V(x, children)", lambda d, ch, op: V(d, tuple(ch))
        yield "V(x, children=children, op=op)", lambda d, ch, op: V(d, children=tuple(ch), op=op)
        for name, label in keyword_places(V):
            if label is None:
                yield f"V(x, {name}=children)", lambda d, ch, op, name=name: V(d, **{name: tuple(ch)})
            else:
                yield (f"V(x, {name}=children, {label}=op)",
                       lambda d, ch, op, name=name, label=label: V(d, **{name: tuple(ch), label: op}))

    def children(self, node):
        try:
            value = stored(node, self.attr)
            return list(value) if isinstance(value, CONTAINERS) else []
        except AttributeError:
            return []

    def step(self, node):
        """The node's own closure (its ``_backward``, whatever the class names it), or ``None``."""
        found = stored_or_none(node, self.closure)
        return found if callable(found) else None


def probe_leaf(V):
    """How to make a leaf of ``V`` from a number (``V(x)``, ``V(x, ())`` or ``V(x, (), '')``, the first that
    works), with two distinct leaves made so, of 2 and 3; ``InterfaceError`` saying what was tried."""
    tried = []
    for shown, leaf in (("(x)", V), ("(x, ())", lambda d: V(d, ())), ("(x, (), '')", lambda d: V(d, (), ""))):
        tried.append(V.__name__ + shown)
        try:
            return leaf, leaf(2.0), leaf(3.0)
        except ModuleNotFoundError:
            raise  # the constructor uses a module that is not installed: that, not the interface, fails
        except Exception as exc:  # noqa: BLE001 - try the next way of making a leaf
            failure = exc
    raise InterfaceError(f"its constructor {V.__name__}{signature(V)} cannot make a {V.__name__} from "
                         f"a single number (tried {', '.join(tried)}; {V.__name__}(2.0) raised "
                         f"{type(failure).__name__}: {failure})")


CONTAINERS = (set, frozenset, list, tuple)
OP_NAMES = ("_op", "op")


def keyword_places(V):
    """The constructor's parameters, after the first, that can be given by keyword and could take a
    node's operands; with the parameter that takes the op's label, if any."""
    try:
        import inspect

        parameters = list(inspect.signature(V).parameters.values())[1:]
    except (TypeError, ValueError):
        return []
    names = [p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    label = next((n for n in OP_NAMES if n in names), None)
    return [(n, label) for n in names if n not in OP_NAMES and n not in ("_children", "children")]


def data_name(a, b, x, y):
    """The attribute leaves keep their number in: ``data`` if it holds it, else the only one that holds the
    number each leaf was made of (``value``, ``val``); ``data`` when that says nothing. ``a`` and ``b`` were
    made of the floats ``x`` and ``y``: what holds them is found by identity, else by a float's own equality."""
    def holding(leaf, number):
        items = stored_items(leaf)
        return ({n for n, v in items if v is number}
                or {n for n, v in items if type(v) is float and float.__eq__(v, number)})

    found = holding(a, x) & holding(b, y)
    if "data" in found or len(found) != 1:
        return "data"
    return next(iter(found))


def gradient_name(leaf, data="data"):
    """The attribute a leaf keeps its gradient in: ``grad`` if it stores one, else its only other number
    that starts at 0 (``gradient``, ``g``); ``grad`` when that says nothing."""
    numbers = [n for n, v in stored_items(leaf) if n != data and zero(v)]
    if "grad" in numbers or len(numbers) != 1:
        return "grad"
    return numbers[0]


def zero(value):
    """Whether a stored value is the number 0 (compared by ``float``'s and ``int``'s own methods,
    never a subclass's ``__eq__``)."""
    if isinstance(value, float):
        return float.__eq__(value, 0.0)
    return isinstance(value, int) and not isinstance(value, bool) and int.__eq__(value, 0)


def closure_and_gradient(iface, a, b):
    """The name of the attribute an op's result keeps its closure in, and the gradient's, found by
    watching a student op's result: the closure is the function it stores that, run with the result's
    gradient at 1, adds to a number the operands store. ``(_backward, None)`` when nothing shows it."""
    for apply in (lambda: a * b, lambda: a + b, lambda: a.tanh(), lambda: a ** 2):
        try:
            out = apply()
        except Exception:  # noqa: BLE001 - an op not written yet: another one may show it
            continue
        if not isinstance(out, iface.V):
            continue
        functions = [(n, f) for n, f in stored_items(out) if isinstance(f, types.FunctionType)]
        functions.sort(key=lambda item: item[0] != "_backward")
        numbers = [n for n, v in stored_items(a) if n != iface.data and isinstance(v, (int, float))]
        for name, function in functions:
            before = {n: stored_or_none(a, n) for n in numbers}
            try:
                for n in numbers:
                    setattr(out, n, 1.0)
                function()
                changed = [n for n in numbers if stored_or_none(a, n) is not before[n]]  # a new number
            except Exception:  # noqa: BLE001 - not a closure that runs on its own
                changed = []
            for n, v in before.items():
                setattr(a, n, v)
            if changed:
                return name, ("grad" if "grad" in changed else changed[0])
    return "_backward", None


def comparison(a, b):
    """How two distinct nodes with the same value compare: ``value`` when they are equal (they
    collapse in a set), ``unhashable`` when the class cannot go in a set, else ``None``."""
    try:
        hash(a)
    except TypeError:
        return "unhashable"
    except Exception:  # noqa: BLE001 - a __hash__ that raises something else: not this question
        return None
    try:
        return "value" if (a == b) is True else None
    except Exception:  # noqa: BLE001
        return None


def signature(V):
    """The constructor's parameters as the student wrote them, for a message."""
    try:
        import inspect

        return str(inspect.signature(V))
    except (TypeError, ValueError):
        return "(...)"


def class_names_used(V):
    """Every name the functions of ``V`` and its bases refer to (read from the classes' own
    dictionaries, running none of the student's code)."""
    names = set()
    for klass in type.__dict__["__mro__"].__get__(V)[:-1]:
        for value in type.__dict__["__dict__"].__get__(klass).values():
            if type(value) is types.FunctionType:
                names |= names_used(value)
    return names


def names_used(function):
    """Every attribute and global name a function's code (and the code nested in it) refers to."""
    code = getattr(function, "__code__", None)
    names, stack = set(), [code] if code is not None else []
    while stack:
        code = stack.pop()
        names.update(code.co_names)
        stack.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
    return names
