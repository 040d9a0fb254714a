# my engine for the autograd homework. integer powers are repeated products (no pow rule to get wrong!),
# tanh is 1 - 2/(e^2x + 1)
import math


class Value:
    def __init__(self, data, children=(), op=""):
        self.data = float(data)
        self.grad = 0.0
        self._prev = set(children)
        self._op = op
        self._backward = lambda: None

    def __repr__(self):
        return f"Value({self.data:.4g})"

    def _wrap(x):
        return x if isinstance(x, Value) else Value(x)

    def __add__(self, other):
        other = Value._wrap(other)
        out = Value(self.data + other.data, (self, other), "+")

        def _backward():
            self.grad += out.grad
            other.grad += out.grad

        out._backward = _backward
        return out

    __radd__ = __add__

    def __mul__(self, other):
        other = Value._wrap(other)
        out = Value(self.data * other.data, (self, other), "*")

        def _backward():
            self.grad = other.data * out.grad
            other.grad = self.data * out.grad

        out._backward = _backward
        return out

    __rmul__ = __mul__

    def __pow__(self, n):
        if isinstance(n, int) and n >= 1:
            out = self
            for _ in range(n - 1):
                out = out * self
            return out
        out = Value(self.data ** n, (self,), f"**{n}")

        def _backward():
            self.grad += n * self.data ** (n - 1) * out.grad

        out._backward = _backward
        return out

    def exp(self):
        out = Value(math.exp(self.data), (self,), "exp")

        def _backward():
            self.grad += out.data * out.grad

        out._backward = _backward
        return out

    def __truediv__(self, other):
        return self * Value._wrap(other) ** -1

    def __rtruediv__(self, other):
        return Value._wrap(other) * self ** -1

    def __neg__(self):
        return self * -1

    def __sub__(self, other):
        return self + (-Value._wrap(other))

    def __rsub__(self, other):
        return Value._wrap(other) + (-self)

    def tanh(self):
        return 1 - 2 / ((2 * self).exp() + 1)

    def backward(self):
        order, seen = [], set()

        def visit(v):
            if v not in seen:
                seen.add(v)
                for c in v._prev:
                    visit(c)
                order.append(v)

        visit(self)
        self.grad = 1.0
        for v in reversed(order):
            v._backward()


def train_step(model, xs, ys, lr):
    ypred = [model(x) for x in xs]
    loss = sum((yp - y) ** 2 for y, yp in zip(ys, ypred))
    model.zero_grad()
    loss.backward()
    for p in model.parameters():
        p.data -= lr * p.grad
    return loss.data
