"""mylib.train: the training loop of assignment 1."""


def train(net, opt, inputs, targets, n_epochs=20, verbose=False):
    """Fit `net` one example at a time on the squared error, `n_epochs` passes over the data.

    Returns the loss of every step (before that step's update), in order.
    """
    # TODO: for each epoch, for each example: zero the gradients, forward, loss,
    # backward, update; keep every loss
    pass
