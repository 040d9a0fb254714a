"""A course's modules, optimizer and training loop, observed on the course's engine.

A module's outputs are compared with the same module computed in floats from its own parameters (found where the
course's ``__init__`` keeps them: ``w`` and ``b`` of a neuron, ``neurons`` of a layer, ``layers`` of an MLP); a
layer or an MLP is run with the course's own neurons (and layers) in place of the learner's when those are targets
of their own, so that their bugs are charged there. An optimizer is run on leaves whose values and gradients each
case sets. A training loop is run beside the course's own on two copies of one model: the same steps, the same
losses.
"""

from __future__ import annotations

import math
import random

import numpy as np

from probing.forms import Engine, as_number
from probing.loading import Loaded, course_module
from probing.scalar_checks import Failed, close, partial

ACTIVATIONS = {"tanh": math.tanh, "relu": lambda z: max(z, 0.0), "sigmoid": lambda z: 1 / (1 + math.exp(-z)),
               "none": lambda z: z}
NUMBERS = (0.3, -0.5, 0.7, -0.2, 0.4, -0.6, 0.9, -0.8, 0.15, 0.55, -0.35, 0.25)


def write_value(engine: Engine, node, value) -> None:
    *path, last = engine.value_form.split(".")
    for part in path:
        node = getattr(node, part)
    setattr(node, last, value)


def outputs(result) -> list:
    return list(result) if isinstance(result, (list, tuple)) else [result]


def defining(loaded: Loaded, name: str) -> str:
    """The file of the tree that defines ``name`` (not one that imports it, as a package's __init__ does)."""
    return next(f for f, m in loaded.modules.items()
                if name in vars(m) and getattr(vars(m)[name], "__module__", None) == m.__name__)


# -- modules --------------------------------------------------------------------------------------------------
def neuron_floats(neuron, x, act, values):
    z = sum(values[id(w)] * xi for w, xi in zip(neuron.w, x)) + values[id(neuron.b)]
    return act(z) if getattr(neuron, "nonlinear", True) else z


def module_floats(module, x, act, values, structure):
    """The module computed in floats from ``values`` (id of a parameter -> its number)."""
    if structure == "neuron":
        return [neuron_floats(module, x, act, values)]
    if structure == "layer":
        return [neuron_floats(n, x, act, values) for n in module.neurons]
    for layer in module.layers:
        x = [neuron_floats(n, x, act, values) for n in layer.neurons]
    return x


def build(target: dict, cls, nin: int = 3):
    structure = target["module"]
    if structure == "neuron":
        return [cls(nin), cls(nin, False)] if target.get("nonlin", True) else [cls(nin)]
    if structure == "layer":
        return [cls(nin, 2), cls(nin, 1)]
    return [cls(nin, [3, 2, 1]), cls(2, [2, 2])]


def check_module(engine: Engine, target: dict, loaded: Loaded, family) -> dict:
    nn_file = defining(loaded, target["class"])
    nn = loaded.modules[nn_file]
    course = course_module(loaded, nn_file, family / "course")
    for part in ("neuron", "layer"):  # the course's own parts inside, where they are graded on their own
        if part in target:
            setattr(nn, target[part], getattr(course, target[part]))
    act = ACTIVATIONS[target.get("activation", "relu")]
    random.seed(7)
    for module in build(target, getattr(nn, target["class"])):
        check_one_module(engine, module, target["module"], act)
    return {}


