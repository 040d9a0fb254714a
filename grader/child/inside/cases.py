"""Answering one case: an op's values, gradients and probes; a ``backward()`` run; training steps.

The child knows no op and no derivative rule, and judges nothing: it sends back
numbers (values, gradients, the order in which ``_backward`` ran) and the
grading process decides what they mean.
"""

import types

from .failures import InterfaceError, MissingMethod, error_report
from .graphs import build, hashed_by_position, observe, operand_positions, probe, propagate
from .interface import Interface, names_used
from .isolation import Isolated
from .reading import computed_attributes, number, stored_or_none


def op_case(api, request):
    """Forward values, gradients (by the grader's own traversal) and probes of one op case, the other
    targets' methods standing aside while it runs (``isolation``)."""
    iface = api["interface"]
    phase = "forward"
    method = next((spec[4] for spec in request["nodes"] if spec[0] == "student"), None)
    moved = []  # student nodes whose op attached its closure to an operand
    try:
        with Isolated(iface, api.get("isolation", {}), method):
            nodes = build(iface, request["nodes"], moved=moved)
            data = observe(nodes, iface.data)
            phase = "backward"
            for v in nodes:
                if not isinstance(v, (int, float)):
                    setattr(v, iface.grad, 0.0)
            propagate(iface, nodes[-1], nodes)
            grads = observe(nodes, iface.grad)
            # For each student node, which of the request's nodes its children hold (by identity).
            children = [operand_positions(iface, v, nodes) if spec[0] == "student" else None
                        for v, spec in zip(nodes, request["nodes"])]
            phase = "forward"
            probes = [probe(iface, node, args) for node, args in request["probes"]]
    except BaseException as exc:  # noqa: BLE001 - any failure of student code is data
        return {"error": error_report(exc, phase)}
    return {"data": data, "grads": grads, "probes": probes, "children": children, "moved": moved}


def backward_case(api, request):
    """Call the student's ``backward()`` on graphs of fixed nodes.

    Several roots may share leaves (same names): each ``backward()`` runs in
    turn and the gradients after each are reported, with the order in which
    the nodes' ``_backward`` closures ran and the root's gradient when its own
    ran (the seed, wherever the pass set it).
    """
    iface = api["interface"]
    leaves = {}
    runs = []
    trace = []
    seed = []  # the root's gradient when its own _backward first ran: the seed the pass gave it
    root = []
    positions = {}
    restore = None

    def record(index):
        if root and index == root[0][0] and not seed:
            seed.append(number(stored_or_none(root[0][1], iface.grad)))
        trace.append(index)

    try:
        restore = hashed_by_position(iface.V, positions)
        for nodes in request["exprs"]:
            trace.clear()
            seed.clear()
            root.clear()
            built = build(iface, nodes, record, leaves, positions)
            root.append((len(built) - 1, built[-1]))
            if getattr(type(built[-1]), "backward", None) is None:
                raise MissingMethod(f"{iface.V.__name__} has no method backward")
            built[-1].backward()
            runs.append({"grads": observe(built, iface.grad), "trace": list(trace), "seed": seed[0] if seed else None})
    except BaseException as exc:  # noqa: BLE001
        return {"error": error_report(exc, "backward")}
    finally:
        if restore is not None:
            restore()
    return {"runs": runs}


MAX_RESULTS = 64  # numbers a called function may send back: a gradient of a few inputs, never a stream


def call_case(api, request):
    """Call a graded function (``needs``) with plain numbers; send back what it returns, as numbers, in order."""
    try:
        result = api["parts"][request["needs"]](*request["args"])
        numbers = []
        for x in result:  # a list, a tuple, an array: anything that gives the numbers in order
            if len(numbers) == MAX_RESULTS:
                break
            numbers.append(number(x))
    except BaseException as exc:  # noqa: BLE001 - any failure of student code is data
        return {"error": error_report(exc, "call")}
    return {"result": numbers}


