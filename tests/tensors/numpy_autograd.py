"""Assignment 2: micrograd, but every node is a whole numpy array.

Each op returns a new Tensor that remembers its parents and how to pass the gradient back to them.
"""
import numpy as np


def unbroadcast(grad, shape):
    """Sum a gradient back down to `shape` (numpy broadcast the operand up to the result's shape)."""
    while grad.ndim > len(shape):
        grad = grad.sum(axis=0)
    for axis, size in enumerate(shape):
        if size == 1 and grad.shape[axis] != 1:
            grad = grad.sum(axis=axis, keepdims=True)
    return grad


class Tensor:
    def __init__(self, data, _parents=(), _op=""):
        self.data = np.array(data, dtype=float)
        self.grad = np.zeros_like(self.data)
        self._backward = lambda: None
        self._parents = _parents
        self._op = _op

    def __repr__(self):
        return f"Tensor({self.data}, grad={self.grad})"

    def __add__(self, other):
        other = other if isinstance(other, Tensor) else Tensor(other)
        out = Tensor(self.data + other.data, (self, other), "+")

        def _backward():
            self.grad += unbroadcast(out.grad, self.data.shape)
            other.grad += unbroadcast(out.grad, other.data.shape)
        out._backward = _backward
        return out

    def __radd__(self, other):
        return self + other

    def __mul__(self, other):
        other = other if isinstance(other, Tensor) else Tensor(other)
        out = Tensor(self.data * other.data, (self, other), "*")

        def _backward():
            self.grad += unbroadcast(other.data * out.grad, self.data.shape)
            other.grad += unbroadcast(self.data * out.grad, other.data.shape)
        out._backward = _backward
        return out

    def __rmul__(self, other):
        return self * other

    def __matmul__(self, other):
        out = Tensor(self.data @ other.data, (self, other), "@")

        def _backward():
            self.grad += out.grad @ other.data.T
            other.grad += self.data.T @ out.grad
        out._backward = _backward
        return out

    def relu(self):
        out = Tensor(np.maximum(self.data, 0), (self,), "relu")

        def _backward():
            self.grad += (self.data > 0) * out.grad
        out._backward = _backward
        return out

    def sum(self, axis=None):
        out = Tensor(self.data.sum(axis=axis), (self,), "sum")

        def _backward():
            grad = out.grad if axis is None else np.expand_dims(out.grad, axis)
            self.grad += np.broadcast_to(grad, self.data.shape)
        out._backward = _backward
        return out

    def max(self, axis=None):
        out = Tensor(self.data.max(axis=axis), (self,), "max")

        def _backward():
            top = self.data.max(axis=axis, keepdims=True)
            grad = out.grad if axis is None else np.expand_dims(out.grad, axis)
            self.grad += (self.data == top) * grad
        out._backward = _backward
        return out

    def argmax(self, axis=None):
        return self.data.argmax(axis=axis)

    def reshape(self, *shape):
        out = Tensor(self.data.reshape(shape), (self,), "reshape")

        def _backward():
            self.grad += out.grad.reshape(self.data.shape)
        out._backward = _backward
        return out

    def backward(self):
        order, seen = [], set()

        def visit(t):
            if id(t) not in seen:
                seen.add(id(t))
                for parent in t._parents:
                    visit(parent)
                order.append(t)
        visit(self)
        self.grad = np.ones_like(self.data)
        for t in reversed(order):
            t._backward()


if __name__ == "__main__":
    W = Tensor(np.random.randn(3, 2))
    x = Tensor([[1.0, 2.0, 3.0]])
    b = Tensor([0.5, -0.5])
    loss = (x @ W + b).relu().sum()
    loss.backward()
    print(loss.data, W.grad.shape, b.grad)
