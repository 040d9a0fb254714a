"""Homework 3, part 3: a gradient by hand.

    f(x, y, z) = x * y**2 + exp(x * z) - log(y)

Write grad_f(x, y, z) returning [df/dx, df/dy, df/dz] as plain floats, derived
on paper (do not call the engine). At (1, 2, 0.5) the answer is about
[4.8244, 3.5, 1.6487]: check yours against autodiff.grad.
"""
import math


def grad_f(x, y, z):
    e = math.exp(x * z)
    return [y**2 + z * e, 2 * x * y - 1 / y, x * e]
