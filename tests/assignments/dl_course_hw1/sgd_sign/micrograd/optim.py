"""Homework 1 (part 3): plain stochastic gradient descent."""


class SGD:

    def __init__(self, params, lr=0.01):
        self.params = list(params)
        self.lr = lr

    def step(self):
        for p in self.params:
            p.data += self.lr * p.grad

    def zero_grad(self):
        for p in self.params:
            p.grad = 0
