from micrograd.nn import MLP  # noqa: F401


def train_step(model, xs, ys, lr):
    ypred = [model(x) for x in xs]
    loss = sum((yp - y) ** 2 for yp, y in zip(ypred, ys))
    model.zero_grad()
    loss.backward()
    for p in model.parameters():
        p.data -= lr * p.grad
    return loss.data
