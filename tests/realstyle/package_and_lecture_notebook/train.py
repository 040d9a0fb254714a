"""Training my micrograd MLP on the moons-ish toy data from the README."""
import random

from micrograd.engine import Value
from micrograd.nn import MLP


def train_step(model, xs, ys, lr):
    # forward
    scores = [model(x) for x in xs]
    losses = [(s - y)**2 for s, y in zip(scores, ys)]
    loss = sum(losses, Value(0.0))

    # backward
    model.zero_grad()
    loss.backward()

    # update
    for p in model.parameters():
        p.data -= lr * p.grad
    return loss.data


if __name__ == "__main__":
    random.seed(1337)
    model = MLP(2, [16, 16, 1])
    xs = [[random.uniform(-1, 1), random.uniform(-1, 1)] for _ in range(20)]
    ys = [1.0 if x[0] * x[1] > 0 else -1.0 for x in xs]
    for k in range(100):
        print(k, train_step(model, xs, ys, 0.01))
