"""The stubs ``scaffold --config`` writes for the targets beyond the value class's ops and ``train_step``.

Every kind of target has a part of the learner's to write: a function returning a hand-derived gradient, one
estimating a derivative, a value a cell computes, a function a whole computation calls, a Tensor's op, a module,
an optimizer, a training loop, a method of a graph's output. Each stub has the name and signature the course's
configuration gives it (the call a notebook makes, the class it names), says in a docstring what to compute (the
concept, never the code), and raises ``NotImplementedError`` where the learner writes, so that the scaffold as
written grades ``not-implemented`` at each stub. A course whose engine is its own (``[engine]``) hands that engine
out itself: the stubs are of the parts its targets read.
"""

from __future__ import annotations

from collections.abc import Callable

from grader.exercise.calls import parse as parse_call
from grader.exercise.loops import NAMES as LOOP_NAMES
from grader.exercise.numeric import ARGUMENTS, CALL_NAMES
from grader.exercise.optimizers import NAMES as OPTIMIZER_NAMES
from grader.exercise.targets import Exercise, Target
from grader.exercise.tensors import TENSOR_OPS


def todo(what: str, indent: str = "    ") -> str:
    return f'{indent}"""{what}"""\n{indent}raise NotImplementedError  # YOUR CODE HERE\n'


def arguments(text: str, names: tuple[str, ...]) -> str:
    """A call's arguments as a definition's parameters: ``train(model, xs, ys, epochs=epochs)`` takes
    ``model, xs, ys, epochs``; ``f(*vals)`` takes ``*vals``."""
    call = parse_call(text, names)
    taken = [a for a in call.args if isinstance(a, str)] + [k for k, _ in call.keywords]
    return ", ".join(dict.fromkeys(taken))


def gradient(t: Target) -> str:
    s = t.settings
    return (f"def {s['function']}({', '.join(s['inputs'])}):\n"
            + todo(f"Every partial derivative of {s['of']}, derived by hand, in the order of the inputs."))


def numerical_derivative(t: Target) -> str:
    s = t.settings
    if "call" in s:
        head = f"def {s['function']}({arguments(s['call'], CALL_NAMES)}):\n"
        return head + todo(f"The derivative of f along one input at a point, by a "
                           f"{s.get('method', 'forward')} difference.")
    head = f"def {s['function']}({', '.join(s.get('arguments', ARGUMENTS))}):\n"
    return head + todo(f"f'(x), estimated by a {s.get('method', 'forward')} difference with the step h.")


def numerical_gradient(t: Target) -> str:
    s = t.settings
    zeros = ", ".join("0.0" for _ in s["inputs"])
    return (f"# YOUR CODE HERE: the gradient of {s['calls']}({', '.join(s['inputs'])}) at "
            f"{tuple(s['at'])}, estimated numerically, one number per input\n{s['value']} = [{zeros}]\n")


def expression(t: Target) -> str:
    s = t.settings
    if "function" not in s:
        return ""  # the course's own code on the class's ops: the ops' stubs are the learner's part
    return f"def {s['function']}(*args):\n" + todo("The computation the course's notebook calls, on the class's "
                                                    "nodes, so that every input gets its gradient through it.")


def tensor(t: Target) -> str:
    s = t.settings
    method = s.get("method", TENSOR_OPS[s["op"]].method)
    args = "self" if TENSOR_OPS[s["op"]].family in ("unary", "reduce", "index") else "self, other"
    return f"    def {method}({args}, *args, **kwargs):\n" + todo(f"The Tensor's {s['op']}.", "        ")


def module(t: Target) -> str:
    s = t.settings
    return (f"class {s['class']}:\n    def __init__(self, *args, **kwargs):\n"
            + todo(f"A {s['module']} of Values: its parameters made here.", "        ")
            + "\n    def __call__(self, x):\n" + todo("The forward pass.", "        ")
            + "\n    def parameters(self):\n" + todo("Every parameter, once, in one flat list.", "        "))


def optimizer_method(t: Target) -> str:
    what = "Move every parameter against its gradient." if t.settings["method"] == "step" \
        else "Set every parameter's gradient to 0."
    return f"    def {t.settings['method']}(self):\n" + todo(what, "        ")


def optimizer_init(t: Target) -> str:
    return f"    def __init__(self, {arguments(t.settings['init'], OPTIMIZER_NAMES)}):\n" + todo(
        "Keep what the updates need.", "        ")


def training(t: Target) -> str:
    s = t.settings
    call = parse_call(s["call"], LOOP_NAMES)
    return (f"def {call.function}({arguments(s['call'], LOOP_NAMES)}):\n"
            + todo(f"Train the model on the {s['loss']} loss: zero the gradients, backpropagate, update."))


def graph(t: Target) -> str:
    what = ("Set the gradient of every node of the graph to 0." if t.settings["method"] == "zero_grad"
            else "Move every leaf of the graph against its gradient, by lr.")
    return f"    def {t.settings['method']}(self, *args):\n" + todo(what, "        ")


# Each kind's stub (a kind whose part is the value class's own method or the training step is the scaffold's).
STUBS: dict[str, Callable[[Target], str]] = {
    "gradient": gradient, "numerical-derivative": numerical_derivative, "numerical-gradient": numerical_gradient,
    "expression": expression, "tensor": tensor, "module": module, "optimizer": optimizer_method, "training": training,
    "graph": graph,
}
IN_THE_CLASS = ("graph",)  # stubs that are methods of the value class


def class_stubs(exercise: Exercise) -> str:
    """The methods of the value class that targets of other kinds grade (a graph's ``zero_grad``)."""
    return "\n".join(STUBS[t.kind.name](t) for t in exercise.targets if t.kind.name in IN_THE_CLASS and not t.given)


def module_stubs(exercise: Exercise) -> str:
    """Every other stub, at the top level of the engine's file: each Tensor and optimizer class with the methods
    its targets grade, the modules, the functions and values."""
    classes: dict[str, list[str]] = {}
    found: list[str] = []
    for t in exercise.targets:
        if t.given or t.kind.name not in STUBS or t.kind.name in IN_THE_CLASS:
            continue
        if t.kind.name == "tensor":
            classes.setdefault(t.settings["class"], []).append(tensor(t))
        elif t.kind.name == "optimizer":
            cls = parse_call(t.settings["init"], OPTIMIZER_NAMES).function
            classes.setdefault(cls, [optimizer_init(t)]).append(optimizer_method(t))
        elif text := STUBS[t.kind.name](t):
            found.append(text)
    written = [f"class {cls}:\n" + "\n".join(methods) for cls, methods in classes.items()]
    return "\n\n".join(dict.fromkeys([*written, *found]))
