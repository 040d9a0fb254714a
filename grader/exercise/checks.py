"""Every check a target runs: the classic targets' hand-picked ones (``grader.exercise.cases``), an op's made
from its row of the op table (its inputs, its edges, whether it is a comparison or reflected), and each as a
course grades them, written with the ops the course's value class has.

An op a course adds by the recipe (docs/internals.md) gets its checks here from its row alone: nothing of it
is written twice.
"""

from __future__ import annotations

import functools
from dataclasses import replace

from grader.exercise.cases import CLASSIC_CHECKS, GIVEN_CHECKS, Case, Check, TrainCase, a, b, c, case
from grader.exercise.expr import Sym, safe_domain
from grader.exercise.ops import OPS, Edge, Op


def _unary_checks(name: str, symbol: str, at: tuple[float, ...], special: list[Check]) -> list[Check]:
    """The checks of a one-operand op, at three inputs ``at`` where it is smooth and not trivial (the first
    two on either side of a kink, where it has one). Its operand is a leaf, the op's own result, and a node
    of another op (whose own ``_backward`` must still run) in the regions of both ``x`` and ``y``."""
    x, y, z = at

    def u(s: Sym) -> Sym:
        return s.apply(name) if name != "neg" else -s

    checks = [
        Check(f"{name}.forward", f"{symbol} computes its value", "data",
              (case(u(a), a=x), case(u(a), a=y), case(u(a) * b, a=z, b=1.5))),
        Check(f"{name}.local-grad", f"the local derivative of {symbol}, times out.grad", "grad",
              (case(u(a), a=x), case(u(a) * b, a=y, b=-3.0), case(u(u(a)), a=z),
               case(u(a + b), a=x + 0.5, b=-0.5), case(u(a + b), a=y + 0.5, b=-0.5))),
        Check(f"{name}.reused-node", "a node used twice gets both contributions", "grad",
              (case(u(a) + a, a=x), case(u(a) * u(a), a=y))),
    ]
    return [*checks, *special,
            Check(f"{name}.generated", f"generated expressions with {symbol}", "both", generated=True)]


def _binary_checks(name: str, symbol: str) -> list[Check]:
    """The checks of a two-operand op (``-``, ``/``), with inputs away from its singularities; each operand
    is a leaf, and a node of another op (whose own ``_backward`` must still run), in one case each."""

    def f(x: object, y: object) -> Sym:
        return x.apply(name, y) if isinstance(x, Sym) else Sym(name, (Sym("const", (float(x),)), y))

    return [
        Check(f"{name}.forward", f"a {symbol} b computes its value", "data",
              (case(f(a, b), a=2.0, b=-3.0), case(f(f(a, b), c), a=0.5, b=4.0, c=-1.5))),
        Check(f"{name}.local-grad", f"the local derivatives of a {symbol} b, times out.grad", "grad",
              (case(f(a, b), a=2.0, b=-3.0), case(f(a, b) * c, a=2.0, b=-3.0, c=-2.0),
               case(f(a, b).tanh(), a=0.3, b=0.5), case(f(a + b, c), a=2.5, b=-0.5, c=-1.5),
               case(f(c, a + b), a=2.5, b=-0.5, c=-1.5))),
        Check(f"{name}.reused-node", "a node used twice gets both contributions", "grad",
              (case(f(a, a), a=2.0), case(f(a * b, a), a=2.0, b=-3.0), case(f(a, b) + a, a=1.5, b=-2.0))),
        Check(f"{name}.constant-operand", f"a plain number on the right of {symbol}", "both",
              (case(f(a, 2.0), a=1.5), case(f(a, 2.0) * b, a=1.5, b=-2.0))),
        Check(f"{name}.generated", f"generated expressions with {symbol}", "both", generated=True),
    ]


def _number_first_checks(name: str, symbol: str) -> list[Check]:
    """The checks of a reflected op (``2 + a`` through ``__radd__``); its Value is a leaf, and a node of
    another op (whose own ``_backward`` must still run)."""

    def f(s: Sym, n: float = 2.0) -> Sym:
        return s.apply(name, n)

    return [
        Check(f"{name}.forward", f"n {symbol} a computes its value", "data",
              (case(f(a), a=1.5), case(f(a, -3.0), a=0.5))),
        Check(f"{name}.local-grad", f"the local derivative of n {symbol} a, times out.grad", "grad",
              (case(f(a), a=1.5), case(f(a) * b, a=1.5, b=-2.0), case(f(a, 0.5).tanh(), a=0.3),
               case(f(a + b), a=2.5, b=-0.5))),
        Check(f"{name}.reused-node", "a node used twice gets both contributions", "grad",
              (case(f(a) + a, a=2.0), case(f(a * b) * a, a=2.0, b=-3.0))),
        Check(f"{name}.generated", f"generated expressions with {symbol}", "both", generated=True),
    ]


def reaches_reflection(case: Case, target: str) -> bool:
    """Whether ``case`` applies ``target`` with a plain number first (``2 + a``), which Python sends to the
    reflected method (``__radd__``), not to the target's own."""
    if target not in OPS or OPS[target].number_first:
        return False
    return any(node[0] == target and expr[node[1]][0] == "const" for expr in case.exprs for node in expr)


# What stands in for an op a course's value class lacks, in a hand-picked case: an op of the same arity, the
# smooth ones first (relu passes nothing back below 0).
SUBSTITUTES = {1: ("tanh", "sigmoid", "exp", "neg", "log", "relu"), 2: ("mul", "add", "sub", "truediv")}