def check_one_module(engine: Engine, module, structure: str, act) -> None:
    params = module.parameters()
    params = list(params)
    if any(isinstance(p, (list, tuple)) for p in params):
        raise Failed("nested-parameters", f"parameters() holds lists: {[type(p).__name__ for p in params]}")
    owned = [*module.w, module.b] if structure == "neuron" else \
        [p for n in module.neurons for p in (*n.w, n.b)] if structure == "layer" else \
        [p for layer in module.layers for n in layer.neurons for p in (*n.w, n.b)]
    if sorted(map(id, params)) != sorted(map(id, owned)):
        raise Failed("wrong-parameters", f"parameters() gives {len(params)} nodes, the module has {len(owned)}")
    values = {id(p): NUMBERS[i % len(NUMBERS)] * (1 + i // len(NUMBERS)) for i, p in enumerate(owned)}
    for p in owned:
        write_value(engine, p, values[id(p)])
    nin = len(module.w) if structure == "neuron" else len((module.neurons if structure == "layer"
                                                             else module.layers[0].neurons)[0].w)
    x = [0.8, -1.1, 0.5, 1.3][:nin]
    got = [engine.number(o) for o in outputs(module(x))]
    want = module_floats(module, x, act, values, structure)
    if not all(close(g, w) for g, w in zip(got, want)) or len(got) != len(want):
        without_bias = {**values, **{id(b): 0.0 for b in owned if is_bias(module, b, structure)}}
        if all(close(g, w) for g, w in zip(got, module_floats(module, x, act, without_bias, structure))):
            raise Failed("missing-bias", f"{structure} on {x}: {got}, the outputs without the bias")
        for name, other in ACTIVATIONS.items():
            if other is not act and all(close(g, w) for g, w in zip(got, module_floats(module, x, other, values,
                                                                                          structure))):
                raise Failed("wrong-activation", f"{structure} on {x}: {got}, the outputs with {name}")
        raise Failed("wrong-output", f"{structure} on {x}: {got}, not {want}")
    coefficients = [1.5, -0.7, 0.9][: len(got)]
    outs = outputs(module(x))
    loss = outs[0] * coefficients[0]
    for o, c in zip(outs[1:], coefficients[1:]):
        loss = loss + o * c
    returned = engine.backward(loss)
    for p in owned:
        def f(v, p=p):
            return sum(c * w for c, w in zip(coefficients, module_floats(module, x, act, {**values, id(p): v},
                                                                          structure)))
        got_grad = as_number(engine.grad(p, returned) or 0.0)
        if not close(got_grad, partial(f, (values[id(p)],), 0)):
            raise Failed("detached-data", f"{structure} on {x}: a parameter's gradient is {got_grad}")


def is_bias(module, p, structure: str) -> bool:
    neurons = [module] if structure == "neuron" else module.neurons if structure == "layer" else \
        [n for layer in module.layers for n in layer.neurons]
    return any(n.b is p for n in neurons)


# -- optimizers -----------------------------------------------------------------------------------------------
def check_optimizer(engine: Engine, target: dict) -> dict:
    lr = 0.1
    shape_of = engine.value(engine.leaf(1.0))
    array = isinstance(shape_of, np.ndarray) and shape_of.ndim > 0 or "Tensor" in target.get("init", "")
    starts = [np.array([0.5, -1.0]), np.array([2.0, 0.25]), np.array([-0.75, 1.5])] if array else [0.5, -1.0, 2.0]
    params = [engine.leaf(v) for v in starts]
    opt = engine.form(target["init"], params=params, lr=lr)
    method = target.get("call") or f"opt.{target['method']}()"
    for step, grads in enumerate([[0.3, -0.6, 1.2], [-0.9, 0.45, 0.2]]):
        before = [np.array(engine.value(p), dtype=float) for p in params]
        for p, g in zip(params, grads):
            engine.write_grad(p, g * np.ones_like(before[0]) if array else g)
        engine.form(method, opt=opt, out=opt, lr=lr)
        after = [np.array(engine.value(p), dtype=float) for p in params]
        left = [np.array(engine.read(engine.grad_form, p), dtype=float) for p in params]
        moved = [a - b for a, b in zip(after, before)]
        if target["method"] == "zero_grad":
            if any(np.any(g != 0) for g in left):
                raise Failed("grad-not-reset", f"after zero_grad, gradients {[g.tolist() for g in left]}")
            continue
        want = [-lr * g * np.ones_like(m) for g, m in zip(grads, moved)]
        if all(np.allclose(m, w) for m, w in zip(moved, want)) and \
                all(np.allclose(lg, g) for lg, g in zip(left, grads)):
            continue
        if all(np.allclose(m, 0) for m in moved):
            raise Failed("missing-update", f"step {step + 1}: no parameter moved")
        raise Failed("wrong-update", f"step {step + 1}: moved by {[m.tolist() for m in moved]}, "
                                     f"not {[w.tolist() for w in want]}")
    return {}


# -- training -------------------------------------------------------------------------------------------------
XS = [[2.0, 3.0, -1.0], [3.0, -1.0, 0.5], [0.5, 1.0, 1.0], [1.0, 1.0, -1.0]]
YS = [1.0, -1.0, -1.0, 1.0]


def check_training(engine: Engine, target: dict, loaded: Loaded, family) -> dict:
    """The learner's loop and the course's on one model each, built alike: every parameter after the call and
    what the call returns must agree; how they differ after one step tells the misconception."""
    train_file = defining(loaded, target["call"].split("(")[0])
    course = course_module(loaded, train_file, family / "course")
    name = target["call"].split("(")[0]

    def run(function, xs, ys, epochs):
        random.seed(11)
        model = engine.namespace["MLP"](3, [4, 4, 1])
        params = model.parameters()
        optimizer = engine.namespace["SGD"](params, lr=0.05)
        start = [engine.number(p) for p in params]
        returned = engine.form(target["call"], **{name: function}, model=model, optimizer=optimizer, xs=xs, ys=ys,
                               epochs=epochs, lr=0.05)
        return start, [engine.number(p) for p in params], returned

    start, got, returned = run(loaded.namespace[name], XS, YS, 2)
    _, want, expected = run(getattr(course, name), XS, YS, 2)
    if all(close(g, w) for g, w in zip(got, want)):
        if not np.allclose(np.asarray(returned, dtype=float), np.asarray(expected, dtype=float)):
            raise Failed("wrong-loss", f"returns {returned}, not {expected}")
        return {}
    if all(close(g, s) for g, s in zip(got, start)):
        raise Failed("missing-update/missing-backward/zero-grad-misplaced", "no parameter moved")
    _, one, _ = run(loaded.namespace[name], XS[:1], YS[:1], 1)
    _, right, _ = run(getattr(course, name), XS[:1], YS[:1], 1)
    if all(close(o, r) for o, r in zip(one, right)):
        raise Failed("missing-zero-grad", "the first step is right, the next ones are not")
    raise Failed("wrong-update", f"after one step: {one[:3]}..., not {right[:3]}...")
