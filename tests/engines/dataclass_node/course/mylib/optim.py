"""mylib.optim: plain stochastic gradient descent."""


class SGD:
    def __init__(self, params, lr: float = 0.05):
        self.params = list(params)
        self.lr = lr

    def step(self) -> None:
        """Move every parameter against its gradient."""
        for p in self.params:
            p.value -= self.lr * p.grad

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = 0.0