def on_training_engine(function, engine):
    """``function`` as written, but with the name ``Value`` meaning the training engine's.

    ``train_step`` is graded on the grader's training engine, so a loss it starts
    as ``Value(0.0)`` must be one of that engine's Values, not one of the student's.
    """
    if not isinstance(function, types.FunctionType) or "Value" not in function.__code__.co_names:
        return function
    return types.FunctionType(function.__code__, {**function.__globals__, "Value": engine.Value},
                              function.__name__, function.__defaults__, function.__closure__)


def name_aliases(api):
    """Give the training engine's Value the names the student's class gives the number and the gradient
    (``value``, ``gradient``, ``g``), once, so that a ``train_step`` written for that class reads and
    updates them."""
    engine = api["engine"]
    if "aliases" in api or "Value" not in api["parts"]:
        return
    api["aliases"] = {}
    used = names_used(api["parts"]["train_step"])
    if "grad" in used and "data" in used:
        return  # written with the exercise's names: nothing of the class is run to find others
    try:
        iface = Interface(api["parts"]["Value"], api["children_names"])
    except Exception:  # noqa: BLE001 - a class no node can be made of: its ops are graded as such
        return
    for role, name in (("data", iface.data), ("grad", iface.grad)):
        if name != role and name.isidentifier() and not hasattr(engine.Value, name):
            api["aliases"][role] = name
            setattr(engine.Value, name, property(lambda v, role=role: getattr(v, role),
                                                 lambda v, x, role=role: setattr(v, role, x)))


def train_case(api, request):
    """Run the student's ``train_step`` on the training engine's MLP with the given weights."""
    engine = api["engine"]
    model = engine.MLP(request["nin"], request["nouts"])
    for p, w in zip(model.parameters(), request["weights"]):
        p.data = w
    losses, params = [], []
    train_step = on_training_engine(api["parts"]["train_step"], engine)
    try:
        name_aliases(api)
        for _ in range(request["steps"]):
            loss = train_step(model, request["xs"], request["ys"], request["lr"])
            if isinstance(loss, engine.Value):
                loss = loss.data
            losses.append(number(loss))
            params.append([number(p.data) for p in model.parameters()])
    except BaseException as exc:  # noqa: BLE001
        return {"error": error_report(exc, "train_step")}
    return {"losses": losses, "params": params}


def load_engine(code):
    """The grader's training engine, from its code object, registered in no module table."""
    namespace = {"__name__": "micrograde_training"}
    exec(code, namespace)
    return types.SimpleNamespace(**{name: namespace[name] for name in ENGINE_NAMES if name in namespace})


# What the training engine gives the handlers: its Value, the reference model and its parts, the losses and SGD.
ENGINE_NAMES = ("Value", "Neuron", "Layer", "MLP", "Model", "Loss", "SGD", "is_batch")


def with_interface(handler):
    """``handler`` once the grader knows how to make nodes of the student's class."""

    def run(api, request):
        if "Value" not in api["parts"]:  # a module's case, of a submission with no value class to make nodes of
            return {"error": {"type": "InterfaceError", "message": "the submission defines no value class, so no "
                              "node can be made", "phase": "load", "line": None, "file": None}}
        if "interface" not in api:
            computed = computed_attributes(api["parts"]["Value"])
            if computed:
                # Reading such a grad could run a finite difference: nothing observed would be the student's.
                return {"error": {"type": "ComputedAttribute", "phase": "load", "line": None, "file": None,
                                  "message": f"{api['parts']['Value'].__name__} computes {' and '.join(computed)} when "
                                             f"read instead of storing it"}}
            try:
                api["interface"] = Interface(api["parts"]["Value"], api["children_names"])
            except InterfaceError as exc:
                return {"error": {"type": "InterfaceError", "message": str(exc), "phase": "load",
                                  "line": None, "file": None}}
            except ModuleNotFoundError as exc:  # the constructor needs a module that is not installed here
                return {"error": error_report(exc, "forward")}
        iface = api["interface"]
        return {**handler(api, request), "equality": iface.equality, "inferred": iface.inferred}

    return run
