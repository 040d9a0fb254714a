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
        a, b = ctx.saved_values
        return b * d_output, a * d_output


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
        ctx.save_for_backward(a)
        return 1.0 / a

    @staticmethod
    def backward(ctx, d_output):
        (a,) = ctx.saved_values
        return -d_output / (a * a)


class LT(ScalarFunction):
    """f(a, b) = 1.0 if a < b else 0.0: a step, flat on both sides"""

    @staticmethod
    def forward(ctx, a, b):
        return 1.0 if a < b else 0.0

    @staticmethod
    def backward(ctx, d_output):
        return 0.0, 0.0


class EQ(ScalarFunction):
    """f(a, b) = 1.0 if a == b else 0.0"""

    @staticmethod
    def forward(ctx, a, b):
        return 1.0 if a == b else 0.0

    @staticmethod
    def backward(ctx, d_output):
        return 0.0, 0.0


class Sigmoid(ScalarFunction):
    """f(a) = 1 / (1 + e^-a)"""

    @staticmethod
    def forward(ctx, a):
        if a >= 0:
            s = 1.0 / (1.0 + math.exp(-a))
        else:
            s = math.exp(a) / (1.0 + math.exp(a))
        ctx.save_for_backward(s)
        return s

    @staticmethod
    def backward(ctx, d_output):
        (s,) = ctx.saved_values
        return s * (1.0 - s) * d_output


class ReLU(ScalarFunction):
    """f(a) = max(0, a)"""

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a if a > 0 else 0.0

    @staticmethod
    def backward(ctx, d_output):
        (a,) = ctx.saved_values
        return d_output if a > 0 else 0.0


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
        out = math.exp(a)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, d_output):
        (out,) = ctx.saved_values
        return out * d_output
