"""What the student reads: for each diagnosis, what is wrong, the smallest case, the concept.

Messages describe behaviour and ideas, never the code that fixes them.
"""

from __future__ import annotations

import math
import shlex

from grader.diagnosis.codes import CODES, UNUSABLE
from grader.diagnosis.findings import Counterexample, fmt
from grader.exercise.cases import Case, TrainCase
from grader.exercise.expr import operands
from grader.exercise.ops import OPS, local_derivatives, method_name
from grader.judging.judge import Verdict
from grader.submission.source import Location


def describe_error(error: dict) -> str:
    where = f" (line {error['line']})" if error.get("line") else ""
    if error.get("caller_line") and error.get("caller"):
        # The constructor raised on what the student's call gave it: the call is what to look at.
        caller = "the top level" if error["caller"] == "<module>" else error["caller"]
        where = f" (line {error['caller_line']}, in {caller}, where the constructor it calls raised)"
    message = f": {error['message']}" if error.get("message") else ""
    return f"{error.get('type', 'an error')}{message}{where}"


def allowed_but_missing(module: str) -> str:
    """What is said of a module the course allows that is not installed where micrograde runs: it is the
    course's to install, not the learner's to rewrite."""
    return (f"Your course allows {module}: it is missing where micrograde runs, which the course's staff put right "
            f"by installing it into micrograde's own environment (pip install {module}); your code needs no change.")


def counterexample(verdict: Verdict, focus: str) -> Counterexample | None:
    """The report's view of a failing verdict."""
    if verdict.error is not None:
        return None
    case = verdict.case
    if isinstance(case, TrainCase):
        return Counterexample(case.label, {}, dict(verdict.expected), dict(verdict.actual), "reference")
    expression = case.label
    drawing = verdict.graph or None
    if focus != "grad" and not verdict.forward_ok and verdict.expected_data is not None:
        return Counterexample(expression, case.values, {"data": verdict.expected_data},
                              {"data": verdict.actual_data}, "reference", drawing)
    return Counterexample(expression, case.values, dict(verdict.expected), dict(verdict.actual),
                          verdict.oracle, drawing, verdict.reference)


def explain_case(example: Counterexample | None) -> str:
    """One sentence: the expression, its inputs, and the first value that came out wrong."""
    if example is None:
        return ""
    inputs = ", ".join(f"{k} = {fmt(v)}" for k, v in example.inputs.items())
    wrong = [k for k in example.expected if fmt(example.expected[k]) != fmt(example.actual.get(k))]
    key = wrong[0] if wrong else next(iter(example.expected), None)
    if key is None or (not wrong and example.expected):
        # Nothing came out wrong where micrograde looked (a number among the children, stepped over by its own
        # pass): the case alone, never "expected 4, got 4".
        given = f" with {inputs}" if inputs else ""
        return f"Smallest failing case: {example.expression}{given}."
    label = "the value" if key == "data" else (key if " " in key or "/" in key else f"{key}.grad")
    oracle = {"both": f"{example.reference} and finite differences",
              "reference": example.reference,
              "finite-difference": "finite differences of your forward pass"}[example.oracle]
    given = f" with {inputs}" if inputs else ""
    return (f"Smallest failing case: {example.expression}{given}: expected {label} = "
            f"{fmt(example.expected[key])}, got {fmt(example.actual.get(key))} (checked against {oracle}).")


def train_lead(verdict: Verdict) -> str:
    """For a training case whose returned losses are right but whose parameters are not (a check of the loss
    that fails on the weights): what to look at, before the case itself."""
    if isinstance(verdict.case, TrainCase) and verdict.forward_ok and not verdict.grads_ok:
        return ("The losses train_step returns are right; the parameters after a step are not, so look at the "
                "backward pass, the gradient reset and the update (the train_step diagnosis says which). ")
    return ""


def without_out_grad(verdict: Verdict, target: str) -> bool:
    """Whether the leaves' gradients in ``verdict``'s case are what they would be if ``target``'s ``_backward``
    passed its bare local derivative, never multiplied by ``out.grad``, where that differs from the right ones."""
    if verdict.graph is None or target not in OPS:
        return False
    expr, expected, actual = verdict.graph
    # A plain number's data is None in the graph (it is no node): its value is the number itself.
    values = [node[1] if node[0] == "const" else data for node, (data, _) in zip(expr, expected)]
    grads = [0.0] * len(expr)
    grads[-1] = 1.0
    for i in range(len(expr) - 1, -1, -1):
        if expr[i][0] in ("leaf", "const"):
            continue
        chained = 1.0 if expr[i][0] == target else grads[i]
        for j, local in zip(operands(expr[i]), local_derivatives(expr[i], values)):
            grads[j] += local * chained
    leaves = [i for i, node in enumerate(expr) if node[0] == "leaf"]

    def same(x: object, y: object) -> bool:
        return isinstance(x, float) and isinstance(y, float) and math.isclose(x, y, rel_tol=1e-6, abs_tol=1e-9)

    return (all(same(actual[i][1], grads[i]) for i in leaves)
            and not all(same(expected[i][1], grads[i]) for i in leaves))


