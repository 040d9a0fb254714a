"""mylib.train: the training loop of assignment 1."""


def train(net, opt, inputs, targets, n_epochs=20, verbose=False):
    """Fit `net` one example at a time on the squared error, `n_epochs` passes over the data.

    Returns the loss of every step (before that step's update), in order.
    """
    losses = []
    for epoch in range(n_epochs):
        for x, y in zip(inputs, targets):
            opt.zero_grad()
            loss = (net(x) - y) ** 2
            loss.backward()
            opt.step()
            losses.append(loss.value)
        if verbose:
            print(f"epoch {epoch}: last loss {losses[-1]:.4f}")
    return losses
