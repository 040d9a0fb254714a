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
        # TODO (part 2): compute the output from the input floats; save what backward needs.
        raise NotImplementedError("Mul.forward")

    @staticmethod
    def backward(ctx, d_output):
        # TODO (part 2): d_output times the derivative with respect to each input.
        raise NotImplementedError("Mul.backward")


class Neg(ScalarFunction):
    """f(a) = -a"""

    @staticmethod
    def forward(ctx, a):
        # TODO (part 2): compute the output from the input floats; save what backward needs.
        raise NotImplementedError("Neg.forward")

    @staticmethod
    def backward(ctx, d_output):
        # TODO (part 2): d_output times the derivative with respect to each input.
        raise NotImplementedError("Neg.backward")


class Inv(ScalarFunction):
    """f(a) = 1 / a"""

    @staticmethod
    def forward(ctx, a):
        # TODO (part 2): compute the output from the input floats; save what backward needs.
        raise NotImplementedError("Inv.forward")

    @staticmethod
    def backward(ctx, d_output):
        # TODO (part 2): d_output times the derivative with respect to each input.
        raise NotImplementedError("Inv.backward")


class LT(ScalarFunction):
    """f(a, b) = 1.0 if a < b else 0.0: a step, flat on both sides"""

    @staticmethod
    def forward(ctx, a, b):
        # TODO (part 2): compute the output from the input floats; save what backward needs.
        raise NotImplementedError("LT.forward")

    @staticmethod
    def backward(ctx, d_output):
        # TODO (part 2): d_output times the derivative with respect to each input.
        raise NotImplementedError("LT.backward")


class EQ(ScalarFunction):
    """f(a, b) = 1.0 if a == b else 0.0"""

    @staticmethod
    def forward(ctx, a, b):
        # TODO (part 2): compute the output from the input floats; save what backward needs.
        raise NotImplementedError("EQ.forward")

    @staticmethod
    def backward(ctx, d_output):
        # TODO (part 2): d_output times the derivative with respect to each input.
        raise NotImplementedError("EQ.backward")


class Sigmoid(ScalarFunction):
    """f(a) = 1 / (1 + e^-a)"""

    @staticmethod
    def forward(ctx, a):
        # TODO (part 2): compute the output from the input floats; save what backward needs.
        raise NotImplementedError("Sigmoid.forward")

    @staticmethod
    def backward(ctx, d_output):
        # TODO (part 2): d_output times the derivative with respect to each input.
        raise NotImplementedError("Sigmoid.backward")


class ReLU(ScalarFunction):
    """f(a) = max(0, a)"""

    @staticmethod
    def forward(ctx, a):
        # TODO (part 2): compute the output from the input floats; save what backward needs.
        raise NotImplementedError("ReLU.forward")

    @staticmethod
    def backward(ctx, d_output):
        # TODO (part 2): d_output times the derivative with respect to each input.
        raise NotImplementedError("ReLU.backward")


class Log(ScalarFunction):
    """f(a) = ln(a), for a > 0"""

    @staticmethod
    def forward(ctx, a):
        # TODO (part 2): compute the output from the input floats; save what backward needs.
        raise NotImplementedError("Log.forward")

    @staticmethod
    def backward(ctx, d_output):
        # TODO (part 2): d_output times the derivative with respect to each input.
        raise NotImplementedError("Log.backward")


class Exp(ScalarFunction):
    """f(a) = e^a"""

    @staticmethod
    def forward(ctx, a):
        # TODO (part 2): compute the output from the input floats; save what backward needs.
        raise NotImplementedError("Exp.forward")

    @staticmethod
    def backward(ctx, d_output):
        # TODO (part 2): d_output times the derivative with respect to each input.
        raise NotImplementedError("Exp.backward")
