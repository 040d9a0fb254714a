# micrograd from scratch, part 2: modules with forward(), torch-style
import math, random


class Value:
    def __init__(self, data, children=(), op=''):
        self.data, self.grad = data, 0
        self._backward = lambda: None
        self._prev, self._op = set(children), op

    def __add__(self, o):
        o = o if isinstance(o, Value) else Value(o)
        out = Value(self.data + o.data, (self, o), '+')
        def back():
            self.grad += out.grad
            o.grad += out.grad
        out._backward = back
        return out

    def __mul__(self, o):
        o = o if isinstance(o, Value) else Value(o)
        out = Value(self.data * o.data, (self, o), '*')
        def back():
            self.grad += o.data * out.grad
            o.grad += self.data * out.grad
        out._backward = back
        return out

    __radd__ = __add__
    __rmul__ = __mul__

    def relu(self):
        out = Value(self.data if self.data > 0 else 0, (self,), 'relu')
        def back():
            self.grad += (self.data > 0) * out.grad
        out._backward = back
        return out

    def backward(self):
        topo, seen = [], set()
        stack = [(self, False)]
        while stack:
            v, done = stack.pop()
            if done:
                topo.append(v)
            elif v not in seen:
                seen.add(v)
                stack.append((v, True))
                stack.extend((c, False) for c in v._prev)
        self.grad = 1
        for v in topo[::-1]:
            v._backward()


class Module:
    def __call__(self, *args):
        return self.forward(*args)

    def zero_grad(self):
        for p in self.parameters():
            p.grad = 0

    def parameters(self):
        return []


class Neuron(Module):
    def __init__(self, n_inputs, nonlin=True):
        self.b = Value(0)
        self.w = [Value(random.gauss(0, 1)) for _ in range(n_inputs)]
        self.nonlin = nonlin

    def forward(self, x):
        z = self.b + sum(w * xi for w, xi in zip(self.w, x))
        return z.relu() if self.nonlin else z

    def parameters(self):
        return [self.b] + self.w          # bias first, I find it easier to read


class Layer(Module):
    def __init__(self, n_inputs, n_outputs, **kw):
        self.neurons = [Neuron(n_inputs, **kw) for _ in range(n_outputs)]

    def forward(self, x):
        y = [n(x) for n in self.neurons]
        return y if len(y) > 1 else y[0]

    def parameters(self):
        return [p for n in reversed(self.neurons) for p in n.parameters()]


class MLP(Module):
    def __init__(self, n_inputs, sizes):
        dims = [n_inputs] + list(sizes)
        self.layers = [Layer(dims[i], dims[i + 1], nonlin=(i != len(sizes) - 1)) for i in range(len(sizes))]

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x

    def parameters(self):
        return sum((layer.parameters() for layer in self.layers), [])
