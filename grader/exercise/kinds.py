"""Every kind of target a course can grade, described once: the fourth table, beside ops, codes and formats.

A *kind* is what a target is: an op of the class (``__add__``...), the class's
``backward``, a training function, a gradient the learner derives by hand. It says

- which part of the submission it grades (its ``Role``: the class, the training
  function, a function the target's configuration names), found by the name the
  course gives that part;
- what a course configures for a target of the kind beside its points (``options``,
  validated when the configuration is read);
- which child process runs its cases (its ``Lane``: the plain one, or the one
  given the grader's training engine) and which request the child answers for it
  (``request``, a handler of ``grader.child.inside.protocol``);
- which gradients its messages speak of (``focus``) and every diagnosis code its
  rules may give (``codes``, each in ``grader.diagnosis.codes``).

The layers above hold each kind's behaviour in one table each, keyed by the kind:
planning and judging its cases (``grader.judging.plan.PLANS``), the rules that
name its misconceptions (``grader.diagnosis.target.RULES``) and the statement a
diagnosis points at (``grader.diagnosis.blame``). ``tests/unit/test_kinds.py`` checks
that every kind has its entry in each. Adding a kind of target is the recipe in
``docs/internals.md``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from grader.exercise import expression, gradients, loops, modules, numeric, ops, optimizers, tensorcases
from grader.exercise.cases import Check
from grader.exercise.checks import checks_for
from grader.exercise.tensors import TENSOR_OPS
from grader.exercise.words import Words


@dataclass(frozen=True)
class Role:
    """A part of the submission that targets grade, found by the name the course gives it."""

    key: str  # how grading and the child refer to it: the part's name in the classic exercise, or its own
    what: str  # what the child accepts as it: "class", "function", "value" (anything a cell computes) or "part"
    # (a class or a function the course's engine has the learner write: a Function class, backpropagate)
    setting: str | None = None  # the ``[scaffold]`` key that names it; None: named by a target's own option

    def __str__(self) -> str:
        return self.key


VALUE = Role("Value", "class", "class")
TRAIN_STEP = Role("train_step", "function", "train_function")
ROLES = (VALUE, TRAIN_STEP)


@dataclass(frozen=True)
class Lane:
    """A child process of a grade, by what it is given beside the submission.

    A child may hold nothing that computes what is graded in it: code a submission runs can reach
    anything in its process. The ops are graded where there is no engine at all; training code on the
    grader's model, with the reference MLP, losses and SGD; modules and optimizers beside the engine's
    ``Value`` alone (which tells a bug of the ops they use from one of their own, and computes no module)."""

    name: str
    training_engine: bool  # the grader's own engine, that training code and modules run on
    models: bool = True  # with the reference MLP, its losses and SGD on top (where no module is graded)


PLAIN = Lane("plain", training_engine=False)
TRAINING = Lane("training", training_engine=True)
MODULES = Lane("modules", training_engine=True, models=False)
LANES = (PLAIN, TRAINING, MODULES)

# What may go wrong with any part whatever its kind: it is missing, it raises, it hangs, it needs a module
# that is not installed, or no node of the class can be made.
ANY = frozenset({"not-implemented", "crash", "timeout", "missing-module", "interface"})
# What may go wrong with the class's nodes, whatever is graded of them.
NODES = frozenset({"value-equality", "computed-grad"})
# What may be wrong with a numerical estimate of a derivative.
ESTIMATES = frozenset({"pasted-constants", "wrong-derivative", "one-sided-difference", "wrong-step",
                       "wrong-difference-quotient"})


@dataclass(frozen=True)
class Option:
    """A key a course sets for a target of a kind: ``name`` (a Python name), ``names`` (a list of them),
    ``formula`` (a function of the ``inputs`` option, ``grader.exercise.formula``), ``formulas`` (a list of
    them), ``points`` (a list of points, each a list of numbers, one per input), ``numbers`` (a list of
    numbers), ``number`` (a positive number), ``choice`` (one of ``choices``), ``choices`` (a list of them),
    ``flag`` (true or false), ``counts`` (a list of whole numbers from 1 to 3), ``code`` (Python source),
    ``call`` (a call as the course's notebook makes it, its arguments numbers or ``choices``,
    ``grader.exercise.calls``), ``sizes`` (a list of whole numbers from 1), ``form`` (a form of the course's engine,
    ``grader.exercise.forms``)."""

    key: str
    type: str
    required: bool = True
    doc: str = ""
    choices: tuple[str, ...] = ()  # what a ``choice`` or ``choices`` option may be, the names a ``call`` may use


@dataclass(frozen=True)
class Kind:
    name: str
    role: Role | None  # the part it grades, or None: the part its ``part`` option names
    lane: Lane
    request: str  # the child's handler for its cases
    focus: str  # what its messages compare: "both" (values and gradients) or "grad"
    codes: frozenset[str]  # every code its rules may give
    checks: Callable[[str, dict], list[Check]]  # a target's checks, from its name and options
    options: tuple[Option, ...] = ()  # what a course configures for a target of this kind
    part: tuple[str, str] | None = None  # (option, what): the option that names the part it grades, and what it is
    summary: str = ""  # what a target of this kind grades, for the staff docs and errors
    # What the learner writes for a target of this kind, as messages name it (``Tensor.__mul__``), from its
    # options; None: the part it grades (a function's name, the target's for another part).
    written: Callable[[dict], str] | None = None
    modules: tuple[str, ...] = ()  # what must be installed where micrograde runs to grade a target of this kind
    speaks: bool = False  # its checks are made knowing the course's engine's words (``checks(name, options, words)``)

    def checks_of(self, name: str, options: dict, words: Words) -> list[Check]:
        """A target's checks, from its name, its options and (where the kind needs them) the engine's words."""
        return self.checks(name, options, words) if self.speaks else self.checks(name, options)

    def role_of(self, options: dict) -> Role:
        """The part of the submission a target of this kind with ``options`` grades (for an option that is a
        call, what it calls)."""
        if self.role is not None:
            return self.role
        option, what = self.part
        return Role(options[option].partition("(")[0].strip(), what)


# Conventions a course may teach for ``backward()`` and accept beside micrograd's own (``accept``), by name.
CONVENTIONS = {
    "zeroes-first": "backward() first sets every gradient in its graph to 0, then seeds and propagates, so a "
                    "second call starts afresh instead of adding to the gradients already there",
}


@dataclass(frozen=True)
class CallingKind(Kind):
    """A kind whose targets grade the class, and a function of the learner's too where one of its options names
    one (a whole expression that calls the learner's ``softmax``, or only the class's ops)."""

    def role_of(self, options: dict) -> Role:
        option, what = self.part
        return Role(options[option], what) if option in options else self.role


# Options of both numerical kinds.
METHOD = Option("method", "choice", required=False, choices=numeric.METHODS,
                doc="the difference asked for: forward (any difference quotient, a symmetric one too) or symmetric")
VARIANTS = Option("variants", "formulas", required=False, doc="other functions of the inputs the learner's code "
                                                              "must follow too (default: derived from `of`)")


def classic_checks(name: str, options: dict) -> list[Check]:
    """The checks of an op, ``backward`` or ``train_step``: the hand-picked cases of ``grader.exercise.cases`` (an
    op graded under a name of its own, ``options["op"]``'s, named for the target)."""
    if "op" in options:
        return [replace(c, id=f"{name}.{c.id.split('.', 1)[1]}") for c in checks_for(options["op"])]
    return checks_for(name)


KINDS: dict[str, Kind] = {kind.name: kind for kind in (
    Kind("op", VALUE, PLAIN, "op", "both", ANY | NODES | {
        "wrong-forward", "wrong-local-grad", "grad-overwrite", "constant-operand", "missing-child",
        "number-child", "detached-backward", "relu-at-zero"}, classic_checks, options=(
        Option("reflected", "flag", required=False,
               doc="false: no case puts a plain number first (2 * a), so the reflected method (__rmul__) is "
                   "not required"),
        Option("op", "name", required=False,
               doc="the op this target grades, where its name is its own (add_forward: op = \"add\"), so that one "
                   "op is graded at several cells of a notebook"),),
        summary="a method of the class: an op and its backward closure"),
    Kind("backward", VALUE, PLAIN, "backward", "grad", ANY | NODES | {
        "missing-seed", "incomplete-traversal", "wrong-order", "repeated-visit", "no-accumulation"}, classic_checks,
        options=(Option("accept", "choices", required=False, choices=tuple(CONVENTIONS),
                        doc="conventions the course teaches, accepted beside micrograd's: "
                            + "; ".join(f"{k}: {v}" for k, v in CONVENTIONS.items())),),
        summary="the class's backward(): the whole backward pass"),
    Kind("train", TRAIN_STEP, TRAINING, "train", "both", ANY | {
        "missing-zero-grad", "zero-grad-misplaced", "wrong-update", "missing-backward", "missing-update",
        "wrong-loss"}, classic_checks,
        summary="one step of training an MLP: zero the gradients, backpropagate, update"),
    Kind("gradient", None, PLAIN, "call", "grad", ANY | {"wrong-derivative", "pasted-constants", "finite-difference"},
         gradients.checks,
         options=(
        Option("function", "name", doc="the learner's function: it takes the inputs and returns every partial "
                                       "derivative, in the order of the inputs"),
        Option("inputs", "names", doc="the names of the function's inputs, in order"),
        Option("of", "formula", doc="the course's function of the inputs, whose gradient is asked for"),
        Option("at", "points", required=False, doc="the points where the course's own notebook checks it"),
    ), part=("function", "function"), summary="a function that returns the gradient of the course's function, "
                                               "derived by hand"),
    Kind("tensor", None, PLAIN, "tensor", "both", ANY | NODES | {
        "wrong-shape", "wrong-forward", "wrong-grad-shape", "detached-result", "wrong-element", "broadcast-not-summed",
        "missing-child", "grad-overwrite", "wrong-local-grad"}, tensorcases.checks, options=(
        Option("class", "name", doc="the course's tensor class, whose entries are Values of the [scaffold] class"),
        Option("op", "choice", doc="the op graded", choices=tuple(TENSOR_OPS)),
        Option("method", "name", required=False, doc="the method the learner writes for it, where the course names "
                                                     "it otherwise (dot: matmul)"),
        Option("also", "choices", required=False, doc="other ops graded in the same target (mul: rmul)",
               choices=tuple(TENSOR_OPS)),
        Option("broadcasting", "flag", required=False, doc="whether two-operand ops are checked on shapes that "
                                                           "broadcast (default true)"),
        Option("axis", "flag", required=False, doc="whether sum, max and argmax are checked along an axis "
                                                   "(default true)"),
        Option("dims", "counts", required=False, doc="the numbers of axes the course's tensors have (default [1, 2])"),
        Option("entries", "choice", required=False, doc='what the tensor class is given to make a tensor: "values" '
                                                        '(Values of the class, the default) or "numbers"',
               choices=("values", "numbers")),
        Option("gradients", "choice", required=False, doc='where gradients live: "entries" (each entry is a Value '
                                                          'with its own, the default) or "tensor" (the tensor holds '
                                                          'numbers and its own gradient array, as .grad)',
               choices=("entries", "tensor")),
        Option("shape_as", "choice", required=False, doc='how the course calls reshape: "sizes" (a.reshape(3, 2), '
                                                         'numpy\'s, the default) or "tuple" (a.reshape((3, 2)))',
               choices=("sizes", "tuple")),
        Option("axis_keyword", "choice", required=False, doc='the keyword the course\'s reductions take an axis by: '
                                                             '"axis" (a.sum(axis=1), numpy\'s, the default) or "dim" '
                                                             '(a.sum(dim=1), PyTorch\'s)', choices=("axis", "dim")),
    ), part=("class", "class"), summary="an op of the course's tensor class, whose entries are Values",
        written=lambda options: f"{options['class']}.{options.get('method', TENSOR_OPS[options['op']].method)}",
        modules=("numpy",)),
    Kind("numerical-gradient", None, PLAIN, "estimate", "grad", ANY | ESTIMATES | {"load-error"},
         numeric.value_checks, options=(
        Option("value", "name", doc="the name the learner's code gives the estimate, a list with one number per "
                                    "input"),
        Option("calls", "name", doc="the name the course's function has in the learner's code: micrograde gives "
                                    "its own function that name when it runs the code again"),
        Option("inputs", "names", doc="the names of the function's inputs, in order"),
        Option("of", "formula", doc="the course's function of the inputs, whose gradient is estimated"),
        Option("at", "numbers", doc="the point the estimate is of, one number per input"),
        METHOD,
        Option("tolerance", "number", required=False, doc="how close to the exact gradient each number must come "
                                                          "(absolute; default 1e-5)"),
        VARIANTS,
    ), part=("value", "value"), summary="a numerical gradient of the course's function that the learner's code "
                                         "computes (a value, not a function)"),
    Kind("numerical-derivative", None, PLAIN, "derivative", "grad", ANY | ESTIMATES, numeric.derivative_checks,
         options=(
        Option("function", "name", doc="the learner's function: it takes a function f, a point x and a step h "
                                       "and estimates f'(x)"),
        Option("inputs", "names", doc="the name of the course's function's input, as `of` writes it"),
        Option("of", "formula", doc="the course's function of its input"),
        Option("at", "numbers", required=False, doc="where the course's notebook calls it (default 1.5)"),
        Option("step", "number", required=False, doc="the h the course's notebook passes (default 1e-4)"),
        METHOD,
        Option("call", "call", required=False, choices=numeric.CALL_NAMES,
               doc="for a function of several inputs, the call the course's notebook makes, e.g. "
                   "central_difference(f, *vals, arg=i, epsilon=h): f the function, *vals the point, i the input "
                   "moved, h the step (then at is one point, one number per input)"),
        Option("arguments", "names", required=False, doc="the function's arguments in its order, among f, x and "
                                                         "h (default [\"f\", \"x\", \"h\"])"),
        VARIANTS,
    ), part=("function", "function"), summary="a function that estimates a derivative numerically, given a "
                                               "function, a point and a step"),
    CallingKind("expression", VALUE, PLAIN, "expression", "both", ANY | NODES | {
        "detached-data", "wrong-expression", "wrong-forward", "wrong-local-grad", "grad-overwrite", "missing-seed"},
        expression.checks, options=(
        Option("code", "code", doc="the computation, in Python on the class's nodes: its leaves are the inputs, "
                                   "its result the node it assigns to `result`"),
        Option("inputs", "names", doc="the computation's leaves, each a node of the class"),
        Option("function", "name", required=False, doc="the learner's function the computation calls; `code` "
                                                       "defines the course's own, which the reference engine runs"),
        Option("result", "name", required=False, doc="the name `code` gives its result (default loss)"),
        Option("at", "points", required=False, doc="the points where the course's own notebook checks it"),
    ), part=("function", "function"), summary="a whole computation on the class's nodes (and a function of the "
                                               "learner's it calls): its value and every input's gradient",
        speaks=True),
    Kind("module", None, MODULES, "module", "both", ANY | NODES | {
        "nested-parameters", "wrong-parameters", "missing-bias", "wrong-activation", "wrong-output", "detached-data",
        "grad-not-reset"}, modules.checks, options=(
        Option("class", "name", doc="the learner's class, as the course names it (Neuron, Linear, MLP)"),
        Option("module", "choice", doc="what it computes", choices=tuple(modules.STRUCTURES)),
        Option("activation", "choice", required=False, choices=("relu", "tanh", "sigmoid"),
               doc="the nonlinearity of its neurons (default relu, as micrograd's nn.py)"),
        Option("nonlin", "flag", required=False, doc="whether a neuron's second argument turns its nonlinearity off "
                                                     "(Neuron(nin, nonlin=False)); default true"),
        Option("neuron", "name", required=False, doc="the course's neuron class it is built of, if that is a "
                                                     "target too: its bugs are charged there"),
        Option("layer", "name", required=False, doc="the course's layer class it is built of, if that is a target "
                                                    "too: its bugs are charged there"),
        Option("input_class", "name", required=False, doc="the course's own tensor class its notebook calls the "
                                                          "module on (Linear(2, 3)(Tensor(X))): the input is made "
                                                          "with it, and an output of it read from what it stores "
                                                          "(default: a numpy array where the submission imports "
                                                          "numpy, else lists)"),
    ), part=("class", "class"), summary="a module on the learner's Value: a neuron, a layer, an MLP, a linear "
                                        "layer, an activation or a loss"),
    Kind("optimizer", None, MODULES, "optimizer", "both", ANY | {"wrong-update", "missing-update", "grad-not-reset"},
         optimizers.checks, options=(
        Option("init", "call", doc="how the course's notebook builds it, e.g. SGD(params, lr=lr)",
               choices=optimizers.NAMES),
        Option("method", "choice", doc="the method graded", choices=("step", "zero_grad")),
    ), part=("init", "class"), summary="an optimizer's step or zero_grad, on the grader's parameters"),
    Kind("graph", VALUE, PLAIN, "graph", "both", ANY | NODES | {"wrong-update", "missing-update", "grad-not-reset"},
         optimizers.graph_checks, options=(
        Option("method", "choice", doc="the method of the output graded", choices=tuple(optimizers.GRAPH_CALLS)),
        Option("call", "form", required=False, doc="how the course calls it on the output out, with the learning "
                                                   "rate lr (default out.zero_grad(), out.step(lr))"),
    ), summary="a method of a graph's output that reaches its whole graph: zero_grad() or step(lr)",
        written=lambda options: options["method"]),
    Kind("training", None, TRAINING, "loop", "both", ANY | {
        "missing-zero-grad", "zero-grad-misplaced", "wrong-update", "missing-backward", "missing-update",
        "wrong-loss"}, loops.checks, options=(
        Option("call", "call", doc="the call the course's notebook makes, e.g. train(model, xs, ys, epochs, lr)",
               choices=loops.NAMES),
        Option("loss", "choice", doc="the loss it minimises", choices=loops.LOSSES),
        Option("returns", "choice", required=False, choices=loops.RETURNS,
               doc="what it returns (default: loss, the loss before the update)"),
        Option("activation", "choice", required=False, choices=("tanh", "relu", "sigmoid"),
               doc="the nonlinearity of the grader's MLP (default tanh)"),
        Option("sizes", "sizes", required=False, doc="the grader's MLP: inputs, then each layer's neurons "
                                                     "(default [3, 4, 4, 1], or [2, 4, 3] for cross-entropy)"),
    ), part=("call", "function"), summary="a training function with the course's signature, on the grader's MLP"),
)}

# The targets that are not ops, by the kind of each (an op's kind is "op").
GIVEN_TARGETS = {"backward": "backward", "train_step": "train"}


def kind_of(target: str) -> Kind:
    """The kind of the target named ``target`` when its configuration does not say (``KeyError`` for a name
    that is neither an op nor ``backward`` nor ``train_step``)."""
    return KINDS["op"] if target in ops.OPS else KINDS[GIVEN_TARGETS[target]]
