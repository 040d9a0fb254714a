import torch

from micrograd.engine import Value


def test_small_graph():
    a = Value(-3.0)
    b = a * 2 + 1
    c = (b * a).relu() + b**2
    d = c * a + a
    d.backward()
    amg, dmg = a, d

    a = torch.Tensor([-3.0]).double()
    a.requires_grad = True
    b = a * 2 + 1
    c = (b * a).relu() + b**2
    d = c * a + a
    d.backward()
    apt, dpt = a, d

    # forward pass went well
    assert dmg.data == dpt.data.item()
    # backward pass went well
    assert amg.grad == apt.grad.item()


def test_more_ops():
    a = Value(1.5)
    b = Value(-2.5)
    c = a * b + b**3
    d = (c + 2 * a).relu() + (a - b) * (b - 1)
    e = d / (a + 4) + 3 / b
    f = e**2 + (-e).relu()
    f.backward()
    amg, bmg, fmg = a, b, f

    a = torch.Tensor([1.5]).double()
    b = torch.Tensor([-2.5]).double()
    a.requires_grad = True
    b.requires_grad = True
    c = a * b + b**3
    d = (c + 2 * a).relu() + (a - b) * (b - 1)
    e = d / (a + 4) + 3 / b
    f = e**2 + (-e).relu()
    f.backward()
    apt, bpt, fpt = a, b, f

    tol = 1e-6
    assert abs(fmg.data - fpt.data.item()) < tol
    assert abs(amg.grad - apt.grad.item()) < tol
    assert abs(bmg.grad - bpt.grad.item()) < tol
