"""Project 2: reverse mode on a Wengert list.

Every operation appends one Entry to the global TAPE:

    x, y = var(2.0), var(3.0)
    z = x * y + x.exp()
    adj = gradients(z)          # one adjoint per tape entry, by index
    adj[x.index], adj[y.index]  # dz/dx, dz/dy

A Var is only a value and the index of the entry that made it. The tape holds the
structure: Entry(output, inputs, partials), partials[i] = d output / d inputs[i],
worked out when the entry is recorded. Entries are appended in the order values
are computed, so the tape is already a topological order: reading it backwards
visits every Var after all the Vars computed from it.

Part A: the ops (their values and partials). Part B: gradients().
"""
from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass
class Entry:
    output: Var
    inputs: tuple
    partials: tuple


class Tape:
    def __init__(self):
        self.entries: list[Entry] = []

    def record(self, value, inputs=(), partials=()) -> Var:
        """Append the entry of a new Var and return the Var."""
        out = Var(value, len(self.entries))
        self.entries.append(Entry(out, tuple(inputs), tuple(partials)))
        return out

    def entry(self, v: Var) -> Entry:
        return self.entries[v.index]

    def pairs(self, v: Var) -> list:
        """(input, partial) for each input of v's entry: for printing the tape, and for the graders."""
        e = self.entry(v)
        return list(zip(e.inputs, e.partials))

    def reset(self) -> None:
        self.entries.clear()


TAPE = Tape()


def var(x) -> Var:
    """A new input: an entry with no inputs."""
    return TAPE.record(float(x))


def lift(x) -> Var:
    return x if isinstance(x, Var) else var(x)


class Var:
    __slots__ = ("value", "index")

    def __init__(self, value, index):
        self.value = float(value)
        self.index = index

    def __repr__(self):
        return f"v{self.index} = {self.value:g}"

    # ---- Part A ---------------------------------------------------------------------
    def __add__(self, other):
        other = lift(other)
        value = self.value + other.value
        return TAPE.record(value, (self, other), (1.0, 1.0))

    def __mul__(self, other):
        other = lift(other)
        value = self.value * other.value
        d_self, d_other = other.value, self.value
        return TAPE.record(value, (self, other), (d_self, d_other))

    def __sub__(self, other):
        other = lift(other)
        value = self.value - other.value
        return TAPE.record(value, (self, other), (1.0, -1.0))

    def __truediv__(self, other):
        other = lift(other)
        value = self.value / other.value
        d_self = 1.0 / other.value
        d_other = -value / other.value  # -a/b^2 = -(a/b)/b
        return TAPE.record(value, (self, other), (d_self, d_other))

    def __pow__(self, k):
        value = self.value**k
        d_self = k * self.value ** (k - 1)
        return TAPE.record(value, (self,), (d_self,))

    def exp(self):
        value = math.exp(self.value)
        return TAPE.record(value, (self,), (value,))

    def log(self):
        value = math.log(self.value)
        return TAPE.record(value, (self,), (1.0 / self.value,))

    def tanh(self):
        value = math.tanh(self.value)
        return TAPE.record(value, (self,), (1.0 - value**2,))

    # given
    def __radd__(self, other):
        return lift(other) + self

    def __rmul__(self, other):
        return lift(other) * self

    def __rsub__(self, other):
        return lift(other) - self

    def __rtruediv__(self, other):
        return lift(other) / self

    def __neg__(self):
        return self * -1.0


# ---- Part B -------------------------------------------------------------------------
def gradients(out: Var) -> list[float]:
    """The adjoint d out / d v of every tape entry v, as a list indexed like the tape."""
    adjoint = {out.index: 1.0}
    # nothing after `out` on the tape can matter to it
    for i in range(out.index, -1, -1):
        entry = TAPE.entries[i]
        g = adjoint.get(i, 0.0)
        if g == 0.0:
            continue
        for inp, partial in zip(entry.inputs, entry.partials):
            adjoint[inp.index] = adjoint.get(inp.index, 0.0) + partial * g
    return [adjoint.get(i, 0.0) for i in range(len(TAPE.entries))]