def in_course(case: Case | TrainCase, target: str, have: frozenset[str]) -> Case | TrainCase | None:
    """``case`` written with the ops the course's value class has (``have``), so that the student can run
    every counterexample they are shown: each other op replaced by the first of ``SUBSTITUTES`` of its
    arity that the class has and that keeps the case well defined; ``None`` where none does. (A training
    case runs on the grader's own engine: it stays as it is.)"""
    if isinstance(case, TrainCase):
        return case
    exprs = []
    for expr in case.exprs:
        nodes = list(expr)
        for i, node in enumerate(nodes):
            kind = node[0]
            if kind in ("leaf", "const", target) or kind in have:
                continue
            spec = OPS[kind]
            if spec.exponent or spec.number_first:
                return None
            for other in SUBSTITUTES[spec.arity]:
                trial = (other, *node[1:])
                # Safe with what uses it too: a log of the substitute's value must still be defined.
                if other in have and other != target and safe_domain(tuple(nodes[:i] + [trial] + nodes[i + 1:]),
                                                                     case.values):
                    nodes[i] = trial
                    break
            else:
                return None
        exprs.append(tuple(nodes))
    return replace(case, exprs=tuple(exprs))


def course_checks(target: str, apart: bool, have: frozenset[str] | None = None) -> list[Check]:
    """Every check of ``target`` as a course grades it: with ``apart`` (the course grades its reflected op as
    a target of its own), without the cases that reach the reflected method, so that a bug there costs the
    reflected op alone; and every hand-picked case written with the ops the course's value class has
    (``have``; see ``in_course``), a case no op of it can stand in for left out, unless that would leave the
    check without a case."""
    checks = []
    for check in checks_for(target):
        cases = [c for c in check.cases if not (apart and reaches_reflection(c, target))]
        if have is not None:
            written = [c for c in (in_course(c, target, have) for c in cases) if c is not None]
            cases = list(dict.fromkeys(written)) or cases
        checks.append(replace(check, cases=tuple(cases)) if tuple(cases) != check.cases else check)
    return checks


def _comparison_checks(name: str, symbol: str) -> list[Check]:
    """The checks of a comparison (``a < b``): 1 where it holds and 0 where not, with a plain number on its right,
    and no gradient through it (whether it gives a node, a truth value or a number)."""
    def f(x: Sym, y: object) -> Sym:
        return x.apply(name, y)

    return [
        Check(f"{name}.forward", f"a {symbol} b gives 1 where it holds, else 0", "data",
              (case(f(a, b), a=2.0, b=-3.0), case(f(a, b), a=-1.5, b=2.0), case(f(a + b, c), a=0.5, b=0.25, c=-4.0))),
        Check(f"{name}.constant-operand", f"a plain number on the right of {symbol}", "data",
              (case(f(a, 2.0), a=1.5), case(f(a, 2.0), a=3.5))),
        Check(f"{name}.no-gradient", "a comparison passes no gradient back to its operands", "grad",
              (case(f(a, b), a=2.0, b=-3.0), case(f(a * b, c), a=1.5, b=2.0, c=0.5))),
    ]


# Inputs a course's own unary op is checked at (three of them, as ``_unary_checks`` takes), where its row gives none:
# the first of these triples where the op is well defined.
UNARY_INPUTS = ((1.5, -2.0, 0.7), (2.5, 0.5, 4.0), (0.5, 0.25, 0.8))


def symbol(spec: Op) -> str:
    """How a check's title writes the op: ``-`` for a negation, a method's name (``relu``), an operator's label."""
    if spec.arity == 1 and spec.call.startswith("operator."):
        return spec.template.replace("{0}", "").strip("()")
    return spec.method if spec.arity == 1 else spec.label


def edge_check(name: str, edge: Edge) -> Check:
    """An op's own edge (its row's ``edges``) as a check of its cases."""
    def u(s: Sym) -> Sym:
        return s.apply(name)

    cases = (*(case(u(a), a=x) for x in edge.values), *(case(u(a) + a, a=x) for x in edge.reused),
             *(case(u(a) * b, a=x, b=y) for x, y in edge.scaled))
    return Check(f"{name}.{edge.name}", edge.title, "both", cases, kink=edge.kink, code=edge.code)


@functools.cache
def row_checks(name: str) -> list[Check]:
    """The checks of an op that is not the classic exercise's, made from its row of the op table: a comparison's, a
    reflected op's, a one-operand op's at its hand-picked inputs with its own edges, a two-operand op's; an op a
    course names with its formula, every case where it is well defined."""
    spec = OPS[name]
    if spec.comparison:
        return _comparison_checks(name, spec.label)
    if spec.number_first:
        return _number_first_checks(name, spec.label)
    if spec.arity == 2:
        checks = _binary_checks(name, symbol(spec))
    else:
        at = spec.inputs or next((t for t in UNARY_INPUTS if all(spec.safe(x) and spec.safe(x + 0.5) for x in t)),
                                 UNARY_INPUTS[0])
        checks = _unary_checks(name, symbol(spec), at, [edge_check(name, edge) for edge in spec.edges])
    if not spec.formula:
        return checks
    kept = []
    for check in checks:
        cases = tuple(c for c in check.cases if all(safe_domain(e, c.values) for e in c.exprs))
        if cases or check.generated:
            kept.append(replace(check, cases=cases))
    return kept


def checks_for(target: str) -> list[Check]:
    """Every check of ``target``, in the order they run."""
    for table in (CLASSIC_CHECKS, GIVEN_CHECKS):
        if target in table:
            return table[target]
    if target in OPS:
        return row_checks(target)
    raise KeyError(target)
