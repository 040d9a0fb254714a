"""Answering a module case: the learner's ``Neuron``, ``Layer``, ``MLP``, ``Linear``, activation or loss, built
and run as the course's notebook runs it, with numbers the grading process chose.

A case runs the module up to three ways (``runs``): on the learner's own ``Value``
(``own``); with the grader's training engine in its place (``engine``), so that a
bug of an op the module uses is told from one of the module; and with stand-in
parts in place of the learner's neuron and layer too (``parts``), so that an
``MLP`` is not charged for its ``Layer``'s bug. Each run sends back numbers: what
``parameters()`` holds, the gradient of every output with respect to every
parameter at the grader's starting numbers (how each parameter is used: the
grading process finds from it which parameter is which), the outputs and gradients
at the case's numbers, and what ``zero_grad()`` left. It never judges them.

The child that runs these holds no neuron, layer, loss or optimizer that computes
what a course grades (its engine is the ``Value`` alone, and the stand-ins are not
the course's neuron), since the learner's code can reach anything in its process.
"""

import sys

from .cases import name_aliases
from .entries import shaped
from .failures import error_report
from .reading import address, class_attribute, number, stored_or_none
from .styles import course_input

MAX_PARAMETERS = 512  # a course's module has a few dozen: more is not a module of the case's size
MAX_OUTPUTS = 64
MAX_DEPTH = 4  # lists of lists of... of Values: deeper is not a batch of outputs


class Shape(Exception):
    """What the module returned cannot be read as Values: said as data to the grading process."""


def module_case(api, request):
    """Every run the request asks for, each as numbers (or the error it ended in)."""
    return {"runs": {name: one_run(api, request, name) for name in request["runs"]}}


def one_run(api, request, name):
    engine = api["engine"]
    own = api["interface"]
    made = None
    if name == "own":
        numbers = own
        swaps = {}
    else:
        numbers = Plain(engine.Value)
        learner = api["parts"][request["needs"]]
        name_aliases(api, learner)
        swaps = {"Value": (own.V, engine.Value), **subclass_stand_ins(learner, own, engine.Value)}
        if name == "parts":
            made = StandIns(engine.Value)
            for part, module in request["parts"].items():
                swaps[part] = (api["parts"].get(part), made.neuron if module == "neuron" else made.layer)
    cls = api["parts"][request["needs"]]
    undo = swapped(cls, swaps)
    try:
        return observe(cls, request, numbers, made)
    except Shape as exc:
        return {"error": {"type": "Shape", "message": str(exc), "phase": "forward", "line": None, "file": None}}
    except BaseException as exc:  # noqa: BLE001 - any failure of student code is data
        return {"error": error_report(exc, "forward")}
    finally:
        undo()


class Plain:
    """The grader's training engine as a run drives it: ``data`` and ``grad`` attributes, ``backward()`` (the same
    protocol as the learner's ``Engine``, for the runs that put the grader's ``Value`` in the learner's place)."""

    def __init__(self, V):
        self.V = self.leaf = V

    @staticmethod
    def data(node):
        return number(stored_or_none(node, "data"))

    @staticmethod
    def grad(node):
        return number(stored_or_none(node, "grad"))

    @staticmethod
    def set_value(node, x):
        node.data = x

    @staticmethod
    def set_grad(node, x):
        node.grad = x

    @staticmethod
    def backward(node):
        node.backward()


def set_all(nodes, put, values):
    """``put`` each node its number of ``values`` (taken in turn), or 0 where there are none."""
    for j, node in enumerate(nodes):
        put(node, values[j % len(values)] if values else 0.0)


def observe(cls, request, numbers, made=None):
    """Build the module and observe what the request asks: its parameters, how each is used, its outputs,
    its gradients, what ``zero_grad`` leaves (with stand-in parts, ``made``: which of theirs each parameter is)."""
    module = cls(*request["args"])
    what = request["observe"]
    params, shape = parameters_of(module, numbers.V) if request["layered"] or what == "parameters" else ([], {})
    reply = {"params": shape}
    if made is not None:
        reply["neurons"] = made.neurons[:MAX_PARAMETERS]
        reply["tags"] = [made.tags.get(address(p)) for p in params]
    if shape.get("none") or shape.get("flood") or what == "parameters":
        return reply
    if what == "zero-grad":
        return {**reply, **zeroed(module, params, request, numbers)}
    if made is not None:
        made.set_weights(request["weights"])
    elif request["layered"]:
        set_all(params, numbers.set_value, request["base"])
        reply["jacobian"] = [gradients(module, request, x, None, params, numbers, "each").get("params")
                             for x in request["probes"]]
        set_all(params, numbers.set_value, request["weights"])
    how = "loss" if what == "gradients" else "outputs"
    reply["points"] = [gradients(module, request, x, target, params, numbers, how)
                       for x, target in zip(request["points"], request["targets"] or [None] * len(request["points"]))]
    return reply


def call(module, args):
    """Call the module as the course's notebook does: ``module(x)``, or ``module.forward(x)`` for a class
    without ``__call__``."""
    if class_attribute(type(module), "__call__") is not None:
        return module(*args)
    return module.forward(*args)


