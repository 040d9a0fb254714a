"""What an engine shows of itself when micrograde watches it: where its nodes keep their operands, their gradient,
their closure or their chain-rule step, and how its step returns the operands' shares.

Where a course says nothing of a part of its engine (``[engine]``), the ``Engine`` finds it by watching nodes the
engine's own ops make: each ``find_...`` runs one small computation (a product of two leaves) and keeps what the
engine showed, saying in ``assumed`` what it assumed. Only the learner's code runs here, on fresh leaves; nothing is
kept of it but names.
"""

from .forms import path_of
from .interface import holds
from .nodes import CONTAINERS, like, shares
from .reading import address, number, stored_items, stored_or_none


class Watching:
    """The ``Engine``'s ways of finding a part of the engine by watching it (mixed into ``Engine``)."""

    def find_operands(self, a, b, children_names):
        """Where a node an op made keeps its operands, when the course does not say: one of ``children_names``,
        or an attribute one deep in a record the node keeps (``history.inputs``, ``_ctx.parents``)."""
        out = self.probe_op(a, b)
        if out is None:
            return False
        for name in children_names:
            if holds(stored_or_none(out, name), (a, b)):
                self.operands_path = (name,)
                return True
        for name, record in stored_items(out):
            if isinstance(record, (int, float, str, *CONTAINERS)) or callable(record) or record is None:
                continue
            for inner, value in stored_items(record):
                if holds(value, (a, b)):
                    self.operands_path = (name, inner)
                    self.assumed["_prev"] = f"{name}.{inner}"
                    return True
        return False

    def probe_op(self, a, b):
        """A node the engine makes of ``a`` and ``b`` (their product, else their sum), or ``None``."""
        for apply in (lambda: a * b, lambda: a + b):
            try:
                out = apply()
            except Exception:  # noqa: BLE001 - an op not written yet: another may show it
                continue
            if isinstance(out, self.V):
                return out
        return None

    def find_gradient(self, a, b):
        """The attribute a leaf keeps its gradient in, when the course does not say: ``grad`` where leaves store
        one, else the one attribute that holds ``d(a*b)/da`` (3) once the engine's backward pass has run."""
        self.grad_path = ("grad",)
        if "grad" in dict(stored_items(a)):
            return
        before = dict(stored_items(a))
        try:
            out = a * b
            self.backward(out)
        except Exception:  # noqa: BLE001 - no pass to watch: the exercise's name stands
            return
        found = [name for name, value in stored_items(a) if (name,) != self.data_path
                 and before.get(name) is not value and number(value) == 3.0]
        if len(found) == 1:
            self.grad_path = (found[0],)
            self.assumed["grad"] = found[0]

    def find_closure(self, a, b):
        """The function a node an op made keeps and that passes gradient on when run with none (micrograd's
        ``_backward`` under a name the exercise does not know): found by watching it run."""
        out = self.probe_op(a, b)
        if out is None:
            return
        for name, function in stored_items(out):
            if not callable(function) or isinstance(function, type):
                continue
            try:
                self.set_grad(a, 0.0)
                self.set_grad(out, 1.0)
                function()
                moved = self.grad(a) == 3.0
            except Exception:  # noqa: BLE001 - not a closure that runs on its own
                moved = False
            if moved:
                self.closure, self.mode = (name,), "closure"
                self.assumed["_backward"] = name
                return

    def find_step(self, a, b):
        """A node's chain-rule step the class shows as a method of one argument (``chain_rule(d)``): given the
        gradient flowing into a node an op made, it returns each operand's share (as ``(operand, share)`` pairs
        or one per operand). Found by running each such method once on such a node; the first that answers so
        is the step micrograde's own pass runs."""
        out = self.probe_op(a, b)
        if out is None:
            return
        for klass in type.__dict__["__mro__"].__get__(self.V)[:-1]:
            for name, function in type.__dict__["__dict__"].__get__(klass).items():
                code = getattr(function, "__code__", None)
                if name.startswith("_") or code is None or code.co_argcount != 2:
                    continue
                form = ("call", ("attr", ("name", "node"), name), (("name", "grad"),), ())
                try:
                    found = shares(self.run(form, node=out, grad=like(self.value(out), 1.0)), self.children(out),
                                   self.V)
                except Exception:  # noqa: BLE001 - not a step: another method may be
                    continue
                if len(found) == 2 and {address(o) for o, _ in found} == {address(a), address(b)}:
                    self.forms["step"], self.mode = form, "returns"
                    self.assumed["step"] = f"{name}(grad)"
                    return

    def carrier(self, children):
        """A node an op of the engine makes of ``children`` (one or two nodes): the first of its sum, product
        and difference (and for one node, its negation) that gives a node; else a leaf."""
        a, b = (children + children)[:2] if children else (None, None)
        tries = [] if a is None else [lambda: a + b, lambda: a * b, lambda: a - b, lambda: -a]
        for make in tries:
            try:
                node = make()
            except Exception:  # noqa: BLE001 - an op not written yet: another may make the node
                continue
            if isinstance(node, self.V) and self.children(node):
                return node
        return self.leaf(0.0)

    def probe_unary(self, a):
        """A node the engine makes of ``a`` alone (its negation, else its exp, tanh...), or ``None``."""
        for apply in (lambda: -a, lambda: a.exp(), lambda: a.tanh(), lambda: a.relu(), lambda: a.sigmoid()):
            try:
                out = apply()
            except Exception:  # noqa: BLE001 - not an op of this engine
                continue
            if isinstance(out, self.V) and len(self.children(out)) == 1:
                return out
        return None

    @property
    def step_shape(self):
        """How the engine's own step returns shares: ``pairs`` (input, share), one per operand (``shares``), and
        for a node of one operand, a tuple of one (``tuple``) or the share alone (``bare``); found once, by running
        it on nodes of the engine's (a product or sum, then a unary op's result)."""
        if "_step_shape" not in self.__dict__:
            shape = ["pairs" if len(path_of(self.forms["step"][1], "node") or ()) == 1 else "shares", "tuple"]
            a, b = self.leaf(2.0), self.leaf(3.0)
            for k, made in ((0, lambda: self.probe_op(a, b)), (1, lambda: self.probe_unary(a))):
                probe = made()
                if probe is None:
                    continue
                try:
                    returned = self.run(self.forms["step"], node=probe, grad=like(self.value(probe), 1.0))
                except Exception:  # noqa: BLE001 - an op whose step is not written yet: the form's shape stands
                    continue
                if k == 0:
                    shape[0] = "pairs" if isinstance(returned, CONTAINERS) and returned and all(
                        isinstance(p, tuple) and len(p) == 2 and isinstance(p[0], self.V) for p in returned) \
                        else "shares"
                else:
                    shape[1] = "tuple" if isinstance(returned, (list, tuple)) else "bare"
            self.__dict__["_step_shape"] = tuple(shape)
        return self.__dict__["_step_shape"]
