"""Answering training cases of the course's own signature: an optimizer's method, a training function.

Both run on the grader's training engine (its Values, its MLP, loss and SGD):
what is graded is the learner's training code, not their ``Value``. The child
sends back numbers: the parameters after each call; for a training function,
also the parameters, the loss and the gradients left over at every
``backward()`` it ran, and the order in which it called the grader's
``zero_grad``, ``backward`` and ``step``. It never judges them.
"""

import sys

from .cases import name_aliases, on_training_engine
from .failures import error_report
from .reading import number

MAX_RETURNED = 64  # numbers a training function may send back: its steps' losses, never a stream
MAX_STEPS = 64  # backward() calls recorded in one call


def bound(spec, given):
    """An argument of the course's call: a number it writes, or what the grader passes for a name."""
    kind, value = spec
    return value if kind == "number" else given[value]


def call_with(function, call, given):
    args = [bound(a, given) for a in call["args"]]
    return function(*args, **{k: bound(v, given) for k, v in call["keywords"]})


def optimizer_case(api, request):
    """Build the learner's optimizer on the grader's parameters and call its method once per set of gradients."""
    engine = api["engine"]
    params = [engine.Value(float(x)) for x in request["data"]]
    found = []
    try:
        name_aliases(api, api["parts"][request["needs"]])
        optimizer = call_with(api["parts"][request["needs"]], request["init"], {"params": params, "lr": request["lr"]})
        for grads in request["grads"]:
            for p, g in zip(params, grads):
                p.grad = float(g)
            getattr(optimizer, request["method"])()
            found.append({"data": [number(p.data) for p in params], "grad": [number(p.grad) for p in params]})
    except BaseException as exc:  # noqa: BLE001 - any failure of student code is data
        return {"error": error_report(exc, request["method"])}
    return {"calls": found}


def examples(request):
    """The examples and targets as the grader passes them: numpy arrays where the submission uses numpy."""
    np = sys.modules.get("numpy")
    xs, ys = request["xs"], request["ys"]
    if request["classes"]:
        ys = [int(y) for y in ys]
    if np is not None:
        return np.array(xs, dtype=float), np.array(ys, dtype=int if request["classes"] else float)
    return [list(x) for x in xs], list(ys)


def returned(value, engine):
    """What a training function returned, as numbers: a loss (a Value, a number), a list of them, or nothing."""
    if value is None:
        return None
    if isinstance(value, engine.Value):
        value = value.data
    if hasattr(type(value), "tolist"):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        return [number(v.data if isinstance(v, engine.Value) else v) for v in value[:MAX_RETURNED]]
    return number(value)


class Watch:
    """The grader's ``backward``, ``zero_grad`` and ``step``, recording each call while a training function runs."""

    def __init__(self, engine, model, optimizer, rows):
        self.engine, self.model, self.optimizer = engine, model, optimizer
        self.rows = rows  # each example's numbers, to its index: which examples a call of the model was given
        self.events, self.snapshots, self.seen = [], [], []

    def __enter__(self):
        engine, watch = self.engine, self
        self.saved = (engine.Value.backward, engine.Model.zero_grad, engine.SGD.zero_grad, engine.SGD.step,
                      engine.Model.__call__)

        def backward(node):
            if len(watch.snapshots) < MAX_STEPS:
                params = watch.model.parameters()
                grads = [number(p.grad) for p in params]
                watch.snapshots.append({"params": [number(p.data) for p in params], "loss": number(node.data),
                                        "left": max((abs(g) for g in grads if isinstance(g, float)), default=0.0),
                                        "batch": list(dict.fromkeys(watch.seen))[:MAX_RETURNED]})
            watch.seen = []
            watch.events.append("backward")
            return watch.saved[0](node)

        def model(self, x):
            rows = x if engine.is_batch(x) else [x]
            watch.seen.extend(watch.rows.get(tuple(float(v) for v in row), -1) for row in rows)
            return watch.saved[4](self, x)

        def reset(original):
            def zero_grad(self):
                watch.events.append("zero_grad")
                return original(self)
            return zero_grad

        def step(optimizer):
            watch.events.append("step")
            return watch.saved[3](optimizer)

        engine.Value.backward = backward
        engine.Model.zero_grad, engine.SGD.zero_grad = reset(self.saved[1]), reset(self.saved[2])
        engine.SGD.step, engine.Model.__call__ = step, model
        return self

    def __exit__(self, *exc):
        engine = self.engine
        (engine.Value.backward, engine.Model.zero_grad, engine.SGD.zero_grad, engine.SGD.step,
         engine.Model.__call__) = self.saved
        return False


def loop_case(api, request):
    """Call the learner's training function ``calls`` times on the grader's model, from the case's weights."""
    engine = api["engine"]
    model = engine.Model(request["sizes"][0], list(request["sizes"][1:]), activation=request["activation"])
    for p, w in zip(model.parameters(), request["weights"]):
        p.data = w
    xs, ys = examples(request)
    optimizer = engine.SGD(model.parameters(), lr=request["lr"])
    given = {"model": model, "criterion": engine.Loss(request["loss"]), "optimizer": optimizer,
             "params": model.parameters(), "xs": xs, "ys": ys, "lr": request["lr"],
             "epochs": request["epochs"], "batch_size": request["batch_size"]}
    function = on_training_engine(api["parts"][request["needs"]], engine)
    rows = {tuple(float(v) for v in x): k for k, x in enumerate(request["xs"])}
    found = []
    try:
        name_aliases(api, api["parts"][request["needs"]])
        for _ in range(request["calls"]):
            with Watch(engine, model, optimizer, rows) as watch:
                value = call_with(function, request["call"], given)
            found.append({"returned": returned(value, engine), "snapshots": watch.snapshots,
                          "events": watch.events[:MAX_STEPS * 3],
                          "params": [number(p.data) for p in model.parameters()]})
    except BaseException as exc:  # noqa: BLE001
        return {"error": error_report(exc, request["needs"])}
    return {"calls": found}


def graph_case(api, request):
    """Call a method of a graph's output that reaches its whole graph (``out.zero_grad()``, ``out.step(lr)``), as the
    course calls it, once per set of gradients: the output is micrograde's node over leaves of the learner's
    class (its own step, so no op of the learner's is run), the leaves read after each call."""
    engine = api["interface"]
    found = []
    try:
        leaves = [engine.leaf(float(x)) for x in request["data"]]
        out = engine.fixed_node(sum(request["data"]), leaves, [1.0] * len(leaves), "+")
        for grads in request["grads"]:
            for leaf, g in zip(leaves, grads):
                engine.set_grad(leaf, float(g))
            engine.set_grad(out, 1.0)
            engine.run(request["call"], out=out, lr=request["lr"])
            found.append({"data": [engine.data(v) for v in leaves], "grad": [engine.grad(v) for v in leaves]})
    except BaseException as exc:  # noqa: BLE001 - any failure of student code is data
        return {"error": error_report(exc, request["method"])}
    return {"calls": found}