def arrays():
    """The submission's numpy, when it uses it (a course whose modules take arrays): inputs are then arrays."""
    return sys.modules.get("numpy")


def made_input(request, x, numbers):
    """The input of a call: a row of numbers, a batch of rows, or rows of fresh leaves; and the leaves."""
    np = arrays()
    if request["values_in"]:
        leaves = [[numbers.leaf(float(v)) for v in row] for row in x]
        return (np.array(leaves, dtype=object) if np is not None else leaves), [v for row in leaves for v in row]
    if request["batch"]:
        rows = [[float(v) for v in row] for row in x]
        return (np.array(rows, dtype=float) if np is not None else rows), []
    return [float(v) for v in x], []


def made_targets(target):
    np = arrays()
    return np.array(target, dtype=int) if np is not None else list(target)


def forward(module, request, x, target, numbers):
    """One call on a fresh input (in the course's tensor class, where it passes one): the outputs (Values, in
    row-major order), their shape, the input's leaves."""
    given, leaves = made_input(request, x, numbers)
    given = course_input(namespaces(type(module)), request, given)
    args = [given] if target is None else [given, made_targets(target)]
    returned = call(module, args)
    if request.get("input_class") and type(returned).__name__ == request["input_class"]:
        shape, out = shaped(returned, numbers.V)  # a tensor of the course's class: read from what it stores
        return out, list(shape), leaves
    out, shape = flatten(returned, numbers.V)
    return out, shape, leaves


def gradients(module, request, x, target, params, numbers, how="loss"):
    """The outputs at ``x`` (``how``: ``outputs``); every parameter's and input leaf's gradient after a
    ``backward()`` from a loss of them all (``loss``: each output times the request's coefficient, summed with
    the run's own ops, so a gradient passed on without ``out.grad`` shows); or every parameter's gradient from
    each output alone, seeded 1, from a fresh call each (``each``): how each parameter is used, whatever the
    ops do with ``out.grad``."""
    out, shape, leaves = forward(module, request, x, target, numbers)
    found = {"out": [numbers.data(v) if isinstance(v, numbers.V) else {"invalid": type(v).__name__}
                     for v in out], "shape": shape}
    if how == "outputs" or not all(isinstance(v, numbers.V) for v in out):
        return found  # outputs that are not Values have no gradient: what they are says it
    if how == "loss":
        set_all(params, numbers.set_grad, [0.0])
        coefficients = request["coefficients"]
        total = out[0] * coefficients[0]
        for o in range(1, len(out)):
            total = total + out[o] * coefficients[o % len(coefficients)]
        numbers.backward(total)
        return {**found, "params": [numbers.grad(p) for p in params],
                "inputs": [numbers.grad(v) for v in leaves]}
    found["params"] = []
    for o in range(len(out)):
        set_all(params, numbers.set_grad, [0.0])
        again, _, leaves = forward(module, request, x, target, numbers)
        if len(again) != len(out):
            raise Shape("a second call on the same input returned another number of outputs")
        numbers.backward(again[o])
        found["params"].append([numbers.grad(p) for p in params])
    return found


def zeroed(module, params, request, numbers):
    """The parameters' gradients after ``zero_grad()``, each having been a number other than 0 before."""
    set_all(params, numbers.set_grad, request["weights"])
    module.zero_grad()
    return {"after": [numbers.grad(p) for p in params]}


def parameters_of(module, V):
    """The Values ``parameters()`` holds, flattened, and what it was: how many, whether lists were nested in
    it, how many it repeats, what else it held (type names)."""
    got = module.parameters()
    if got is None:
        return [], {"none": True}
    found, foreign, nested = [], [], [False]

    def walk(x, depth):
        if isinstance(x, V):
            found.append(x)
            return
        if isinstance(x, (str, bytes, dict)) or depth >= MAX_DEPTH:
            foreign.append(type(x).__name__)
            return
        try:
            items = iter(x.tolist() if hasattr(type(x), "tolist") else x)
        except TypeError:
            foreign.append(type(x).__name__)
            return
        nested[0] |= depth > 0
        for item in items:
            if len(found) + len(foreign) > MAX_PARAMETERS:
                return  # more than any module of a case's size has: counted as too many, and no more read
            walk(item, depth + 1)

    walk(got, 0)
    if len(found) + len(foreign) > MAX_PARAMETERS:
        return [], {"count": len(found), "flood": True}
    seen = set()
    repeated = 0
    for p in found:
        key = address(p)
        repeated += key in seen
        seen.add(key)
    return found, {"count": len(found), "nested": nested[0], "repeated": repeated, "foreign": foreign[:3],
                   "type": type(got).__name__}


