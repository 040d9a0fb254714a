"""The student files of a course's exercise, written from its configuration.

``micrograde scaffold --config C OUT`` writes ``engine.py`` (the value class
with a stub for every graded op and ``backward``), ``train.py`` (the
``train_step`` stub) and the notebook with the same stubs, explanations and
the ``check()`` cell. The bundled ``exercises/`` are the default
configuration's scaffold, and a test keeps them equal. Stubs say what to
compute and the local derivative; never how to write it.
"""

from __future__ import annotations

from pathlib import Path

from grader.exercise.config import as_toml, default, tables
from grader.exercise.kinds import ROLES, TRAIN_STEP, VALUE
from grader.exercise.ops import GIVEN, OPS
from grader.exercise.targets import Exercise
from grader.staff.placing import placed, write_files
from grader.staff.stubs import STUBS, class_stubs, module_stubs
from grader.submission.carried import embed, mark

# The classic four keep the words students have always read; other ops' docstrings
# are made from their summary and rule.
CLASSIC_DOCS = {
    "add": """Return a new {cls} for ``self + other``.

        ``other`` may be a plain number: wrap it in a {cls} first.
        The result must remember its operands (pass them as ``_children``) and
        get a ``_backward`` that passes the result's gradient to each operand.
        Local derivative: d(a + b)/da = 1 and d(a + b)/db = 1.
        Chain rule: an operand's gradient grows by (local derivative) * out.grad.
        Use ``+=``, never ``=``: one {cls} can feed several results (think of
        ``a + a``), and each of them adds its own share.
        """,
    "mul": """Return a new {cls} for ``self * other``.

        ``other`` may be a plain number, as in ``__add__``.
        Local derivative: d(a * b)/da = b and d(a * b)/db = a.
        Multiply by out.grad and accumulate with ``+=``.
        """,
    "pow": """Return a new {cls} for ``self ** other``, where ``other`` is a plain int or float.

        Local derivative (power rule): d(x ** n)/dx = n * x ** (n - 1).
        The exponent is a constant, so only ``self`` receives a gradient.
        """,
    "tanh": """Return a new {cls} for the hyperbolic tangent of ``self``.

        ``math.tanh`` computes it. If t = tanh(x), then d(t)/dx = 1 - t ** 2.
        """,
}

BACKWARD_DOC = """Fill in ``.grad`` of every {cls} this one was computed from.

        1. Order the graph topologically: visit each node once, and list it
           only after every node in its ``_prev`` is listed.
        2. The gradient of a value with respect to itself is 1.
        3. Call ``_backward`` of every node, from this one back to the inputs
           (the reverse of step 1's list), so that each node has received all of
           its gradient before it passes it on.
        Do not reset any ``.grad`` here: resetting is the training loop's job.
        """

GIVEN_BACKWARD = '''    def backward(self):  # given: reverse topological order, each node once
        topo, visited = [], set()

        def build(v):
            if v not in visited:
                visited.add(v)
                for child in v._prev:
                    build(child)
                topo.append(v)

        build(self)
        self.grad = 1.0
        for node in reversed(topo):
            node._backward()
'''

TRAIN_DOC = '''"""Do one step of gradient descent and return the loss *before* the update.

    ``model(x)`` gives the prediction (a {cls}) for one input ``x``;
    ``model.parameters()`` lists the {cls}s to train; ``model.zero_grad()``
    sets all their gradients to 0.

    1. The loss is the sum over the examples of (prediction - target) ** 2.
    2. Gradients accumulate with ``+=``, so last step's gradients must be
       cleared before this step's backward pass adds new ones.
    3. Backpropagate from the loss.
    4. Move every parameter a step of size ``lr`` *against* its gradient:
       that is the direction in which the loss goes down.
    """'''


# ``train_step`` as a course that gives it writes it (``given = true``): checked, worth no points.
GIVEN_TRAIN = """    # Given by the course: it is checked, and worth no points.
    ypred = [model(x) for x in xs]
    loss = sum((yout - ygt) ** 2 for ygt, yout in zip(ys, ypred))
    model.zero_grad()
    loss.backward()
    for p in model.parameters():
        p.data += -lr * p.grad
    return loss.data"""


