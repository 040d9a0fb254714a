"""Build micrograd yourself: a scalar that knows its own gradient.

Fill in the methods that raise NotImplementedError:
``__add__``, ``__mul__``, ``__pow__``, ``tanh``, ``backward``.
Everything else is given and is written in terms of those, so ``2 * a``,
``a - 1`` and ``a / b`` start working as soon as the methods they use do.

Check your work at any time with:  micrograde grade engine.py
"""

import math


class Value:
    """A scalar that remembers how it was computed, so it can be differentiated."""

    def __init__(self, data, _children=(), _op="", label=""):
        self.data = data
        self.grad = 0.0  # d(output)/d(self), filled in by backward()
        self._backward = lambda: None  # pushes self.grad on to the operands
        self._prev = set(_children)  # the Values this one was computed from
        self._op = _op
        self.label = label

    def __repr__(self):
        return f"Value(data={self.data}, grad={self.grad})"

    def __add__(self, other):
        """Return a new Value for ``self + other``.

        ``other`` may be a plain number: wrap it in a Value first.
        The result must remember its operands (pass them as ``_children``) and
        get a ``_backward`` that passes the result's gradient to each operand.
        Local derivative: d(a + b)/da = 1 and d(a + b)/db = 1.
        Chain rule: an operand's gradient grows by (local derivative) * out.grad.
        Use ``+=``, never ``=``: one Value can feed several results (think of
        ``a + a``), and each of them adds its own share.
        """
        raise NotImplementedError("__add__")

    def __mul__(self, other):
        """Return a new Value for ``self * other``.

        ``other`` may be a plain number, as in ``__add__``.
        Local derivative: d(a * b)/da = b and d(a * b)/db = a.
        Multiply by out.grad and accumulate with ``+=``.
        """
        raise NotImplementedError("__mul__")

    def __pow__(self, other):
        """Return a new Value for ``self ** other``, where ``other`` is a plain int or float.

        Local derivative (power rule): d(x ** n)/dx = n * x ** (n - 1).
        The exponent is a constant, so only ``self`` receives a gradient.
        """
        raise NotImplementedError("__pow__")

    def tanh(self):
        """Return a new Value for the hyperbolic tangent of ``self``.

        ``math.tanh`` computes it. If t = tanh(x), then d(t)/dx = 1 - t ** 2.
        """
        raise NotImplementedError("tanh")

    def backward(self):
        """Fill in ``.grad`` of every Value this one was computed from.

        1. Order the graph topologically: visit each node once, and list it
           only after every node in its ``_prev`` is listed.
        2. The gradient of a value with respect to itself is 1.
        3. Call ``_backward`` of every node, from this one back to the inputs
           (the reverse of step 1's list), so that each node has received all of
           its gradient before it passes it on.
        Do not reset any ``.grad`` here: resetting is the training loop's job.
        """
        raise NotImplementedError("backward")

    # Given: these use the five methods above.
    def __neg__(self):  # -self
        return self * -1

    def __radd__(self, other):  # other + self
        return self + other

    def __sub__(self, other):  # self - other
        return self + (-other)

    def __rsub__(self, other):  # other - self
        return other + (-self)

    def __rmul__(self, other):  # other * self
        return self * other

    def __truediv__(self, other):  # self / other
        return self * other**-1

    def __rtruediv__(self, other):  # other / self
        return other * self**-1
