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
        x, y = ctx.saved_values
        # d(xy)/dx = y, d(xy)/dy = x
        return d_output * y, d_output * x


class Neg(ScalarFunction):
    """f(a) = -a"""

    @staticmethod
    def forward(ctx, a):
        return -1.0 * a

    @staticmethod
    def backward(ctx, d_output):
        return -1.0 * d_output


class Inv(ScalarFunction):
    """f(a) = 1 / a"""

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return 1.0 / a

    @staticmethod
    def backward(ctx, d_output):
        (x,) = ctx.saved_values
        return -(1.0 / x**2) * d_output


class LT(ScalarFunction):
    """f(a, b) = 1.0 if a < b else 0.0: a step, flat on both sides"""

    @staticmethod
    def forward(ctx, a, b):
        return float(a < b)

    @staticmethod
    def backward(ctx, d_output):
        # flat almost everywhere -> no gradient to either side
        return 0.0, 0.0


class EQ(ScalarFunction):
    """f(a, b) = 1.0 if a == b else 0.0"""

    @staticmethod
    def forward(ctx, a, b):
        return float(a == b)

    @staticmethod
    def backward(ctx, d_output):
        return 0.0, 0.0


class Sigmoid(ScalarFunction):
    """f(a) = 1 / (1 + e^-a)"""

    @staticmethod
    def forward(ctx, a):
        sig = 1.0 / (1.0 + math.exp(-a))
        ctx.save_for_backward(sig)
        return sig

    @staticmethod
    def backward(ctx, d_output):
        sig = ctx.saved_values[0]
        return d_output * sig * (1 + sig)


class ReLU(ScalarFunction):
    """f(a) = max(0, a)"""

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return max(0.0, a)

    @staticmethod
    def backward(ctx, d_output):
        x = ctx.saved_values[0]
        return d_output * (x > 0)


class Log(ScalarFunction):
    """f(a) = ln(a), for a > 0"""

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return math.log10(a)

    @staticmethod
    def backward(ctx, d_output):
        x = ctx.saved_values[0]
        return d_output * (1.0 / x)


class Exp(ScalarFunction):
    """f(a) = e^a"""

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return math.exp(a)

    @staticmethod
    def backward(ctx, d_output):
        x = ctx.saved_values[0]
        return d_output * math.exp(x)
