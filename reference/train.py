"""The reference training step: what ``exercises/train.py`` asks for."""


def train_step(model, xs, ys, lr):
    """One step of gradient descent on the summed squared error; returns the loss before the update."""
    loss = sum((model(x) - y) ** 2 for x, y in zip(xs, ys))
    model.zero_grad()
    loss.backward()
    for p in model.parameters():
        p.data -= lr * p.grad
    return loss.data
