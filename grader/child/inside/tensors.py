"""Answering a tensor case: the course's Tensor built, its op called, a backward pass from the result.

The child knows no tensor op: it builds the request's tensors, applies the op as
code applies it (``entries``), gives each entry of the result the gradient the
request says and runs the grader's own backward pass over the student's closures.
A course's Tensor is one of two kinds. Its entries are Values of the student's
class (a numpy array of them, a list of lists), whose gradients are the Values'
own: the pass runs the Values' closures, as for an op (``value_case``). Or it holds
plain numbers and keeps its own gradient, an array of its shape, and its ops
attach closures to the Tensors they return (``own_gradient_case``): the pass runs
the Tensors' closures, and each operand's gradient is read with its shape. Either
way the child sends back plain numbers and lists only: the result's shape and
entries, each leaf's gradient, which leaves the pass reached (and for a Tensor with
its own gradient, the shape that gradient has), and the result's entries at the
probes' leaf values.
"""

from .cases import with_interface
from .entries import SubmissionError, call, data_of, fill, like, numbered, shaped
from .failures import error_report
from .graphs import topological
from .isolation import Isolated
from .reading import address, stored_items, stored_or_none
from .styles import assumed_of

MAX_NODES = 20_000  # nodes of a result's graph the backward pass walks: hundreds times any case's
CONTAINERS = (set, frozenset, list, tuple)
PARENTS = ("_parents", "parents", "_inputs", "inputs")  # where a Tensor keeps its operands, beside a Value's names
CLOSURES = ("_backward", "_grad_fn", "grad_fn", "backward_fn")  # where a Tensor with its own gradient keeps its closure


def build(engine, T, request, values, read_back=True):
    """The request's tensors of class ``T`` at leaf ``values``, and (``read_back``) the Value each leaf is in
    them, as read back from the tensors: a Tensor made from numbers makes its own."""
    made = [engine.leaf(x) for x in values] if request["entries"] == "values" else list(values)
    tensors = [T(fill(layout, made)) for layout in request["tensors"]]
    if not read_back:
        return tensors, None
    leaves = [None] * len(values)
    for layout, tensor in zip(request["tensors"], tensors):
        wanted = numbered(layout)
        held = shaped(tensor, engine.V)[1]
        if len(held) != len(wanted):
            raise SubmissionError(f"{T.__name__}() given {len(wanted)} entries holds {len(held)}")
        for leaf, v in zip(wanted, held):
            if leaves[leaf] is None:
                leaves[leaf] = v
    if not all(isinstance(v, engine.V) for v in leaves):
        raise SubmissionError(f"{T.__name__} does not hold its entries as {engine.V.__name__}s")
    return tensors, leaves


def backpropagate(engine, entries, seed, leaves):
    """Give each entry of the result its gradient in ``seed`` and run every step of the result's graph in
    reverse topological order (the grader's pass, not the student's ``backward``): each leaf's gradient,
    and whether the pass reached it."""
    roots = {}
    for v, w in zip(entries, seed):
        if isinstance(v, engine.V):
            roots[address(v)] = (v, roots.get(address(v), (v, 0.0))[1] + w)
    topo = topological(engine, [v for v, _ in roots.values()], limit=MAX_NODES)
    if engine.mode == "closure":
        for v in (*leaves, *topo):
            engine.set_grad(v, 0.0)
    engine.own_pass(list(roots.values()), topo)
    reached = {address(v) for v in topo}
    return {"grads": [engine.passed(v) for v in leaves], "reached": [address(v) in reached for v in leaves]}


def said_style(T, request):
    """The reply's ``assumed``: the call style the op's method showed, where the course said none."""
    assumed = assumed_of(T, request)
    return {"assumed": assumed} if assumed else {}


def probes(T, request, made, engine=None):
    """The result's entries at each probe's leaf values (``made(values)``: the tensors at them)."""
    V = engine.V if engine is not None else None
    return [data_of(shaped(call(T, request, made(values)), V)[1], engine) for values in request["probes"]]


def value_case(api, request):
    """A case of a Tensor of Values: its result, each leaf's gradient after a backward pass, its probes."""
    engine = api["interface"]
    T = api["parts"][request["needs"]]
    phase = "forward"
    try:
        # The Value's op targets stand aside: their gradients' bugs are charged to them, never to a Tensor op.
        with Isolated(engine, api.get("isolation", {}) if engine.mode != "engine" else {}, None, every=True):
            tensors, leaves = build(engine, T, request, request["leaves"])
            shape, entries = shaped(call(T, request, tensors), engine.V)
            reply = {"shape": shape, "data": data_of(entries, engine),
                     "numbers": sum(not isinstance(e, engine.V) for e in entries),
                     **said_style(T, request)}
            if request["seed"]:
                phase = "backward"
                reply.update(backpropagate(engine, entries, request["seed"], leaves))
                phase = "forward"
                reply["probes"] = probes(T, request, lambda values: build(engine, T, request, values, False)[0],
                                         engine)
    except BaseException as exc:  # noqa: BLE001 - any failure of student code is data
        return {"error": error_report(exc, phase)}
    return reply


