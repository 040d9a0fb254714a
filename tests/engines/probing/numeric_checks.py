"""Functions a learner writes that are not ops: a numerical derivative, a gradient derived by hand, a whole
expression (a loss written as a function of the engine's nodes)."""

from __future__ import annotations

import ast

from probing.forms import Engine, as_number, formula_function
from probing.scalar_checks import Failed, close, partial

STEPS = (1e-2, 1e-3)  # large enough that every difference quotient but the symmetric one is visibly off


def check_numerical_derivative(engine_namespace: dict, options: dict) -> dict:
    """The learner's estimate, called as the course's ``call`` form says, against the difference quotients it
    could be: the symmetric one (right), a one-sided one, the symmetric difference over h (or reversed)."""
    names = tuple(options["inputs"])
    f = formula_function(options["of"], names)
    base = list(options.get("at", [1.5] * len(names)))
    for point in (base, [v * 0.7 + 0.3 for v in base]):
        for i in range(len(names)):
            for h in STEPS:
                got = estimate(engine_namespace, options, f, point, i, h)
                up, down = list(point), list(point)
                up[i] += h
                down[i] -= h
                symmetric = (f(*up) - f(*down)) / (2 * h)
                if close(got, symmetric, 1e-7):
                    continue
                forward, backward = (f(*up) - f(*point)) / h, (f(*point) - f(*down)) / h
                where = f"d/d{names[i]} at {tuple(point)} with h = {h}: {got}, not {symmetric}"
                if close(got, forward, 1e-7) or close(got, backward, 1e-7):
                    raise Failed("one-sided-difference", where)
                if close(got, 2 * symmetric, 1e-7) or close(got, -symmetric, 1e-7):
                    raise Failed("wrong-difference-quotient", where)
                if close(got, partial(f, point, i), 1e-3):
                    raise Failed("wrong-step", where)
                raise Failed("wrong-derivative", where)
    return {}


def estimate(namespace: dict, options: dict, f, point, i, h) -> float:
    call = options.get("call") or f"{options['function']}(f, x, h)"
    engine_free = {"f": f, "vals": list(point), "i": i, "h": h, "x": point[0]}
    from probing.forms import FORM_BUILTINS
    result = eval(call, {"__builtins__": FORM_BUILTINS}, {**namespace, **engine_free})  # noqa: S307
    if result is None:
        raise NotImplementedError(f"{options['function']} returns None")
    return float(result)


def check_gradient(namespace: dict, options: dict) -> dict:
    """A gradient derived by hand: the learner's function against the partial derivatives of the course's
    formula at the course's points and others; the same numbers everywhere are pasted ones."""
    names = tuple(options["inputs"])
    f = formula_function(options["of"], names)
    function = namespace[options["function"]]
    points = [list(p) for p in options.get("at", [])] + [[1.3, 0.8, 2.1][: len(names)], [0.6, 1.7, 1.1][: len(names)]]
    answers = []
    for point in points:
        got = function(*point)
        if got is None or all(g == 0 for g in got):
            raise NotImplementedError(f"{options['function']} returns {got}")
        answers.append([float(g) for g in got])
    if all(a == answers[0] for a in answers):
        raise Failed("pasted-constants", f"{options['function']} returns {answers[0]} at every point")
    for point, got in zip(points, answers):
        for i, name in enumerate(names):
            if not close(got[i], partial(f, point, i), 1e-6):
                raise Failed("wrong-derivative", f"d/d{name} at {tuple(point)}: {got[i]}, not {partial(f, point, i)}")
    return {}


def check_expression(engine: Engine, options: dict) -> dict:
    """The course's code run twice on the course's engine: with its own function and with the learner's. The
    learner's value wrong: ``wrong-expression``; the value right and a gradient wrong: ``detached-data``."""
    tree = ast.parse(options["code"])
    function = options.get("function")
    without = ast.Module([s for s in tree.body if not (isinstance(s, ast.FunctionDef) and s.name == function)], [])
    course_code, learner_code = compile(tree, "<course>", "exec"), compile(without, "<learner>", "exec")
    inputs, result = options["inputs"], options.get("result", "loss")
    points = [list(p) for p in options.get("at", [])] + [[0.3 * (i + 1) - 0.5 for i in range(len(inputs))]]
    for point in points:
        outcome = {}
        for side, code in (("course", course_code), ("learner", learner_code)):
            leaves = [engine.leaf(x) for x in point]
            names = {**engine.namespace, **dict(zip(inputs, leaves))}
            exec(code, names)  # noqa: S102 (the course's own code, on the course's engine)
            out = names[result]
            returned = engine.backward(out)
            grads = [0.0 if (g := engine.grad(leaf, returned)) is None else as_number(g) for leaf in leaves]
            outcome[side] = (engine.number(out), grads)
        (want, want_grads), (got, got_grads) = outcome["course"], outcome["learner"]
        if not close(got, want):
            raise Failed("wrong-expression", f"at {point}: {got}, not {want}")
        if not all(close(g, w) for g, w in zip(got_grads, want_grads)):
            raise Failed("detached-data", f"at {point}: gradients {got_grads}, not {want_grads}")
    return {}
