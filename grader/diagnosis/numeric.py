"""Naming what is wrong with a numerical estimate of a derivative, saying it, and pointing at it.

The judge read each estimated derivative (``grader.judging.numeric``): the difference it
takes, its step, and what that shows when it is wrong. Read together over every case (the
course's function and its variants), they name one misconception, in this order: a
difference divided by the wrong length, a one-sided difference where the symmetric one was
asked, a step that makes the estimate miss, numbers not estimated from ``f`` at all (pasted,
or the stub's zeros), any other wrong number. A value is pointed at where it is computed
(the statement that fills it, or its assignment), a wrong step at the assignment of the step
itself, wherever that is; a function at its ``return``, or at the stub's first statement.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

from grader.diagnosis import blame, feedback
from grader.diagnosis.findings import Diagnosis, TargetOutcome, fmt
from grader.diagnosis.rules import settled, smallest
from grader.diagnosis.syntax import Function
from grader.diagnosis.traversal import own_nodes
from grader.exercise.formula import FormulaError, parse
from grader.exercise.targets import Target
from grader.judging.judge import Verdict
from grader.submission.source import Location, SourceFile, Submission
from grader.submission.tree import walk

ORDER = ("wrong-difference-quotient", "one-sided-difference", "wrong-step", "pasted-constants", "wrong-derivative")
MUTATORS = ("append", "extend", "insert")


def readings(verdict: Verdict) -> dict:
    return verdict.details.get("readings", {})


def estimate_codes(verdicts: list[Verdict], function: Function | None) -> dict[str, Verdict]:
    """The code of a numerical estimate, with the smallest verdict that shows it (``function``: the learner's
    function, for a numerical derivative; ``None`` for a value)."""
    codes, wrong = settled(verdicts, "grad")
    if codes is not None or not wrong:
        return codes or {}
    if function is not None and stub(function):
        return {"not-implemented": smallest(wrong)}
    found = [(v, r.code) for v in wrong for r in readings(v).values() if r.code]
    codes = {code for _, code in found}
    if codes == {"pasted-constants"} or constant(verdicts):
        zeros = all(x == 0.0 for v in wrong for x in v.actual.values())  # the stub's, never estimated
        return {"not-implemented" if zeros else "pasted-constants": telling(wrong, "pasted-constants")}
    for code in ORDER:
        if code in codes:
            return {code: telling([v for v, c in found if c == code], code)}
    return {"wrong-derivative": smallest(wrong)}


def constant(verdicts: list[Verdict]) -> bool:
    """Whether the code gave the same numbers in every case, where the right ones differ (whatever points it
    evaluated f at: numbers pasted beside calls made for show)."""
    answered = [v for v in verdicts if v.error is None and v.actual]
    given = {tuple(v.actual.values()) for v in answered}
    expected = {tuple(round(x, 9) for x in v.expected.values()) for v in answered}
    return len(answered) > 1 and len(given) == 1 and len(expected) > 1 and all(
        isinstance(x, float) for x in next(iter(given)))


def telling(verdicts: list[Verdict], code: str) -> Verdict:
    """The smallest verdict showing ``code`` whose numbers visibly differ from the expected ones, if any does
    (pasted numbers are right where they were pasted from: the other function shows them)."""
    def visible(v: Verdict, name: str) -> bool:
        got, want = v.actual.get(name), v.expected[name]
        return isinstance(got, float) and abs(got - want) > 1e-6 * max(1.0, abs(want))

    shown = [v for v in verdicts if any(r.code == code and visible(v, name) for name, r in readings(v).items())]
    return smallest(shown or verdicts)


def stub(function: Function) -> bool:
    """A body that does nothing yet: only ``pass``, ``...``, a docstring, a bare ``return`` or ``raise
    NotImplementedError``."""
    for node in function.body:
        if isinstance(node, ast.Pass) or (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)):
            continue
        if isinstance(node, ast.Return) and (node.value is None or (
                isinstance(node.value, ast.Constant) and node.value.value is None)):
            continue
        if isinstance(node, ast.Raise) and "NotImplementedError" in ast.unparse(node):
            continue
        return False
    return True


def note(code: str, verdict: Verdict | None, value: bool) -> str:
    """What the estimate shows of ``code``: which derivatives, with which step and difference."""
    if verdict is None or verdict.error is not None:
        return ""
    if code == "not-implemented":
        return ("It is 0 for every derivative, whatever the function, as the stub is." if value else
                "Its body does nothing yet: it returns None.")
    found = [(name, r) for name, r in readings(verdict).items() if r.code == code]
    if code == "pasted-constants" and not found:
        return "It gives the same numbers whatever function it is run with."
    if not found:
        return ""
    names = ", ".join(name for name, _ in found)
    name, first = found[0]
    if code == "one-sided-difference":
        return (f"{names}: a {first.difference} difference with h = {fmt(first.step)}, which looks to one side of "
                "the point only.")
    if code == "wrong-step" and not value and verdict.case.step and first.step != verdict.case.step:
        return (f"It steps by {fmt(first.step)}, not by the h it is given ({fmt(verdict.case.step)}), and misses "
                f"{name} by {fmt(first.error)}.")
    if code == "wrong-step":
        return f"With h = {fmt(first.step)} it misses {names} by up to {fmt(max(r.error for _, r in found))}."
    if code == "wrong-difference-quotient":
        return (f"{names}: the difference of f between points {fmt(first.step)} apart is divided by "
                f"{fmt(first.length)}.")
    if code == "pasted-constants":
        inputs = ", ".join(n.rpartition("/d")[2] for n, _ in found)
        return (f"f is never evaluated away from the point along {inputs}: {names} "
                f"{'is' if len(found) == 1 else 'are'} not estimated from f.")
    if code == "wrong-derivative" and len(found) < len(readings(verdict)):
        right = [n for n, r in readings(verdict).items() if r.code is None]
        return f"Wrong: {names}; right: {', '.join(right)}." if right else ""
    return ""


ORACLES = {"both": "the exact derivatives and a central difference of f", "reference": "the exact derivatives",
           "finite-difference": "a central difference of f"}


def shown_pair(want: float, got: object) -> tuple[str, str]:
    """The expected and received numbers with as many digits as it takes to tell them apart (an estimate is off
    in its seventh digit as often as in its first)."""
    if not isinstance(got, float):
        return fmt(want), fmt(got)
    digits = next((n for n in range(6, 13) if f"{want:.{n}g}" != f"{got:.{n}g}"), 12)
    return f"{want:.{digits}g}", f"{got:.{digits}g}"


def smallest_case(code: str, verdict: Verdict | None) -> str:
    """The smallest failing case, as a sentence the learner can check: the first derivative that shows
    ``code``."""
    if verdict is None or verdict.error is not None:
        return ""
    named = [name for name, r in readings(verdict).items() if r.code == code] or list(verdict.expected)
    want, got = shown_pair(verdict.expected[named[0]], verdict.actual.get(named[0]))
    return (f"Smallest failing case: {verdict.case.label}: expected {named[0]} = {want}, got {got} (checked against "
            f"{ORACLES[verdict.oracle]}).")


def value_location(code: str, name: str, verdict: Verdict | None, submission: Submission) -> Location | None:
    """Where a value's diagnosis points: the assignment of the step, for a wrong one; else the statement that
    computes the value (an ``append`` or item assignment that fills it, after it is made), else its binding."""
    source = next((s for role, s in submission.providers.items() if submission.names.get(role) == name), None)
    made = submission.location(name)
    if source is None or made is None:
        return made
    if code == "wrong-step" and verdict is not None:
        steps = [r.step for r in readings(verdict).values() if r.code == code and r.step]
        found = step_assignment(source, steps[0], made) if steps else None
        if found is not None:
            return found
    unit = next((u for u in source.units if u.cell == made.cell and u.tree is not None), None)
    filling = [node for node in walk(unit.tree) if isinstance(node, ast.stmt) and node.lineno > made.line
               and fills(node, name)] if unit is not None else []
    return Location(made.file, filling[-1].lineno, made.cell) if filling else made


def fills(node: ast.stmt, name: str) -> bool:
    """Whether the statement ``node`` itself (not a block around it) puts numbers into the list ``name``."""
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        func = node.value.func
        return (isinstance(func, ast.Attribute) and func.attr in MUTATORS and isinstance(func.value, ast.Name)
                and func.value.id == name)
    targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
        node, ast.AugAssign) else []
    return any(isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id == name for t in targets)


def step_assignment(source: SourceFile, step: float, before: Location) -> Location | None:
    """The last top-level assignment of a number equal to ``step`` (``h = 0.01``, ``eps = 1e-2``) at or before
    ``before``, in any unit of ``source``."""
    found = None
    for unit in source.units:
        for node in unit.tree.body if unit.tree else ():
            if (unit.cell or 0, node.lineno) > (before.cell or 0, before.line):
                return found
            if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                    and close_to(number_of(node.value), step)):
                found = Location(source.display, node.lineno, unit.cell)
    return found


def number_of(node: ast.expr) -> float | None:
    """The number a constant expression writes (``1e-6``, ``10**-6``, ``0.1 / 10``), read never run."""
    try:
        return parse(ast.unparse(node), ())()
    except (FormulaError, ArithmeticError, ValueError, TypeError):
        return None


def close_to(x: float | None, step: float) -> bool:
    return x is not None and abs(x - step) <= 1e-6 * abs(step)


def function_statement(code: str, function: Function) -> ast.stmt | None:
    """Where a numerical derivative function's diagnosis points: the stub's first statement; for a step of its
    own, where it sets it; else the last ``return`` of a value."""
    if code == "not-implemented":
        return function.body[0]
    if code == "wrong-step":
        given = {a.arg for a in function.args.args} & {"h", "eps", "step", "delta", "dx"}
        own = [n for n in walk(function) if isinstance(n, ast.Assign) and any(
            isinstance(t, ast.Name) and (t.id in given or t.id in ("h", "eps")) for t in n.targets)]
        if own:
            return own[-1]
    return own_return(function)


def own_return(function: Function) -> ast.Return | None:
    """The function's own last ``return`` of a value (not one of a function defined inside it)."""
    returns = [n for n in own_nodes(function) if isinstance(n, ast.Return) and n.value is not None]
    return max(returns, key=lambda n: n.lineno) if returns else None


