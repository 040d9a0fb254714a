# var.py -- autodiff with free functions (ML systems, week 2)
#
#     x = Var(2.0)
#     y = tanh(add(mul(x, x), 1.0))
#     backward(y)
#     print(x.grad)
#
# Ops are plain functions, not methods. Each returns a new Var that remembers its
# inputs and a `_pullback` closure: called once the Var's own .grad is final, it adds
# the Var's share into the .grad of every input that requires one.
# Var(x, requires_grad=False) is a constant: it never gets a gradient (its .grad is None).
import math


class Var:
    def __init__(self, x, requires_grad=True):
        self.val = float(x)
        self.requires_grad = requires_grad
        self.grad = 0.0 if requires_grad else None
        self.inputs = ()
        self._pullback = None

    def __repr__(self):
        return f"Var({self.val:.5g}, grad={self.grad})"


def as_var(x):
    return x if isinstance(x, Var) else Var(x, requires_grad=False)


def result(val, *inputs):
    """A new Var computed from `inputs`; it needs a gradient if any of them does."""
    out = Var(val, requires_grad=any(v.requires_grad for v in inputs))
    out.inputs = inputs
    return out


# ---- exercise 1: ops --------------------------------------------------------------
def add(a, b):
    a, b = as_var(a), as_var(b)
    out = result(a.val + b.val, a, b)

    def pullback():
        _acc(a, out.grad)
        _acc(b, out.grad)

    out._pullback = pullback
    return out


def _acc(v, g):
    # only Vars that want a gradient get one
    if v.requires_grad:
        v.grad = v.grad + g


def mul(a, b):
    a, b = as_var(a), as_var(b)
    out = result(a.val * b.val, a, b)

    def pullback():
        _acc(a, out.grad * b.val)
        _acc(b, out.grad * a.val)

    out._pullback = pullback
    return out


def exp(a):
    a = as_var(a)
    out = result(math.e ** a.val, a)

    def pullback():
        _acc(a, out.grad * out.val)

    out._pullback = pullback
    return out


def tanh(a):
    a = as_var(a)
    out = result(math.tanh(a.val), a)

    def pullback():
        _acc(a, out.grad * (1 - math.tanh(a.val) ** 2))

    out._pullback = pullback
    return out


def relu(a):
    a = as_var(a)
    positive = a.val > 0
    out = result(a.val if positive else 0.0, a)

    def pullback():
        _acc(a, out.grad if positive else 0.0)

    out._pullback = pullback
    return out


# ---- given ----------------------------------------------------------------------
def log(a):
    a = as_var(a)
    out = result(math.log(a.val), a)

    def pullback():
        if a.requires_grad:
            a.grad += out.grad / a.val

    out._pullback = pullback
    return out


def div(a, b):
    a, b = as_var(a), as_var(b)
    out = result(a.val / b.val, a, b)

    def pullback():
        if a.requires_grad:
            a.grad += out.grad / b.val
        if b.requires_grad:
            b.grad -= out.grad * a.val / b.val**2

    out._pullback = pullback
    return out


# ---- exercise 2: the backward pass ------------------------------------------------
def _topo(v, seen, order):
    if id(v) not in seen:
        seen.add(v)
        for i in v.inputs:
            _topo(i, seen, order)
        order.append(v)
    return order


def backward(out):
    """Seed out.grad = 1 and run every _pullback, each Var after all the Vars that use it."""
    order = _topo(out, set(), [])
    out.grad = 1.0
    for v in reversed(order):
        if v._pullback is None:  # leaf or constant
            continue
        v._pullback()
