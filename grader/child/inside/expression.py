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

from .cases import with_interface
from .failures import MissingMethod, error_report
from .reading import address, number, stored_or_none

MAX_NODES = 2000  # nodes of a computation's graph sent back: a softmax of ten is about 60
MAX_OPERANDS = 8  # operands of a node sent back: an op has one or two; more make a node no op reads
LABELS = ("_op", "op")  # where a node keeps the label of the op that made it


def expression_case(api, request):
    """The computation at the request's inputs, once the class is there and its nodes can be made."""
    if "Value" not in api.get("parts", {}):
        return {"error": {"type": "NotImplementedError", "message": "the class is not defined", "phase": "load",
                          "line": None, "file": None}}
    return with_interface(run_expression)(api, request)


def run_expression(api, request):
    iface = api["interface"]
    phase = "forward"
    try:
        leaves = [iface.leaf(x) for x in request["at"]]
        namespace = {"math": math, "Value": iface.V, **dict(zip(request["inputs"], leaves))}
        if request.get("function"):
            namespace[request["function"]] = api["parts"][request["needs"]]
        exec(compile(request["code"], "<the course's computation>", "exec"), namespace)
        result = namespace.get(request["result"])
        if not issubclass(type(result), iface.V):
            raise TypeError(f"the computation's {request['result']} is a {type(result).__name__}, not a "
                            f"{iface.V.__name__}")
        phase = "backward"
        if getattr(type(result), "backward", None) is None:
            raise MissingMethod(f"{iface.V.__name__} has no method backward")
        result.backward()
        nodes, index = graph(iface, result)
    except BaseException as exc:  # noqa: BLE001 - any failure of student code is data
        return {"error": error_report(exc, phase)}
    return {"data": number(stored_or_none(result, "data")),
            "grads": [number(stored_or_none(leaf, iface.grad)) for leaf in leaves],
            "nodes": nodes, "leaves": [index.get(address(leaf)) for leaf in leaves]}


def graph(iface, root):
    """The nodes reachable from ``root`` through their operands (the root first, at most ``MAX_NODES``), each as
    ``[value, gradient, label, operands, ordered]`` with the operands by position (``None``: a plain number, or a node
    past the cap) and whether they are kept in order (a list or tuple, not a set); and every node's position by
    its address."""
    order, index, stack = [], {}, [root]
    while stack and len(order) < MAX_NODES:
        node = stack.pop()
        key = address(node)
        if key in index:
            continue
        index[key] = len(order)
        order.append(node)
        stack.extend(child for child in iface.children(node)[:MAX_OPERANDS]
                     if not issubclass(type(child), (int, float)))
    nodes = []
    for node in order:
        label = next((found for name in LABELS if type(found := stored_or_none(node, name)) is str), None)
        nodes.append([number(stored_or_none(node, "data")), number(stored_or_none(node, iface.grad)),
                      label[:20] if label is not None else None,
                      [index.get(address(child)) for child in iface.children(node)[:MAX_OPERANDS]],
                      type(stored_or_none(node, iface.attr)) in (list, tuple)])  # operands in order: self first
    return nodes, index