def stub_doc(name: str, cls: str) -> str:
    if name in CLASSIC_DOCS:
        return CLASSIC_DOCS[name].format(cls=cls)
    op = OPS[name]
    return (f"Return a new {cls} for {op.summary}.\n\n        Local derivative: {op.rule}.\n"
            f"        Multiply by out.grad and accumulate with ``+=``.\n        ")


def stub(method: str, signature: str, doc: str) -> str:
    return f'    def {method}({signature}):\n        """{doc}"""\n        raise NotImplementedError("{method}")\n'


def reference_method(method: str, cls: str) -> str:
    """The reference engine's own ``method`` (micrograd's), for the class named ``cls``: what a scaffold
    writes out for a part the course gives."""
    import ast
    import inspect
    import re

    import reference.engine

    source = inspect.getsource(reference.engine)
    node = next(n for c in ast.parse(source).body if isinstance(c, ast.ClassDef) for n in c.body
                if isinstance(n, ast.FunctionDef) and n.name == method)
    text = "".join(source.splitlines(keepends=True)[node.lineno - 1:node.end_lineno])
    return re.sub(r"\bValue\b", cls, text)


def given_method(target: str, method: str, cls: str) -> str:
    """A part the course gives, written out (``given = true``): micrograd's own code, marked as given."""
    note = f"    # Given by the course ({target}): it is checked, and worth no points.\n"
    return note + reference_method(method, cls)


def value_class(exercise: Exercise) -> str:
    """The value class: its constructor, a stub per graded method (the course's own code for a given one),
    the operators it gives."""
    cls = exercise.config.class_name
    parts = [f'''class {cls}:
    """A scalar that remembers how it was computed, so it can be differentiated."""

    def __init__(self, data, _children=(), _op="", label=""):
        self.data = data
        self.grad = 0.0  # d(output)/d(self), filled in by backward()
        self._backward = lambda: None  # pushes self.grad on to the operands
        self._prev = set(_children)  # the {cls}s this one was computed from
        self._op = _op
        self.label = label

    def __repr__(self):
        return f"{cls}(data={{self.data}}, grad={{self.grad}})"
''']
    targets = {t.op_name: t for t in exercise.op_targets}  # one stub an op, however many targets grade it
    graded = list(targets)
    for name, target in targets.items():
        op = OPS[name]
        signature = "self" if op.arity == 1 and not op.exponent else "self, other"
        parts.append(given_method(name, op.method, cls) if target.given
                     else stub(op.method, signature, stub_doc(name, cls)))
    if methods := class_stubs(exercise):
        parts.append(methods)
    if "backward" in exercise.names and not exercise.target("backward").given:
        parts.append(stub("backward", "self", BACKWARD_DOC.format(cls=cls)))
    else:
        parts.append(GIVEN_BACKWARD)
    available = set(graded)
    given = []
    for op, method, meaning, body, uses in GIVEN:
        if op not in graded and set(uses) <= available:
            given.append(f"    def {method}(self{'' if method == '__neg__' else ', other'}):  # {meaning}\n"
                         f"        {body}\n")
            if op is not None:
                available.add(op)
    if given:
        what = "five methods" if len(graded) == 4 and "backward" in exercise.names else "methods"
        parts.append(f"    # Given: these use the {what} above.\n" + "\n".join(given))
    return "\n".join(parts)


def needs_math(exercise: Exercise) -> bool:
    return any(OPS[t.op_name].uses_math for t in exercise.op_targets)


def written_by_students(exercise: Exercise) -> list[str]:
    """The methods of the class the students write: the graded ops and ``backward``, not the given ones."""
    return [exercise.method(t.name) for t in exercise.targets if t.kind.role is VALUE and not t.given]


