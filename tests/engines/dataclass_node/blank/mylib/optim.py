"""mylib.optim: plain stochastic gradient descent."""


class SGD:
    def __init__(self, params, lr: float = 0.05):
        self.params = list(params)
        self.lr = lr

    def step(self) -> None:
        """Move every parameter against its gradient."""
        # TODO
        pass

    def zero_grad(self) -> None:
        # TODO
        pass
