# Correct, written differently: Kahn's algorithm over in-degrees, list _prev, pow
# derivative from the output value, tanh from exp(-2x), returns the loss Value.
import math


class Value:
    def __init__(self, data, children=(), op=""):
        self.data = float(data)
        self.grad = 0
        self._backward = lambda: None
        self._prev = list(children)
        self._op = op

    @staticmethod
    def lift(x):
        return x if isinstance(x, Value) else Value(x)

    def __add__(self, other):
        other = Value.lift(other)
        out = Value(self.data + other.data, [self, other], "+")

        def _backward():
            for operand in (self, other):
                operand.grad = operand.grad + out.grad

        out._backward = _backward
        return out

    def __radd__(self, other):
        return Value.lift(other) + self

    def __mul__(self, other):
        other = Value.lift(other)
        out = Value(self.data * other.data, [self, other], "*")

        def _backward():
            a, b = self.data, other.data
            self.grad = self.grad + b * out.grad
            other.grad = other.grad + a * out.grad

        out._backward = _backward
        return out

    def __rmul__(self, other):
        return Value.lift(other) * self

    def __sub__(self, other):
        return self + (-1) * Value.lift(other)

    def __pow__(self, n):
        out = Value(self.data**n, [self], "pow")

        def _backward():
            self.grad += n * (out.data / self.data) * out.grad

        out._backward = _backward
        return out

    def tanh(self):
        e = math.exp(-2 * self.data)
        t = (1 - e) / (1 + e) if self.data >= 0 else -((1 - math.exp(2 * self.data)) / (1 + math.exp(2 * self.data)))
        out = Value(t, [self], "tanh")

        def _backward():
            self.grad += (1 - t * t) * out.grad

        out._backward = _backward
        return out

    def backward(self):
        users = {}
        stack, seen = [self], {id(self)}
        nodes = []
        while stack:
            v = stack.pop()
            nodes.append(v)
            for child in v._prev:
                users[id(child)] = users.get(id(child), 0) + 1
                if id(child) not in seen:
                    seen.add(id(child))
                    stack.append(child)
        self.grad = 1
        ready = [self]
        while ready:
            v = ready.pop()
            v._backward()
            for child in v._prev:
                users[id(child)] -= 1
                if users[id(child)] == 0:
                    ready.append(child)


def train_step(model, xs, ys, lr):
    for p in model.parameters():
        p.grad = 0.0
    total = Value(0.0)
    for x, y in zip(xs, ys):
        diff = model(x) - y
        total = total + diff * diff
    total.backward()
    for p in model.parameters():
        p.data = p.data - lr * p.grad
    return total
