from engine import Value  # noqa: F401  (a student's habit; not needed by train_step)


def train_step(model, xs, ys, lr):
    loss = sum((model(x) - y) ** 2 for x, y in zip(xs, ys))
    for p in model.parameters():
        p.grad = 0
    loss.backward()
    for p in model.parameters():
        p.data -= lr * p.grad
    return loss.data
