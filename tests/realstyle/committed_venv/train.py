from engine import Value
import random


class Neuron:
    def __init__(self, nin):
        self.w = [Value(random.uniform(-1, 1)) for _ in range(nin)]
        self.b = Value(0)

    def __call__(self, x):
        act = sum((wi * xi for wi, xi in zip(self.w, x)), self.b)
        return act.tanh()

    def parameters(self):
        return self.w + [self.b]


def train_step(model, xs, ys, lr):
    ypred = [model(x) for x in xs]
    loss = sum((yout - ygt)**2 for ygt, yout in zip(ys, ypred))
    model.zero_grad()
    loss.backward()
    for p in model.parameters():
        p.data += -lr * p.grad
    return loss.data


if __name__ == "__main__":
    n = Neuron(3)
    print(n([1.0, 2.0, 3.0]))