def describe_case(case: Case | TrainCase) -> str:
    """A case as the student can rerun it: ``(a + b) with a = 2, b = -3``."""
    if isinstance(case, TrainCase):
        return case.label
    inputs = ", ".join(f"{k} = {fmt(v)}" for k, v in case.values.items())
    return case.label + (f" with {inputs}" if inputs else "")


def raising_case(verdict: Verdict) -> str:
    """The smallest case that raised, as a sentence (a training run has no expression to show)."""
    # A missing method or an unusable class fails on every case alike: no case to show.
    if isinstance(verdict.case, TrainCase) or (verdict.error or {}).get("type") in UNUSABLE:
        return ""
    return f"Smallest case that raises it: {describe_case(verdict.case)}."


RECURSION_SLACK = 50  # frames of a recursion error beyond the graph's size that only a cycle explains


def recursion_hint(verdict: Verdict) -> str:
    """Why a recursive pass ran out of depth: a graph deeper than Python's recursion limit, or
    a recursion that never ends (a node that reaches itself through its children, or a call
    on the same node again instead of on its child). The child reports the depth reached."""
    depth = verdict.error.get("depth") if verdict.error else None
    exprs = getattr(verdict.case, "exprs", None)
    if not isinstance(depth, int) or not exprs:
        return ""
    nodes = sum(len(expr) for expr in exprs)
    if depth > 2 * nodes + RECURSION_SLACK:
        return (f"The recursion went {depth} calls deep on a graph of only {nodes} nodes, so it never "
                "stops on its own: look for a call on the same node again instead of on its child, "
                "or a node that is among its own children.")
    return (f"The graph is deeper than Python lets a recursion go ({depth} calls): walk it with an "
            "explicit stack instead of recursive calls.")


# Where running the file would not show what went wrong, "try `python yourfile.py`" is wrong advice: a file the
# grader refused before running anything, code the sandbox stopped, a loading process that was lost.
REFUSED = "Submit what the exercise asks for: a .py file or a notebook, within the size limits, that defines it."
SANDBOXED = ("The file runs in the grader's sandbox each time it is loaded, where code may not start processes "
             "or threads, nor reach files outside its folder: keep such code under if __name__ == \"__main__\": "
             "(or, in a notebook, in a cell tagged skip-grading).")
LOST = ("Loading the file ended the process that grades it: look for top-level code that uses a great deal of "
        "memory, or ends the process, and keep it under if __name__ == \"__main__\": (or, in a notebook, in a cell "
        "tagged skip-grading).")
SANDBOX_REFUSALS = ("is not allowed while grading", "are off limits", "may only write in its working directory")


NOTEBOOK_RUNS = ("The notebook must run from top to bottom without errors: restart its kernel and run every cell "
                 "(Jupyter: Kernel > Restart Kernel and Run All Cells).")


def runs_on_its_own(where: Location | None, notebook: bool) -> str | None:
    """The concept of a ``load-error`` at ``where``, in the words of what the learner runs: a notebook from the
    top in its kernel, a ``.py`` file with ``python`` and its own name (``None``: a place of neither)."""
    if notebook or (where is not None and (where.cell is not None or where.file.endswith(".ipynb"))):
        return NOTEBOOK_RUNS
    if where is not None and where.file.endswith(".py"):
        return f"The file must run on its own without errors: try `python {shlex.quote(where.file)}`."
    return None


def load_concept(detail: str) -> str | None:
    """The concept of a ``load-error`` whose ``detail`` running the file would not reproduce (``None``: the
    usual one, run the file)."""
    if any(refusal in detail for refusal in SANDBOX_REFUSALS):
        return SANDBOXED
    if detail.startswith("while loading, "):
        return LOST
    return None


def message(code: str, target: str, evidence: Verdict | None, focus: str, detail: str = "", note: str = "",
            concept: str | None = None, method: str | None = None) -> str:
    """What the student reads for ``code``: what is wrong (and ``note``, what the code shows of it), the
    smallest case, a hint where the evidence has one, and the concept (``concept``, where the code's own
    does not fit). ``method`` is what the student wrote for ``target``, where the course names it (by
    default the exercise's name for it)."""
    method = method or method_name(target)
    error = describe_error(evidence.error) if evidence is not None and evidence.error else detail
    if not detail and evidence is not None and evidence.error:
        detail = str(evidence.error.get("message", ""))
    entry = CODES[code]
    what = entry.what.format(method=method, error=error, detail=detail)
    case, hint = "", ""
    if evidence is not None and evidence.error:
        case = raising_case(evidence)
        if evidence.error.get("type") == "RecursionError":
            hint = recursion_hint(evidence)
    elif evidence is not None:
        case = explain_case(counterexample(evidence, focus))
        if code == "wrong-local-grad" and without_out_grad(evidence, target):
            hint = (f"Every gradient {method} passed is its bare local derivative: you forgot `out.grad` "
                    "(multiply the local derivative by it).")
    if concept is None and code == "load-error":
        concept = load_concept(detail or error)
    return " ".join(part for part in (what, note, case, hint, concept or entry.concept) if part)
