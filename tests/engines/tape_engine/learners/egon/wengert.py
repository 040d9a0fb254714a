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
        o = lift(other)
        return TAPE.record(self.value + o.value, [self, o], [1, 1])

    def __mul__(self, other):
        o = lift(other)
        return TAPE.record(self.value * o.value, [self, o], [o.value, self.value])

    def __sub__(self, other):
        o = lift(other)
        return TAPE.record(self.value - o.value, [self, o], [1, -1])

    def __truediv__(self, other):
        o = lift(other)
        return TAPE.record(self.value / o.value, [self, o], [1 / o.value, -self.value / o.value**2])

    def __pow__(self, k):
        return TAPE.record(self.value**k, [self], [k * self.value ** (k - 1)])

    def exp(self):
        y = math.exp(self.value)
        return TAPE.record(y, [self], [y])

    def log(self):
        return TAPE.record(math.log(self.value), [self], [1 / self.value])

    def tanh(self):
        e2x = math.exp(2 * self.value)
        t = (e2x - 1) / (e2x + 1)
        return TAPE.record(t, [self], [(1 - t) * (1 + t)])

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
    n = len(TAPE.entries)
    adj = [0.0] * n
    for entry in TAPE.entries[out.index::-1]:
        for inp, partial in zip(entry.inputs, entry.partials):
            adj[inp.index] += partial * adj[entry.output.index]
    return adj
