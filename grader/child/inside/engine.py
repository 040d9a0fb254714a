"""The learner's engine as every kind of target drives it: one protocol, whatever the engine's shape.

Every handler of the child makes leaves, applies ops, runs a backward pass and reads values,
gradients and operands through an ``Engine``, never through an attribute name of its own. An engine
is what the course's configuration describes (``[engine]``: forms the grading process read and never
ran, ``grader.exercise.forms``), and for whatever it leaves out, what the class shows of itself:
micrograd's names and their usual aliases (``interface``), else operands one attribute deep in a
record (``history.inputs``) and the one attribute that holds a gradient after ``backward()``. What was
assumed rather than said is ``assumed``, for the report.

A node's chain-rule step, which micrograde's own backward pass runs so that an op is graded apart from
the learner's ``backward()``, comes in one of three modes:

- ``closure``: each node keeps a function that adds its share to its operands' gradients (micrograd's
  ``_backward``, under any name). Gradients live on the nodes.
- ``returns``: the step is called with the gradient flowing into the node and returns each operand's
  share, as pairs ``(input, share)`` or one share per operand (a ``chain_rule(d)`` method, a Function
  class's ``backward(ctx, d)``); or the node stores pairs ``(input, local derivative)`` (``local``).
  micrograde keeps the gradients of its own pass in a table.
- ``engine``: no step micrograde can call: an op is graded through the engine's own backward pass.

Values may be Python numbers or numpy arrays (a 0-d or one-entry array is a number; a seed or a zero is
made like the value it goes with: ``ones_like`` for an array).
"""


from .failures import InterfaceError, MissingMethod, SubmissionError
from .forms import FormError, evaluate, path_of, uses
from .interface import Interface, comparison, data_name, probe_leaf
from .nodes import CONTAINERS, fixed_node, like, one_path, read, shares, write
from .reading import address, number, stored_or_none
from .watching import Watching


