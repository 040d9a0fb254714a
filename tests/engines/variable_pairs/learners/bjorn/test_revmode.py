"""Sanity checks for Lab 4 (given). These are not the grading tests."""
import math

from revmode import Variable


def numeric(f, x, h=1e-6):
    return (f(x + h) - f(x - h)) / (2 * h)


def test_product_rule():
    x, y = Variable(3.0), Variable(-2.0)
    z = x * y + x
    z.backward()
    assert math.isclose(x.d, -1.0) and math.isclose(y.d, 3.0)


def test_trig():
    x = Variable(0.4)
    z = x.sin() * x.cos()
    z.backward()
    assert math.isclose(x.d, numeric(lambda t: math.sin(t) * math.cos(t), 0.4), rel_tol=1e-6)


def test_power_and_exp():
    x = Variable(1.3)
    z = (x ** 3 - 2 * x).exp()
    z.backward()
    assert math.isclose(x.d, numeric(lambda t: math.exp(t ** 3 - 2 * t), 1.3), rel_tol=1e-6)
