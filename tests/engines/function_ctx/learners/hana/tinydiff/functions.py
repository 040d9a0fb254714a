"""The Functions of tinydiff. Part 2 of the handout: write `forward` and `backward` of each.

forward(ctx, *inputs) gets plain floats and returns a float; save what backward needs with
ctx.save_for_backward. backward(ctx, d_output) returns d_output times the derivative of the
output with respect to each input: one float, or a tuple of one per input.
"""
import math

from .scalar import ScalarFunction


class Add(ScalarFunction):
    """f(a, b) = a + b  (worked example)"""

    @staticmethod
    def forward(ctx, a, b):
        return a + b

    @staticmethod
    def backward(ctx, d_output):
        return d_output, d_output


class Mul(ScalarFunction):
    """f(a, b) = a * b"""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, d_output):
        left, right = ctx.saved_values
        grad_left = right * d_output
        grad_right = left * d_output
        return grad_left, grad_right


class Neg(ScalarFunction):
    """f(a) = -a"""

    @staticmethod
    def forward(ctx, a):
        return -a

    @staticmethod
    def backward(ctx, d_output):
        return -d_output


class Inv(ScalarFunction):
    """f(a) = 1 / a"""

    @staticmethod
    def forward(ctx, a):
        inv = 1.0 / a
        ctx.save_for_backward(inv)
        return inv

    @staticmethod
    def backward(ctx, d_output):
        # d(1/a)/da = -1/a^2 = -(1/a)^2
        (inv,) = ctx.saved_values
        return -inv * inv * d_output


class LT(ScalarFunction):
    """f(a, b) = 1.0 if a < b else 0.0: a step, flat on both sides"""

    @staticmethod
    def forward(ctx, a, b):
        if a < b:
            return 1.0
        return 0.0

    @staticmethod
    def backward(ctx, d_output):
        return 0.0, 0.0


class EQ(ScalarFunction):
    """f(a, b) = 1.0 if a == b else 0.0"""

    @staticmethod
    def forward(ctx, a, b):
        if a == b:
            return 1.0
        return 0.0

    @staticmethod
    def backward(ctx, d_output):
        return 0.0, 0.0


def _sig(x):
    # tanh form: never overflows
    return 0.5 * (1.0 + math.tanh(0.5 * x))


class Sigmoid(ScalarFunction):
    """f(a) = 1 / (1 + e^-a)"""

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return _sig(a)

    @staticmethod
    def backward(ctx, d_output):
        (a,) = ctx.saved_values
        s = _sig(a)
        return d_output * s * (1.0 - s)


class ReLU(ScalarFunction):
    """f(a) = max(0, a)"""

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        if a > 0:
            return a
        return 0.0

    @staticmethod
    def backward(ctx, d_output):
        (a,) = ctx.saved_values
        if a > 0:
            return d_output
        return 0.0


class Log(ScalarFunction):
    """f(a) = ln(a), for a > 0"""

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return math.log(a)

    @staticmethod
    def backward(ctx, d_output):
        (a,) = ctx.saved_values
        return d_output / a


class Exp(ScalarFunction):
    """f(a) = e^a"""

    @staticmethod
    def forward(ctx, a):
        e = math.exp(a)
        ctx.save_for_backward(e)
        return e

    @staticmethod
    def backward(ctx, d_output):
        (e,) = ctx.saved_values
        return e * d_output