class Graph:
    """Tensors with their own gradient as the grader's backward pass walks them: operands in the first of the
    usual attributes a node stores a container in (else the one container of Tensors it stores), the closure in
    the first of ``CLOSURES``."""

    grad = "grad"

    def __init__(self, T, names):
        self.T, self.names = T, (*names, *PARENTS)
        self.found = {}  # by class: where its nodes keep their operands, once told

    def operands_attribute(self, node):
        """Where ``node`` keeps its operands, or ``None`` where that cannot be told."""
        kind = type(node)
        if kind in self.found:
            return self.found[kind]
        for name in self.names:
            if isinstance(stored_or_none(node, name), CONTAINERS):
                self.found[kind] = name
                return name
        held = [name for name, value in stored_items(node) if isinstance(value, CONTAINERS) and value
                and all(isinstance(t, self.T) for t in value)]
        return held[0] if len(held) == 1 else None

    def children(self, node):
        name = self.operands_attribute(node)
        held = stored_or_none(node, name) if name is not None else None
        return [t for t in held if isinstance(t, self.T)] if isinstance(held, CONTAINERS) else []

    def step(self, node):
        for name in CLOSURES:
            found = stored_or_none(node, name)
            if callable(found):
                return found
        return None


def gradient_of(tensor, leaves):
    """A Tensor's own gradient: its shape (``None`` if it holds none), and one number per leaf of it where the
    shape is the Tensor's (``leaves`` of them), else a description of each."""
    held = stored_or_none(tensor, Graph.grad)
    if held is None:
        return None, [{"invalid": "no gradient"}] * leaves
    shape, entries = shaped(held, None)
    if len(entries) != leaves:
        return shape, [{"invalid": f"a gradient of {len(entries)} entries"}] * leaves
    return shape, data_of(entries, None)


def own_backward(api, T, request, tensors, result, shape):
    """Give the result the gradient ``seed`` (as it holds its numbers), every other Tensor of its graph zeros,
    and run the Tensors' closures in reverse topological order: each operand's gradient and its shape."""
    graph = Graph(T, api["children_names"])
    topo = topological(graph, [result] if isinstance(result, T) else [], limit=MAX_NODES)
    for t in (*tensors, *topo):
        size, entries = shaped(t, None)
        setattr(t, graph.grad, like(t, [0.0] * len(entries), size))
    if topo:
        setattr(result, graph.grad, like(result, request["seed"], shape))
    for t in reversed(topo):
        step = graph.step(t)
        if step is not None:
            step()
    walked = {address(t) for t in topo}
    grads, reached, shapes = {}, {}, []
    for layout, tensor in zip(request["tensors"], tensors):
        leaves = numbered(layout)
        found_shape, found = gradient_of(tensor, len(leaves))
        shapes.append(found_shape)
        for leaf, g in zip(leaves, found):
            grads[leaf], reached[leaf] = g, address(tensor) in walked
    count = len(request["leaves"])
    known = isinstance(result, T) and graph.operands_attribute(result) is not None  # else reaching says nothing
    return {"grads": [grads[i] for i in range(count)], "grad_shapes": shapes,
            "reached": [reached[i] for i in range(count)] if known or not isinstance(result, T) else None}


def own_gradient_case(api, request):
    """A case of a Tensor with its own gradient: its result, each operand's gradient after a backward pass from
    it, and its probes."""
    T = api["parts"][request["needs"]]
    phase = "forward"
    try:
        tensors = [T(fill(layout, request["leaves"])) for layout in request["tensors"]]
        result = call(T, request, tensors)
        shape, entries = shaped(result, None)
        reply = {"shape": shape, "data": data_of(entries, None), "numbers": 0, **said_style(T, request)}
        if request["seed"]:
            phase = "backward"
            reply.update(own_backward(api, T, request, tensors, result, shape))
            phase = "forward"
            reply["probes"] = probes(T, request, lambda values: [T(fill(x, values)) for x in request["tensors"]])
    except BaseException as exc:  # noqa: BLE001 - any failure of student code is data
        return {"error": error_report(exc, phase)}
    return reply


value_answer = with_interface(value_case)


def tensor_answer(api, request):
    """A tensor case: of a Tensor with its own gradient, or of a Tensor of Values once the grader knows how to
    make the student's Values (the class must be there)."""
    if request["gradients"] == "tensor":
        return own_gradient_case(api, request)
    if "Value" not in api["parts"]:
        return {"error": {"type": "NotImplementedError", "message": "no Value class to make the entries of",
                          "phase": "load", "line": None, "file": None}}
    return value_answer(api, request)
