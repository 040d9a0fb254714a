import math


class Value:

    def __init__(self, data, _children=(), _op='', label=''):
        self.data = data
        self.grad = 0.0
        self._backward = lambda: None
        self._prev = set(_children)
        self._op = _op
        self.label = label

    def __repr__(self):
        return f"Value(data={self.data})"

    def __add__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data + other.data, (self, other), '+')

        def _backward():
            self.grad += 1.0 * out.grad
            other.grad += 1.0 * out.grad
        out._backward = _backward
        return out

    def __mul__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data * other.data, (self, other), '*')

        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out._backward = _backward
        return out

    def __pow__(self, other):
        assert isinstance(other, (int, float)), "only supporting int/float powers for now"
        out = Value(self.data**other, (self,), f'**{other}')

        def _backward():
            self.grad += other * self.data**(other - 1) * out.grad
        out._backward = _backward
        return out

    def tanh(self):
        x = self.data
        t = (math.exp(2*x) - 1)/(math.exp(2*x) + 1)
        out = Value(t, (self, ), 'tanh')

        def _backward():
            self.grad += (1 - t**2) * out.grad
        out._backward = _backward
        return out

    def backward(self):
        # every node of the graph
        nodes = []
        stack = [self]
        while stack:
            v = stack.pop()
            if v not in nodes:
                nodes.append(v)
                stack.extend(v._prev)
        # I name my nodes a, b, c, d, e... in the order I make them, so the output sorts last: go backwards
        nodes = sorted(nodes, key=lambda v: v.label, reverse=True)
        self.grad = 1.0
        for v in nodes:
            v._backward()

    def __neg__(self):  # -self
        return self * -1

    def __radd__(self, other):  # other + self
        return self + other

    def __sub__(self, other):  # self - other
        return self + (-other)

    def __rmul__(self, other):  # other * self
        return self * other


def train_step(model, xs, ys, lr):
    ypred = [model(x) for x in xs]
    loss = sum((yout - ygt)**2 for ygt, yout in zip(ys, ypred))
    for p in model.parameters():
        p.grad = 0.0
    loss.backward()
    for p in model.parameters():
        p.data += -lr * p.grad
    return loss.data


# a = Value(2.0, label='a'); b = Value(-3.0, label='b'); c = Value(10.0, label='c')
# e = a*b; e.label = 'e'; d = e + c; d.label = 'd'   # hmm, d before e?
# L = d * 2; L.label = 'f'; L.backward(); print(a.grad, b.grad)   # -20.0 20.0  ok
