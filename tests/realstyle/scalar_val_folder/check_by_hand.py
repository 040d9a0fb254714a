# quick sanity checks I ran while writing scalar.py
from scalar import Scalar

x = Scalar(2.0)
y = Scalar(-3.0)
z = (x * y + x) ** 2
z.backward()
print(z, x.grad, y.grad)
