# Week 4: from scalars to matrices. A Matrix is a list of rows of Values, built from numbers.
import math


class Value:
    def __init__(self, data, children=(), op=""):
        self.data = data
        self.grad = 0.0
        self._backward = lambda: None
        self._prev = set(children)
        self._op = op

    def __repr__(self):
        return f"Value(data={self.data})"

    def __add__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data + other.data, (self, other), "+")

        def _backward():
            self.grad += out.grad
            other.grad += out.grad
        out._backward = _backward
        return out

    def __radd__(self, other):
        return self + other

    def __mul__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data * other.data, (self, other), "*")

        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out._backward = _backward
        return out

    def __rmul__(self, other):
        return self * other

    def exp(self):
        out = Value(math.exp(self.data), (self,), "exp")

        def _backward():
            self.grad += out.data * out.grad
        out._backward = _backward
        return out

    def relu(self):
        out = Value(self.data if self.data > 0 else 0.0, (self,), "relu")

        def _backward():
            self.grad += (1.0 if self.data > 0 else 0.0) * out.grad
        out._backward = _backward
        return out


class Matrix:
    """A 2-d matrix of Values: rows of equal length."""

    def __init__(self, rows):
        self.rows = [[x if isinstance(x, Value) else Value(float(x)) for x in row] for row in rows]

    @property
    def shape(self):
        return len(self.rows), len(self.rows[0])

    def __repr__(self):
        return "Matrix(" + repr([[v.data for v in row] for row in self.rows]) + ")"

    def _each(self, other, f):
        if isinstance(other, Matrix):
            assert self.shape == other.shape, "shapes differ"
            return Matrix([[f(a, b) for a, b in zip(mine, theirs)] for mine, theirs in zip(self.rows, other.rows)])
        return Matrix([[f(a, other) for a in row] for row in self.rows])

    def __add__(self, other):
        return self._each(other, lambda a, b: a + b)

    def __mul__(self, other):
        return self._each(other, lambda a, b: a * b)

    def __rmul__(self, other):
        return self * other

    def __matmul__(self, other):
        columns = list(zip(*other.rows))
        return Matrix([[sum((a * b for a, b in zip(row, column)), Value(0.0)) for column in columns]
                       for row in self.rows])

    def exp(self):
        return Matrix([[v.exp() for v in row] for row in self.rows])

    def relu(self):
        return Matrix([[v.relu() for v in row] for row in self.rows])

    def total(self, axis=None):
        if axis is None:
            return sum((v for row in self.rows for v in row), Value(0.0))
        lines = zip(*self.rows) if axis == 0 else self.rows
        return [sum(line, Value(0.0)) for line in lines]

    def amax(self, axis=None):
        if axis is None:
            return max((v for row in self.rows for v in row), key=lambda v: v.data)
        lines = zip(*self.rows) if axis == 0 else self.rows
        return [max(line, key=lambda v: v.data) for line in lines]

    def argmax(self, axis=None):
        if axis is None:
            flat = [v.data for row in self.rows for v in row]
            return flat.index(max(flat))
        lines = zip(*self.rows) if axis == 0 else self.rows
        return [[v.data for v in line].index(max(v.data for v in line)) for line in lines]

    def view(self, rows, cols):
        flat = [v for row in self.rows for v in row]
        return Matrix([flat[i * cols:(i + 1) * cols] for i in range(rows)])


if __name__ == "__main__":
    w = Matrix([[0.5, -1.0], [2.0, 0.25]])
    x = Matrix([[1.0], [3.0]])
    loss = (w @ x).relu().total()
    print(loss, w.amax(axis=1), w.argmax(axis=0), w.view(1, 4))
