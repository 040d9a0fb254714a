"""One step of training a neural network with your engine.

Check your work at any time with:  micrograde grade train.py
(or grade the whole folder:  micrograde grade .)
"""


def train_step(model, xs, ys, lr):
    """Do one step of gradient descent and return the loss *before* the update.

    ``model(x)`` gives the prediction (a Value) for one input ``x``;
    ``model.parameters()`` lists the Values to train; ``model.zero_grad()``
    sets all their gradients to 0.

    1. The loss is the sum over the examples of (prediction - target) ** 2.
    2. Gradients accumulate with ``+=``, so last step's gradients must be
       cleared before this step's backward pass adds new ones.
    3. Backpropagate from the loss.
    4. Move every parameter a step of size ``lr`` *against* its gradient:
       that is the direction in which the loss goes down.
    """
    raise NotImplementedError("train_step")
