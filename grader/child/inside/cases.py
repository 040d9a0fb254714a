"""Answering one case: an op's values, gradients and probes; a ``backward()`` run; training steps.

The child knows no op and no derivative rule, and judges nothing: it sends back
numbers (values, gradients, the order in which ``_backward`` ran) and the
grading process decides what they mean.
"""

import types

from .engine import Engine
from .failures import InterfaceError, error_report
from .forms import path_of
from .graphs import build, hashed_by_position, observe, operand_positions, probe, propagate, topological
from .interface import class_names_used, names_used
from .isolation import Isolated
from .reading import computed_attributes, number


def op_case(api, request):
    """Forward values, gradients (by the grader's own traversal) and probes of one op case, the other
    targets' methods standing aside while it runs (``isolation``)."""
    engine = api["interface"]
    phase = "forward"
    method = next((spec[4] for spec in request["nodes"] if spec[0] == "student"), None)
    moved = []  # student nodes whose op attached its closure to an operand
    try:
        # Other ops stand aside as micrograde's own nodes, which only a pass that runs each node's step can take.
        with Isolated(engine, api.get("isolation", {}) if engine.mode != "engine" else {}, method):
            nodes = build(engine, request["nodes"], moved=moved)
            # A comparison of the learner's may give a plain truth value: its number is its value.
            data = [v if spec[0] == "student" and isinstance(v, float) else d
                    for v, spec, d in zip(nodes, request["nodes"], observe(nodes, engine.data))]
            phase = "backward"
            if engine.mode == "closure":
                for v in nodes:
                    if not isinstance(v, (int, float)):
                        engine.set_grad(v, 0.0)
            if isinstance(nodes[-1], (int, float)):
                grads = [0.0 if v is not None else None for v in observe(nodes, engine.data)]
            elif not engine.passes:
                grads = None  # an engine with no backward pass yet (a tutorial's first steps): values alone
            else:
                propagate(engine, nodes[-1], nodes)
                grads = observe(nodes, engine.passed)
            # For each student node, which of the request's nodes its children hold (by identity).
            children = [operand_positions(engine, v, nodes) if spec[0] == "student" and engine.is_structured
                        and not isinstance(v, (int, float)) else None
                        for v, spec in zip(nodes, request["nodes"])]
            # A plain number kept among a result's children (``_prev`` holding the exponent): no node, so any
            # backward pass that walks the children (the course's, micrograd's) fails on it.
            numbers = [i for i, (v, spec) in enumerate(zip(nodes, request["nodes"])) if spec[0] == "student"
                       and engine.is_structured and not isinstance(v, (int, float))
                       and any(isinstance(c, (int, float)) for c in engine.children(v))]
            phase = "forward"
            probes = [probe(engine, node, args) for node, args in request["probes"]]
    except BaseException as exc:  # noqa: BLE001 - any failure of student code is data
        return {"error": error_report(exc, phase)}
    return {"data": data, "grads": grads, "probes": probes, "children": children, "moved": moved,
            "numbers": numbers}


def backward_case(api, request):
    """Call the student's ``backward()`` on graphs of fixed nodes.

    Several roots may share leaves (same names): each ``backward()`` runs in
    turn and the gradients after each are reported, with the order in which
    the nodes' ``_backward`` closures ran and the root's gradient when its own
    ran (the seed, wherever the pass set it).
    """
    engine = api["interface"]
    leaves = {}
    runs = []
    trace = []
    seed = []  # the root's gradient when its own _backward first ran: the seed the pass gave it
    root = []
    positions = {}
    restore = None

    def record(index, given=None):
        """A fixed node's step ran (given ``given`` flowing into it, where the engine passes it)."""
        if root and index == root[0][0] and not seed:
            seed.append(engine.grad(root[0][1]) if given is None else number(given))
        trace.append(index)

    try:
        restore = hashed_by_position(engine.V, positions)
        for nodes in request["exprs"]:
            trace.clear()
            seed.clear()
            root.clear()
            built = build(engine, nodes, record, leaves, positions)
            root.append((len(built) - 1, built[-1]))
            control = None
            if not engine.steppable and engine.mode == "returns":
                # Built of the learner's own ops: what micrograde's pass gives over these very nodes is what the
                # learner's pass must give (their ops are graded on their own).
                engine.own_pass([(built[-1], 1.0)], topological(engine, [built[-1]]))
                control = observe(built, engine.passed)
            engine.backward(built[-1])
            runs.append({"grads": observe(built, engine.grad), "trace": list(trace), "seed": seed[0] if seed else None,
                         **({"control": control} if control is not None else {})})
    except BaseException as exc:  # noqa: BLE001
        return {"error": error_report(exc, "backward")}
    finally:
        if restore is not None:
            restore()
    return {"runs": runs, "leaves_traced": engine.mode == "closure", "traced": engine.steppable}


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


def name_aliases(api, function):
    """Give the training engine's Value the names the learner's engine gives the number and the gradient
    (``value``, ``gradient``, ``g``), once, so that training code written for that engine (``function``: the
    training function, the optimizer class) reads and updates them: the names the course's ``[engine]`` says,
    else those the learner's class shows."""
    training = api["engine"]
    if "aliases" in api or "Value" not in api["parts"]:
        return
    api["aliases"] = {}
    forms = (api.get("described") or {}).get("forms") or {}
    said = {role: path_of(forms[key], "node") for role, key in (("data", "value"), ("grad", "grad")) if key in forms}
    if not said:
        if {"grad", "data"} <= names_in(function):
            return  # written with the exercise's names: nothing of the class is run to find others
        try:
            engine = made_engine(api)
        except Exception:  # noqa: BLE001 - a class no node can be made of: its ops are graded as such
            return
        said = {"data": list(engine.data_path or ()), "grad": list(engine.grad_path or ())}
    for role, path in said.items():
        name = path[0] if path is not None and len(path) == 1 else role
        if name != role and name.isidentifier() and not hasattr(training.Value, name):
            api["aliases"][role] = name
            setattr(training.Value, name, property(lambda v, role=role: getattr(v, role),
                                                   lambda v, x, role=role: setattr(v, role, x)))


def names_in(part):
    """Every name the code of a function, or of a class's functions, refers to."""
    if isinstance(part, type):
        return class_names_used(part)
    return names_used(part)


def train_case(api, request):
    """Run the student's ``train_step`` on the training engine's MLP with the given weights."""
    engine = api["engine"]
    model = engine.MLP(request["nin"], request["nouts"])
    for p, w in zip(model.parameters(), request["weights"]):
        p.data = w
    losses, params = [], []
    train_step = on_training_engine(api["parts"]["train_step"], engine)
    try:
        name_aliases(api, api["parts"]["train_step"])
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


def made_engine(api):
    """The learner's engine, as the course describes it (``engine`` of the load request) and its class shows."""
    description = api.get("described") or {}
    return Engine(api["parts"]["Value"], description.get("forms"), api.get("namespaces", ()),
                  api["children_names"], description.get("calls"))


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
                api["interface"] = made_engine(api)
            except InterfaceError as exc:
                return {"error": {"type": "InterfaceError", "message": str(exc), "phase": "load",
                                  "line": None, "file": None}}
            except ModuleNotFoundError as exc:  # the constructor needs a module that is not installed here
                return {"error": error_report(exc, "forward")}
        engine = api["interface"]
        return {**handler(api, request), "equality": engine.equality, "inferred": engine.assumed}

    return run
