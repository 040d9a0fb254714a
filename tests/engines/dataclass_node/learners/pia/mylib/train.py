"""mylib.train: the training loop of assignment 1."""


def train(net, opt, inputs, targets, n_epochs=20, verbose=False):
    """Fit `net` one example at a time on the squared error, `n_epochs` passes over the data.

    Returns the loss of every step (before that step's update), in order.
    """
    losses = []
    for _ in range(n_epochs):
        for x, y in zip(inputs, targets):
            out = net(x)
            loss = (out - y) ** 2
            losses.append(loss.value)
            loss.backward()
            opt.step()
    return losses


if __name__ == "__main__":
    import random

    from mylib.nn import MLP
    from mylib.optim import SGD

    random.seed(0)
    net = MLP(3, [4, 4, 1])
    xs = [[2.0, 3.0, -1.0], [3.0, -1.0, 0.5], [0.5, 1.0, 1.0], [1.0, 1.0, -1.0]]
    ys = [1.0, -1.0, -1.0, 1.0]
    hist = train(net, SGD(net.parameters(), lr=0.1), xs, ys, n_epochs=50)
    print(hist[0], hist[-1])