def engine_file(exercise: Exercise) -> str:
    graded = written_by_students(exercise)
    methods = ", ".join(f"``{m}``" for m in graded)
    header = f'''"""Build micrograd yourself: a scalar that knows its own gradient.

Fill in the methods that raise NotImplementedError:
{methods}.
Everything else is given and is written in terms of those, so ``2 * a``,
``a - 1`` and ``a / b`` start working as soon as the methods they use do.

Check your work at any time with:  micrograde grade {exercise.config.scaffold["engine_file"]}
"""
'''
    imports = "\nimport math\n" if needs_math(exercise) else ""
    others = module_stubs(exercise)
    return f"{header}{imports}\n\n{value_class(exercise)}" + (f"\n\n{others}" if others else "")


def train_file(exercise: Exercise) -> str:
    name = exercise.config.train_function
    train = exercise.config.scaffold["train_file"]
    return f'''"""One step of training a neural network with your engine.

Check your work at any time with:  micrograde grade {train}
(or grade the whole folder:  micrograde grade .)
"""


def {name}(model, xs, ys, lr):
    {TRAIN_DOC.format(cls=exercise.config.class_name)}
{GIVEN_TRAIN if exercise.target("train_step").given else f'    raise NotImplementedError("{name}")'}
'''


def notebook(exercise: Exercise) -> str:
    """The exercise as a notebook, saved as Jupyter saves it (cell ids fixed, so it is reproducible)."""
    import nbformat

    cls = exercise.config.class_name
    train = exercise.config.train_function
    ops = set(exercise.names)
    training = TRAIN_STEP in exercise.roles
    yours = f"The methods of `{cls}` and the function `{train}`" if training else f"The methods of `{cls}`"
    cells = [nbformat.v4.new_markdown_cell(f"""# Build micrograd yourself

You will write the heart of an automatic-differentiation engine: a scalar `{cls}`
that remembers how it was computed, and a `backward()` that fills in the gradient of
every value it depends on.{" Then you will use it for one step of training." if training else ""}

{yours} that raise
`NotImplementedError` are yours to fill in. Run the cells, and check your work with the
last cell: the grader tells you which method is wrong and shows the smallest
expression where it goes wrong.""")]
    if needs_math(exercise):
        cells.append(nbformat.v4.new_code_cell("import math"))
    cells += [nbformat.v4.new_markdown_cell(f"""## The `{cls}` class

Every arithmetic operation makes a new `{cls}` and records:

* `data`: the number itself;
* `_prev`: the {cls}s it was computed from (its operands);
* `_backward`: a small function that, once `out.grad` is known, adds each operand's
  share to the operand's `.grad`.

**The chain rule.** If `out = f(a, b)`, then `a.grad` grows by
`(d out / d a) * out.grad`: the *local* derivative of the operation times the
gradient that has reached `out`.

**Accumulate, never assign.** A {cls} can be used by several results (`a * a`, or
`a` feeding two different nodes). Each use adds its own contribution, so `_backward`
must use `+=`."""), nbformat.v4.new_code_cell(value_class(exercise).rstrip("\n"))]
    if {"add", "mul"} <= ops:
        cells += [nbformat.v4.new_markdown_cell("""## Try it

This cell raises `NotImplementedError` until `__add__` and `__mul__` work. That is fine:
the grader keeps going past cells that fail."""), nbformat.v4.new_code_cell(
            f"a = {cls}(2.0, label='a')\nb = {cls}(-3.0, label='b')\nc = a * b + 10\nc")]
        if "backward" in ops:
            cells += [nbformat.v4.new_markdown_cell("""## Backpropagation

`backward()` visits the graph in *reverse topological order*: a node passes its
gradient on only after every node that uses it has added its share.

For `L = (a*b + c) * f` with `a = 2`, `b = -3`, `c = 10`, `f = -2` you should see
`L.data = -8.0`, and the gradients `a.grad = 6.0`, `b.grad = -4.0`, `c.grad = -2.0`,
`f.grad = 4.0`. Work one of them out by hand with the chain rule first."""), nbformat.v4.new_code_cell(
                f"a, b, c, f = {cls}(2.0), {cls}(-3.0), {cls}(10.0), {cls}(-2.0)\nL = (a * b + c) * f\n"
                "L.backward()\nprint(L.data, a.grad, b.grad, c.grad, f.grad)")]
    checked = [cls]
    if TRAIN_STEP in exercise.roles:
        checked.append(train)
        cells += [nbformat.v4.new_markdown_cell(f"""## One step of training

`{train}` receives a model (call it on an input to get a prediction; it has
`parameters()` and `zero_grad()`), a list of inputs, their targets and a learning
rate. The grader runs it on its own small neural network, so only this function
is judged here, not your engine."""), nbformat.v4.new_code_cell(
            train_file(exercise).split("\n\n\n", 1)[1].rstrip("\n"))]
    own = own_course(exercise)
    terminal = (f"`micrograde grade {exercise.config.scaffold['notebook']}` run in the folder of the course's "
                "`micrograde.toml`" if own else f"`micrograde grade {exercise.config.scaffold['notebook']}`")
    cells += [nbformat.v4.new_markdown_cell(f"""## Check your work

Run the cell below: it grades your {' and '.join(f'`{c}`' for c in checked)} and shows the report
right here. (In a terminal, {terminal} does the same.)

The grader tries every method on many small expressions, each built so that only the
method under test can go wrong, and explains each mistake it finds with the smallest
expression that shows it."""), nbformat.v4.new_code_cell(
        f"from grader import check\n\ncheck({', '.join([*checked, *[mark(exercise.config.sha256)][:own]])})")]
    for number, cell in enumerate(cells):
        cell["id"] = f"cell-{number:02d}"
    book = nbformat.v4.new_notebook(cells=cells, metadata={
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"}})
    if own:
        embed(book, course_file(exercise), exercise.config.sha256)
    return nbformat.writes(book) + "\n"


COURSE_FILE = "micrograde.toml"
FILE_KEYS = ("engine_file", "notebook", "train_file")  # the [scaffold] keys that name files


def scaffold_files(exercise: Exercise) -> dict[str, str]:
    """File name -> content, for every student file of the exercise; and, for a course other than the
    classic exercise, its configuration as ``micrograde.toml``, which ``check()`` and ``micrograde grade``
    run in that folder (every command the files suggest) grade by."""
    names = exercise.config.scaffold
    files = {names["engine_file"]: engine_file(exercise), names["notebook"]: notebook(exercise)}
    if TRAIN_STEP in exercise.roles:
        files[names["train_file"]] = train_file(exercise)
    if own_course(exercise):
        files[COURSE_FILE] = course_file(exercise)
    return files


def own_course(exercise: Exercise) -> bool:
    """Whether the exercise is a course's own, not the classic one: its files then carry its configuration
    (a ``micrograde.toml`` beside them, and in the notebook: ``grader.submission.carried``)."""
    return exercise.config.sha256 != default().sha256


def course_file(exercise: Exercise) -> str:
    """The course's configuration as the files beside the students' work carry it."""
    return as_toml(tables(exercise.config), "The course's configuration, which check() and `micrograde grade` in "
                   "this folder grade by.")


def without_stubs(exercise: Exercise) -> list[str]:
    """The targets the scaffold writes nothing for, whose files the course hands out itself: those of a kind with
    no stub beyond the class and the training step (``grader.staff.stubs``), and a given part outside them (a
    Tensor the course hands out whole), whose code only the course has."""
    return [t.name for t in exercise.targets if t.kind.role not in ROLES and (t.given or t.kind.name not in STUBS)]


def write_scaffold(exercise: Exercise, directory: Path) -> list[Path]:
    """Every student file of the exercise, in ``directory`` (its ``[scaffold]`` names checked: ``placing``)."""
    keys = {name: key for key, name in exercise.config.scaffold.items() if key in FILE_KEYS}
    return write_files({placed(directory, name, keys[name], exercise.config.source) if name in keys
                        else directory / name: text for name, text in scaffold_files(exercise).items()})