def unbuilt(submission: Submission, name: str) -> Location | None:
    """Where a unit that would compute ``name`` does not compile (its cell was never run), if one does."""
    for source in submission.files:
        for unit in source.units:
            if unit.syntax_error and any(part.isidentifier() and part == name for part in tokens(unit.source)):
                return Location(source.display, unit.syntax_line, unit.cell)
    return None


def tokens(source: str) -> list[str]:
    """The words of ``source``: runs of letters, digits and underscores."""
    return "".join(c if c.isalnum() or c == "_" else " " for c in source).split()


def value_diagnosis(code: str, verdict: Verdict | None, detail: str, target: Target, method: str,
                    submission: Submission) -> Diagnosis:
    """A numerical gradient's diagnosis: worded, pointed at where the value (or its step) is computed. A value
    that is not there because the cell that computes it does not compile is that cell's ``load-error``."""
    name = target.settings["value"]
    if code == "not-implemented" and (broken := unbuilt(submission, name)) is not None and (
            verdict is None or verdict.error is not None):
        syntax = next(u.syntax_error for s in submission.files for u in s.units
                      if u.cell == broken.cell and s.display == broken.file and u.syntax_error)
        words = feedback.message("load-error", target.name, None, "grad",
                                 f"{syntax} in the code that computes {name} ({broken.describe()})",
                                 concept=feedback.runs_on_its_own(broken, False))
        return Diagnosis("load-error", target.name, words, broken)
    made = submission.location(name)
    if code == "not-implemented" and made is not None and verdict is not None and verdict.error is not None:
        # Bound in the code, but never computed: the code stopped before it, with an error its warning shows.
        words = feedback.message("crash", target.name, None, "grad", f"the code that computes it stopped before it "
                                 f"did ({made.describe()}), with the error the warnings show", method=method)
        return Diagnosis("crash", target.name, words, made)
    words = said(code, verdict, detail, target, method, True)
    return Diagnosis(code, target.name, words, value_location(code, name, verdict, submission),
                     feedback.counterexample(verdict, "grad") if verdict is not None else None)


