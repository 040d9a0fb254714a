"""mylib.optim: plain stochastic gradient descent."""


class SGD:
    def __init__(self, params, lr: float = 0.05):
        self.params = list(params)
        self.lr = lr

    def step(self) -> None:
        """Move every parameter against its gradient."""
        for param in self.params:
            param.value = param.value - self.lr * param.grad

    def zero_grad(self) -> None:
        for param in self.params:
            param.grad = 0
