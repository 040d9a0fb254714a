"""Answering a whole computation's case: the course's code run on the learner's class.

The code is the course's (its configuration, without its own version of the learner's
function), run on leaves of the learner's class, with the learner's function where it
calls one; then the learner's ``backward()`` runs from its result. The child sends back
the result's value, every leaf's gradient, and the graph as the learner's nodes hold it
(each node's value, gradient, label and operands), from which the grading process tells
which op, if any, is at fault. Everything is read as stored, running none of the class's
code to read it.
"""

import math
import types

from .cases import with_interface
from .failures import error_report
from .graphs import topological
from .reading import address, class_attribute, stored_or_none

MAX_NODES = 2000  # nodes of a computation's graph sent back: a softmax of ten is about 60
MAX_OPERANDS = 8  # operands of a node sent back: an op has one or two; more make a node no op reads
LABELS = ("_op", "op")  # where a node keeps the label of the op that made it


def expression_case(api, request):
    """The computation at the request's inputs, once the class is there and its nodes can be made."""
    if "Value" not in api.get("parts", {}):
        return {"error": {"type": "NotImplementedError", "message": "the class is not defined", "phase": "load",
                          "line": None, "file": None}}
    return with_interface(run_expression)(api, request)


class Tagged:
    """While the course's computation runs, every node an op makes is tagged with the op's name (``tags`` of the
    request: the class's methods, the engine's functions), so that its graph reads each node as the op that made it
    (as a label would), whatever values happen to make two ops agree. The class and namespaces are put back."""

    def __init__(self, engine, namespaces, tags):
        self.engine, self.namespaces, self.tags = engine, namespaces, tags or {}
        self.made = {}  # address -> op name
        self.saved = []

    def tagging(self, original, op):
        made, V = self.made, self.engine.V

        def tag(*args, **kwargs):
            out = original(*args, **kwargs)
            if isinstance(out, V):
                made.setdefault(address(out), op)
            return out

        return tag

    def __enter__(self):
        V = self.engine.V
        for method, op in self.tags.get("methods", {}).items():
            original = class_attribute(V, method)
            if type(original) is types.FunctionType:
                self.saved.append((V, method, type.__dict__["__dict__"].__get__(V).get(method, MISSING)))
                type.__setattr__(V, method, self.tagging(original, op))
        for name, op in self.tags.get("functions", {}).items():
            for space in self.namespaces:
                if callable(space.get(name)):
                    self.saved.append((space, name, space[name]))
                    space[name] = self.tagging(space[name], op)
        return self

    def __exit__(self, *exc):
        for owner, name, before in reversed(self.saved):
            if isinstance(owner, dict):
                owner[name] = before
            elif before is MISSING:
                type.__delattr__(owner, name)
            else:
                type.__setattr__(owner, name, before)
        return False


MISSING = object()


def run_expression(api, request):
    engine = api["interface"]
    phase = "forward"
    tagged = Tagged(engine, api.get("namespaces", ()), request.get("tags"))
    try:
        with tagged:
            return computed(api, request, engine, tagged.made)
    except BaseException as exc:  # noqa: BLE001 - putting the class back failed: said as an error of the code
        return {"error": error_report(exc, phase)}


def computed(api, request, engine, made):
    phase = "forward"
    try:
        leaves = [engine.leaf(x) for x in request["at"]]
        # The submission's names beneath (the engine's own functions, ``exp(z)``, ``add(a, b)``), the course's on top.
        names = {k: v for space in reversed(api.get("namespaces", ())) for k, v in space.items() if k[:2] != "__"}
        namespace = {**names, "math": math, "Value": engine.V, **dict(zip(request["inputs"], leaves))}
        if request.get("function"):
            namespace[request["function"]] = api["parts"][request["needs"]]
        exec(compile(request["code"], "<the course's computation>", "exec"), namespace)
        result = namespace.get(request["result"])
        if not issubclass(type(result), engine.V):
            raise TypeError(f"the computation's {request['result']} is a {type(result).__name__}, not a "
                            f"{engine.V.__name__}")
        phase = "backward"
        read = engine.grad
        if request.get("own_pass"):
            topo = topological(engine, [result], limit=10 * MAX_NODES)
            if engine.mode == "closure":
                for v in (*leaves, *topo):
                    engine.set_grad(v, 0.0)
            engine.own_pass([(result, 1.0)], topo)
            read = engine.passed
        else:
            engine.backward(result)
        nodes, index = graph(engine, result, read, made)
    except BaseException as exc:  # noqa: BLE001 - any failure of student code is data
        return {"error": error_report(exc, phase)}
    return {"data": engine.data(result), "grads": [read(leaf) for leaf in leaves],
            "nodes": nodes, "leaves": [index.get(address(leaf)) for leaf in leaves]}


def graph(engine, root, read, made=None):
    """The nodes reachable from ``root`` through their operands (the root first, at most ``MAX_NODES``), each as
    ``[value, gradient, label, operands, ordered]``, its gradient as ``read`` gives it, its operands by position
    (``None``: a plain number, or a node past the cap) and whether they are kept in order (a list or tuple, not a
    set); and every node's position by its address."""
    order, index, stack = [], {}, [root]
    while stack and len(order) < MAX_NODES:
        node = stack.pop()
        key = address(node)
        if key in index:
            continue
        index[key] = len(order)
        order.append(node)
        stack.extend(child for child in engine.children(node)[:MAX_OPERANDS]
                     if not issubclass(type(child), (int, float)))
    nodes = []
    for node in order:
        label = (made or {}).get(address(node)) or next(
            (found for name in LABELS if type(found := stored_or_none(node, name)) is str), None)
        nodes.append([engine.data(node), read(node), label[:20] if label is not None else None,
                      [index.get(address(child)) for child in engine.children(node)[:MAX_OPERANDS]],
                      engine.ordered(node)])  # operands in order: self first
    return nodes, index