def derivative_diagnosis(code: str, verdict: Verdict | None, detail: str, target: Target, method: str,
                         submission: Submission) -> Diagnosis:
    """A numerical derivative function's diagnosis: worded, pointed at its ``return`` (or stub, or own step)."""
    function = blame.written(submission, method)
    if function is None or (verdict is not None and verdict.error is not None):
        where = blame.blame(code, target.kind.name, target.name, method, verdict, submission)
    else:
        where = function.at(function_statement(code, function.node))
    words = said(code, verdict, detail, target, method, False)
    return Diagnosis(code, target.name, words, where,
                     feedback.counterexample(verdict, "grad") if verdict is not None else None)


def said(code: str, verdict: Verdict | None, detail: str, target: Target, method: str, value: bool) -> str:
    """What the learner reads: what is wrong, what the estimate shows of it, the smallest case with the digits
    that tell the numbers apart, the concept."""
    if verdict is None or verdict.error is not None:
        return feedback.message(code, target.name, verdict, "grad", detail, method=method)
    shows = " ".join(part for part in (note(code, verdict, value), smallest_case(code, verdict)) if part)
    return feedback.message(code, target.name, None, "grad", detail, shows, method=method)


def edited(outcomes: Sequence[TargetOutcome]) -> list[str]:
    """A warning for each numerical estimate whose code binds the course's function's name to another function
    than the course's: it was graded with the course's function (the one the course's check is written for), and a
    TA should know that the learner's own check ran on another."""
    found = []
    for outcome in outcomes:
        changed = next((v for v in outcome.verdicts if "edited" in v.details), None)
        if changed is None:
            continue
        case = changed.case
        at, mine, want = changed.details["edited"]
        where = ", ".join(f"{name} = {fmt(x)}" for name, x in zip(case.names, at))
        gives = f"gives {fmt(mine)}" if mine is not None else "gives no number"
        found.append(f"{outcome.target.name}: the submission's {case.calls} is not the course's (at {where} it "
                     f"{gives}, the course's {case.calls} {fmt(want)}): the estimate was graded with the course's "
                     f"{case.calls}, as the course gives it")
    return found
