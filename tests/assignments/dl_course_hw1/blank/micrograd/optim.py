"""Homework 1 (part 3): plain stochastic gradient descent."""


class SGD:

    def __init__(self, params, lr=0.01):
        self.params = list(params)
        self.lr = lr

    def step(self):
        # YOUR CODE HERE
        raise NotImplementedError

    def zero_grad(self):
        # YOUR CODE HERE
        raise NotImplementedError