class Engine(Watching):
    """How to make, run and read nodes of the learner's class ``V``, as ``description`` says and the class shows.

    ``description`` is the course's ``[engine]`` table as forms (a dict of trees; empty for none), ``calls``
    how the course applies its ops (an op's method to a form), ``namespaces`` the submission's modules'
    globals, where a form's other names are found, and ``children_names`` where a micrograd-like class may
    keep its operands, in the order they are tried."""

    def __init__(self, V, description, namespaces, children_names, calls=None):
        self.V = V
        self.forms = dict(description or {})
        self.namespaces = namespaces
        self.calls = dict(calls or {})
        self.assumed = {}  # the exercise's name -> what the class showed instead, where the course said nothing
        self.fixed = {}  # address -> (node, operands, derivatives): nodes of micrograde's whose step it knows
        self.table = {}  # address -> (node, gradient): the gradients of micrograde's own pass ("returns" mode)
        self.returned = None  # what the last backward pass returned (a gradient may be read from it)
        self.iface = None
        if not self.forms:
            try:
                self.micrograd(Interface(V, children_names))
                return
            except InterfaceError as exc:  # not micrograd's shape: what else the class shows, or that message
                failure = exc
        else:
            failure = None
        self.described(children_names, failure)

    # -- the engine's shape --------------------------------------------------------------------------------

    def micrograd(self, iface):
        """An engine shaped like micrograd: everything as ``Interface`` found it (what micrograde always did)."""
        self.iface = iface
        self.leaf, self.make = iface.leaf, iface.make
        self.data_path, self.grad_path = (iface.data,), (iface.grad,)
        self.closure, self.operands_path = (iface.closure,), (iface.attr,)
        self.equality = iface.equality
        self.assumed = dict(iface.inferred)
        self.mode, self.leaves_only = "closure", False

    def described(self, children_names, failure):
        """An engine as the course describes it, the rest found from what its nodes show; ``failure`` is why
        it is not micrograd's shape, when the course described nothing (said again if nothing else shows)."""
        forms, V = self.forms, self.V
        self.leaves_only = forms.get("grad_on") == "leaves"
        if "leaf" in forms:
            self.leaf = self.leaf_form
            a, b = self.leaf_form(2.0), self.leaf_form(3.0)
        else:
            self.leaf, a, b = probe_leaf(V)
        self.equality = comparison(a, self.leaf(2.0))
        self.data_path = one_path(forms.get("value"))
        if "value" not in forms:
            self.data_path = (data_name(a, b, 2.0, 3.0),)
        self.grad_path = one_path(forms.get("grad"))
        self.operands_path = one_path(forms.get("operands")) if forms.get("operands") else None
        step = forms.get("step")
        self.closure = None
        if step is not None and step[0] == "call" and not step[2] and not step[3] and not uses(step, "grad"):
            self.closure = one_path(step[1])  # a function the node keeps, run with no argument
        self.mode = "closure" if self.closure else "returns" if step is not None or "local" in forms else "engine"
        if "operands" not in forms and "local" not in forms and not self.find_operands(a, b, children_names):
            if failure is not None:
                raise failure
        if "grad" not in forms:
            self.find_gradient(a, b)
        if failure is not None and self.mode == "engine" and self.closure is None:
            self.find_closure(a, b)
        if failure is not None and self.mode == "engine":
            self.find_step(a, b)
        self.make = self.made_node

    def leaf_form(self, x):
        try:
            node = self.run(self.forms["leaf"], x=x)
        except ModuleNotFoundError:
            raise
        except MissingMethod as exc:
            raise InterfaceError(f"[engine] leaf: {exc}") from None
        except Exception as exc:  # noqa: BLE001 - the course's form makes no node of this submission's class
            raise InterfaceError(f"[engine] leaf could not make a node of {x} ({type(exc).__name__}: {exc})") from None
        if not isinstance(node, self.V):
            raise InterfaceError(f"[engine] leaf made a {type(node).__name__}, not a {self.V.__name__}")
        return node

    def made_node(self, data, children, label):
        """A node holding ``data`` whose operands are ``children``: a leaf whose operands are then set where the
        engine keeps them (where it cannot be set, only micrograde's own pass knows them: ``fixed``)."""
        node = self.leaf(data)
        if self.operands_path is not None:
            held = stored_or_none(node, self.operands_path[0]) if len(self.operands_path) == 1 else None
            kind = type(held) if isinstance(held, CONTAINERS) else tuple
            try:
                write(node, self.operands_path, kind(children))
            except Exception:  # noqa: BLE001 - a record that cannot be written: micrograde keeps the operands
                pass
        return node

    # -- running forms -------------------------------------------------------------------------------------

    def run(self, form, **given):
        try:
            return evaluate(form, given, self.namespaces)
        except FormError as exc:
            raise MissingMethod(str(exc)) from None

    # -- reading and writing nodes -------------------------------------------------------------------------

    @property
    def steppable(self):
        """Whether a backward pass the learner's code runs can go through micrograde's own nodes: their closure
        (``closure`` mode), or their step or pairs where the node keeps them (``returns`` mode), not a tape the
        engine keeps elsewhere (``TAPE.pairs(node)``)."""
        if self.mode == "closure":
            return True
        if self.mode != "returns":
            return False
        form = self.forms["local"] if "local" in self.forms else self.forms["step"][1]
        return path_of(form, "node") is not None

    @property
    def passes(self):
        """Whether gradients can be had at all: a step micrograde runs, or a backward pass of the engine's."""
        return self.mode != "engine" or "backward" in self.forms or getattr(self.V, "backward", None) is not None

    @property
    def is_structured(self):
        """Whether micrograde can tell a node's operands (else structure checks are off)."""
        return self.iface is not None or self.operands_path is not None or "local" in self.forms

    def value(self, node):
        """The node's number, as it holds it (``None`` where it holds none)."""
        if self.iface is not None:
            return stored_or_none(node, self.data_path[0])
        if self.data_path is None:
            return self.run(self.forms["value"], node=node)
        try:
            return read(node, self.data_path)
        except AttributeError:
            return None

    def data(self, node):
        """The node's number, for the grading process (``reading.number``)."""
        return number(self.value(node))

    def grad(self, node):
        """The node's gradient as the engine keeps it, for the grading process."""
        if self.iface is not None:
            return number(stored_or_none(node, self.grad_path[0]))
        if self.grad_path is None:
            try:
                return number(self.run(self.forms["grad"], node=node, returned=self.returned))
            except LookupError:
                return 0.0  # a table of gradients the pass returned, without this node: none flowed to it
        try:
            held = read(node, self.grad_path)
        except AttributeError:
            held = None
        if held is None and self.leaves_only:
            return None  # a node that is not a leaf keeps no gradient in this engine: nothing to compare
        return number(held) if held is not None else {"invalid": "no gradient"}

    def set_value(self, node, x):
        """Give the node the number ``x`` (a parameter's starting value), made like its value."""
        if self.iface is not None:
            setattr(node, self.data_path[0], x)
        elif self.data_path is None:
            raise InterfaceError("[engine] value is not an attribute micrograde can set")
        else:
            write(node, self.data_path, like(self.value(node), x))

    def set_grad(self, node, x):
        """Give the node the gradient ``x``, made like its value (an array of its shape for an array)."""
        if self.grad_path is None:
            raise InterfaceError("[engine] grad is not an attribute micrograde can set")
        value = like(self.value(node), x) if self.iface is None else x
        if len(self.grad_path) == 1:
            setattr(node, self.grad_path[0], value)
        else:
            write(node, self.grad_path, value)

    def children(self, node):
        """The node's operands that are nodes, in the order it keeps them (a fresh list)."""
        fixed = self.fixed.get(address(node))
        if fixed is not None and fixed[0] is node:
            return [o for o in fixed[1] if isinstance(o, self.V)]
        if self.iface is not None:
            return self.iface.children(node)
        if self.operands_path is None:
            return [p[0] for p in self.pairs(node) if isinstance(p[0], self.V)] if "local" in self.forms else []
        try:
            held = read(node, self.operands_path)
        except AttributeError:
            return []
        if not isinstance(held, CONTAINERS):
            return []
        found = []
        for item in held:
            if isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], self.V):
                item = item[0]  # operands kept beside their local derivatives: (parent, d)
            if isinstance(item, self.V):
                found.append(item)
        return found

    def ordered(self, node):
        """Whether the node keeps its operands in order (a list or tuple, not a set): then the first is ``self``."""
        if self.operands_path is None:
            return "local" in self.forms
        try:
            return type(read(node, self.operands_path)) in (list, tuple)
        except AttributeError:
            return False

    def pairs(self, node):
        """The ``(input, local derivative)`` pairs the node stores (``local``)."""
        try:
            held = self.run(self.forms["local"], node=node)
        except AttributeError:
            return []
        return [tuple(p) for p in held if isinstance(p, (list, tuple)) and len(p) == 2] \
            if isinstance(held, CONTAINERS) else []

    def step(self, node):
        """The closure the node keeps (its ``_backward``, under the engine's name), or ``None``."""
        if self.closure is None:
            return None
        try:
            found = read(node, self.closure)
        except AttributeError:
            return None
        return found if callable(found) else None

    def set_step(self, node, function):
        """Make ``function`` the node's closure."""
        if len(self.closure) == 1:
            setattr(node, self.closure[0], function)
        else:
            write(node, self.closure, function)

    # -- ops and passes ------------------------------------------------------------------------------------

    def called(self, method, args, exponent=None):
        """The learner's op as the course calls it (its ``call`` form), or ``None`` where the course calls it
        as Python code does (an operator, a method)."""
        form = self.calls.get(method)
        if form is None:
            return None
        return self.run(form, a=args[0], b=args[1] if len(args) > 1 else None, k=exponent)

    def backward(self, root):
        """Start the engine's (or the learner's) backward pass from ``root``, as the course does."""
        form = self.forms.get("backward")
        if form is None:
            if getattr(type(root), "backward", None) is None:
                raise MissingMethod(f"{self.V.__name__} has no method backward")
            self.returned = root.backward()
        else:
            self.returned = self.run(form, out=root)
        return self.returned

    def own_pass(self, seeds, topo):
        """micrograde's own backward pass over ``topo`` (the graph in topological order), every node's step run
        once from the roots back, each root of ``seeds`` (``(node, number)`` pairs) given its number as its
        gradient (made like its value). In the ``engine`` mode it is the engine's own pass, from one root."""
        if self.mode == "engine":
            if len(seeds) != 1 or seeds[0][1] != 1.0:
                raise SubmissionError("micrograde can start this engine's backward pass only from one output")
            self.backward(seeds[0][0])
            return
        if self.mode == "closure":
            for root, x in seeds:
                self.set_grad(root, x)
            for v in reversed(topo):
                step = self.step(v)
                if step is not None:  # a leaf may have no closure at all
                    step()
            return
        table = self.table = {address(root): (root, like(self.value(root), x)) for root, x in seeds}
        for v in reversed(topo):
            found = table.get(address(v))
            if found is None:
                continue  # nothing flows into it
            for operand, share in self.shares(v, found[1]):
                held = table.get(address(operand))
                table[address(operand)] = (operand, share if held is None else held[1] + share)

    def passed(self, node):
        """The node's gradient after micrograde's own pass, for the grading process."""
        if self.mode != "returns":
            return self.grad(node)
        found = self.table.get(address(node))
        return number(found[1]) if found is not None else 0.0

    def shares(self, node, g):
        """What ``node`` passes to its operands when ``g`` flows into it: ``(operand, share)`` pairs."""
        fixed = self.fixed.get(address(node))
        if fixed is not None and fixed[0] is node:
            derivs = fixed[2]() if callable(fixed[2]) else fixed[2]
            return [(o, d * g) for o, d in zip(fixed[1], derivs) if isinstance(o, self.V)]
        operands = self.children(node)
        if not operands:
            return []  # a leaf, or a constant the engine made of a plain number
        if "local" in self.forms:
            return [(p[0], p[1] * g) for p in self.pairs(node) if isinstance(p[0], self.V)]
        return shares(self.run(self.forms["step"], node=node, grad=g), operands, self.V)

    def fixed_node(self, data, operands, derivs, label, on_backward=None):
        """A node of the learner's class whose value and local derivatives micrograde gives as numbers (or as a
        function that gives them, asked once the pass reaches the node): ``fixed_node``."""
        return fixed_node(self, data, operands, derivs, label, on_backward)

    def put_grad(self, node, value):
        if len(self.grad_path) == 1:
            setattr(node, self.grad_path[0], value)
        else:
            write(node, self.grad_path, value)