def flatten(out, V):
    """A module's output as a flat list (row-major) and its shape: a Value is ``[]``, a list of 3 is ``[3]``."""
    found = []
    shape = []

    def walk(x, depth):
        if len(found) > MAX_OUTPUTS:
            return
        if isinstance(x, V) or depth >= MAX_DEPTH or isinstance(x, (str, bytes, dict, int, float)):
            found.append(x)
            return
        if hasattr(type(x), "tolist"):
            x = x.tolist()
        try:
            items = list(x) if len(x) <= MAX_OUTPUTS else [x] * (MAX_OUTPUTS + 1)
        except TypeError:
            found.append(x)
            return
        if len(found) + len(items) > MAX_OUTPUTS:
            found[:] = [...] * (MAX_OUTPUTS + 1)  # more outputs than any case has: said as too many, unread
            shape[:] = [MAX_OUTPUTS + 1]
            return
        if len(shape) == depth:
            shape.append(len(items))
        for item in items:
            walk(item, depth + 1)

    walk(out, 0)
    return found, shape


def namespaces(cls):
    """The global namespaces the methods of ``cls`` and of its bases run in (the submission's modules)."""
    found = []
    for klass in type.__dict__["__mro__"].__get__(cls):
        if klass is object:
            continue
        for value in type.__dict__["__dict__"].__get__(klass).values():
            function = value.fget if isinstance(value, property) else getattr(value, "__func__", value)
            space = getattr(function, "__globals__", None)
            if type(space) is dict and not any(space is s for s in found):
                found.append(space)
    return found


def subclass_stand_ins(cls, own, V):
    """For each class the module's code can reach that is a kind of the learner's node (a ``Parameter(Node)`` holding
    a weight), one of the grader's ``V`` made the same way (its value the first argument, or the keyword the engine
    names it by; every other keyword kept as an attribute), so that a run on the grader's engine has parameters of
    that engine too."""
    name = own.data_path[0] if own.data_path else "data"
    found = {}
    for space in namespaces(cls):
        for key, value in space.items():
            if isinstance(value, type) and value is not own.V and issubclass(value, own.V):
                found[key] = (value, stand_in_subclass(V, value.__name__, name))
    return found


def stand_in_subclass(V, called, name):
    def __init__(self, *args, **kwargs):
        value = args[0] if args else kwargs.pop(name, kwargs.pop("data", 0.0))
        V.__init__(self, float(number(value)) if not isinstance(value, (int, float)) else float(value))
        for key, given in kwargs.items():
            if key not in (name, "data", "grad"):
                setattr(self, key, given)

    return type(called, (V,), {"__init__": __init__})


def swapped(cls, swaps):
    """Put the grader's classes in the place of the learner's in the namespaces ``cls``'s methods run in
    (``swaps``: a name, or the learner's class, to the grader's); return what puts them back."""
    changed = []
    for space in namespaces(cls) if swaps else ():
        for key, value in list(space.items()):
            for name, (theirs, ours) in swaps.items():
                if key == name or (theirs is not None and value is theirs):
                    changed.append((space, key, value))
                    space[key] = ours
                    break

    def undo():
        for space, key, value in reversed(changed):
            space[key] = value

    return undo


class StandIns:
    """The parts a module is built of, in the learner's place for the ``parts`` run: a neuron and a layer with
    the course's constructors (``Neuron(nin, nonlin=True)``, the flag under any name; ``Layer(nin, nout,
    **kwargs)``), that record how they are built. They are not the course's neuron: one squares its inputs,
    and a nonlinear one squares its sum, so nothing here computes a graded module; the grading process knows
    the same function, and so what a module that builds and chains them rightly gives."""

    def __init__(self, V):
        self.V = V
        self.neurons = []  # [inputs, nonlinear] of each stand-in neuron, in the order they were made
        self.tags = {}  # each stand-in parameter, by address: [its neuron's index, its place in that neuron]
        self.made = []  # the stand-in parameters, in the order they were made
        self.neuron, self.layer = stand_in_classes(self)

    def set_weights(self, pool):
        """Every stand-in parameter's data: the case's numbers, taken by its neuron and place."""
        for p in self.made:
            k, i = self.tags[address(p)]
            p.data = pool[(31 * k + i) % len(pool)] if pool else 0.5


def stand_in_classes(made):
    V = made.V

    class Neuron:
        def __init__(self, nin, *flag, **named):
            on = flag[0] if flag else named.get("nonlin", next(iter(named.values())) if len(named) == 1 else True)
            self.k, self.on = len(made.neurons), bool(on)
            made.neurons.append([int(nin), self.on])
            self.w, self.b = [V(0.0) for _ in range(int(nin))], V(0.0)
            for i, p in enumerate(self.parameters()):
                made.tags[address(p)] = [self.k, i]
                made.made.append(p)

        def __call__(self, x):
            total = self.b
            for wi, xi in zip(self.w, x):
                total = total + wi * xi * xi
            return total * total if self.on else total

        def parameters(self):
            return self.w + [self.b]

        def zero_grad(self):
            for p in self.parameters():
                p.grad = 0.0

    class Layer(Neuron):
        def __init__(self, nin, nout, **kwargs):
            self.neurons = [Neuron(nin, **kwargs) for _ in range(int(nout))]

        def __call__(self, x):
            out = [n(x) for n in self.neurons]
            return out[0] if len(out) == 1 else out

        def parameters(self):
            return [p for n in self.neurons for p in n.parameters()]

    return Neuron, Layer
