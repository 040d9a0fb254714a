"""mylib.train: the training loop of assignment 1."""


def train(net, opt, inputs, targets, n_epochs=20, verbose=False):
    """Fit `net` one example at a time on the squared error, `n_epochs` passes over the data.

    Returns the loss of every step (before that step's update), in order.
    """
    all_losses = []
    for epoch in range(n_epochs):
        for i in range(len(inputs)):
            pred = net(inputs[i])
            err = pred - targets[i]
            loss = err * err
            opt.zero_grad()
            loss.backward()
            opt.step()
            all_losses.append(loss.value)
        print("epoch", epoch, "loss", sum(all_losses[-len(inputs):]))
    return all_losses
