from micrograd.engine import Value
