"""The engine a student's ``train_step`` is graded on, shipped as source to that child only.

``train_step`` is about the training loop (zero the gradients, backpropagate,
update), so it runs on a model the grader provides: the reference ``nn.py``
MLP, built on this engine instead of the reference one.
It is not the reference engine (which never enters a child): each node stores
the numbers ``d node / d operand`` when it is computed, and ``backward`` is a
loop over them. It exists only in the process that grades training code and
modules (``train_step``, an optimizer, a ``Neuron``), where no op is graded, so it
can compute nothing the student is graded on: a module is run on it beside the
student's own ``Value`` only to tell a bug of the module from one of the ops it uses.
This file imports nothing from micrograde and runs inside the child.
"""

import math


class Value:
    """A scalar with the API a training loop uses: data, grad, the operators, backward, zero_grad."""

    def __init__(self, data, _parents=()):
        self.data = data
        self.grad = 0.0
        self._parents = _parents  # (operand, d self / d operand) pairs

    def __repr__(self):
        return f"Value(data={self.data}, grad={self.grad})"

    @staticmethod
    def _lift(x):
        return x if isinstance(x, Value) else Value(x)

    def __add__(self, other):
        other = self._lift(other)
        return Value(self.data + other.data, ((self, 1.0), (other, 1.0)))

    def __mul__(self, other):
        other = self._lift(other)
        return Value(self.data * other.data, ((self, other.data), (other, self.data)))

    def __pow__(self, k):
        return Value(self.data**k, ((self, k * self.data ** (k - 1)),))

    def tanh(self):
        t = math.tanh(self.data)
        return Value(t, ((self, 1.0 - t * t),))

    def relu(self):
        return Value(max(self.data, 0.0), ((self, 1.0 if self.data > 0 else 0.0),))

    def exp(self):
        e = math.exp(self.data)
        return Value(e, ((self, e),))

    def log(self):
        return Value(math.log(self.data), ((self, 1.0 / self.data),))

    def sigmoid(self):
        s = 1.0 / (1.0 + math.exp(-self.data))
        return Value(s, ((self, s * (1.0 - s)),))

    def __neg__(self):
        return self * -1

    def __radd__(self, other):
        return self + other

    def __sub__(self, other):
        return self + (-other)

    def __rsub__(self, other):
        return other + (-self)

    def __rmul__(self, other):
        return self * other

    def __truediv__(self, other):
        return self * other**-1

    def __rtruediv__(self, other):
        return other * self**-1

    def backward(self):
        # Values hash by identity; ``id`` would raise an audit event, and the child's audit hook run, per node.
        order, seen = [], set()
        stack = [(self, False)]
        while stack:
            node, done = stack.pop()
            if done:
                order.append(node)
            elif node not in seen:
                seen.add(node)
                stack.append((node, True))
                stack += [(parent, False) for parent, _ in node._parents]  # a list: no generator per node
        self.grad = 1.0
        for node in reversed(order):
            for parent, local in node._parents:
                parent.grad += local * node.grad
