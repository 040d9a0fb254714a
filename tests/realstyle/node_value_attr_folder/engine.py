import math
import random


class Node:
    """One number in the computation graph."""

    def __init__(self, value, parents=(), op=None):
        self.value = value
        self.gradient = 0.0
        self.parents = list(parents)
        self.op = op
        self.backprop = lambda: None

    def __repr__(self):
        return f"Node({self.value}, gradient={self.gradient})"

    def __add__(self, other):
        other = other if isinstance(other, Node) else Node(other)
        result = Node(self.value + other.value, [self, other], 'add')
        def backprop():
            self.gradient += result.gradient
            other.gradient += result.gradient
        result.backprop = backprop
        return result

    def __mul__(self, other):
        other = other if isinstance(other, Node) else Node(other)
        result = Node(self.value * other.value, [self, other], 'mul')
        def backprop():
            self.gradient += other.value * result.gradient
            other.gradient += self.value * result.gradient
        result.backprop = backprop
        return result

    def __pow__(self, n):
        result = Node(self.value ** n, [self], 'pow')
        def backprop():
            self.gradient += n * self.value ** (n - 1) * result.gradient
        result.backprop = backprop
        return result

    def tanh(self):
        t = math.tanh(self.value)
        result = Node(t, [self], 'tanh')
        def backprop():
            self.gradient += (1 - t * t) * result.gradient
        result.backprop = backprop
        return result

    __radd__ = __add__
    __rmul__ = __mul__

    def __neg__(self):
        return self * -1

    def __sub__(self, other):
        return self + (-other)

    def __rsub__(self, other):
        return -self + other

    def __truediv__(self, other):
        return self * other ** -1

    def backward(self):
        ordered, visited = [], set()
        def topo(node):
            if id(node) in visited:
                return
            visited.add(id(node))
            for p in node.parents:
                topo(p)
            ordered.append(node)
        topo(self)
        self.gradient = 1.0
        for node in reversed(ordered):
            node.backprop()
