"""The Scalar of tinydiff and the base class of its Functions (given: read it, do not change it)."""
from .autodiff import Context, History, backpropagate

_next_id = 0


def _new_id():
    global _next_id
    _next_id += 1
    return _next_id


class ScalarFunction:
    """An operation on Scalars. Subclasses write `forward(ctx, *floats)` and `backward(ctx, d_out)`."""

    @classmethod
    def _backward(cls, ctx, d_out):
        derivs = cls.backward(ctx, d_out)
        return tuple(derivs) if isinstance(derivs, tuple) else (derivs,)

    @classmethod
    def apply(cls, *vals):
        scalars = [v if isinstance(v, Scalar) else Scalar(float(v), history=None) for v in vals]
        need_grad = any(not s.is_constant() for s in scalars)
        ctx = Context(no_grad=not need_grad)
        result = cls.forward(ctx, *[s.data for s in scalars])
        history = History(cls, ctx, tuple(scalars)) if need_grad else None
        return Scalar(float(result), history=history)


class Scalar:
    """A number that remembers how it was computed.

    `derivative` is filled in on leaves only, by `backpropagate`.
    """

    def __init__(self, v, history=History(), name=None):
        self.data = float(v)
        self.history = history
        self.derivative = None
        self.unique_id = _new_id()
        self.name = name or f"x{self.unique_id}"

    def __repr__(self):
        return f"Scalar({self.data})"

    def __hash__(self):
        return hash(self.unique_id)

    # -- the graph -----------------------------------------------------------------------------
    def is_leaf(self):
        return self.history is not None and self.history.last_fn is None

    def is_constant(self):
        return self.history is None

    @property
    def parents(self):
        return () if self.history is None else self.history.inputs

    def accumulate_derivative(self, d):
        assert self.is_leaf(), "only leaves keep a derivative"
        self.derivative = d if self.derivative is None else self.derivative + d

    def chain_rule(self, d_output):
        """Pairs (input, d_output * d self / d input), one per input of the Function that made self."""
        h = self.history
        return list(zip(h.inputs, h.last_fn._backward(h.ctx, d_output)))

    def backward(self, d_output=1.0):
        backpropagate(self, d_output)

    # -- operators -----------------------------------------------------------------------------
    def __add__(self, b):
        return functions.Add.apply(self, b)

    def __radd__(self, b):
        return functions.Add.apply(b, self)

    def __mul__(self, b):
        return functions.Mul.apply(self, b)

    def __rmul__(self, b):
        return functions.Mul.apply(b, self)

    def __neg__(self):
        return functions.Neg.apply(self)

    def __sub__(self, b):
        return functions.Add.apply(self, functions.Neg.apply(b))

    def __rsub__(self, b):
        return functions.Add.apply(b, functions.Neg.apply(self))

    def __truediv__(self, b):
        return functions.Mul.apply(self, functions.Inv.apply(b))

    def __rtruediv__(self, b):
        return functions.Mul.apply(b, functions.Inv.apply(self))

    def __lt__(self, b):
        return functions.LT.apply(self, b)

    def __gt__(self, b):
        return functions.LT.apply(b, self)

    def __eq__(self, b):
        return functions.EQ.apply(self, b)

    def sigmoid(self):
        return functions.Sigmoid.apply(self)

    def relu(self):
        return functions.ReLU.apply(self)

    def log(self):
        return functions.Log.apply(self)

    def exp(self):
        return functions.Exp.apply(self)


from . import functions  # noqa: E402  (functions.py needs ScalarFunction, defined above)
