"""What the student reads: for each diagnosis, what is wrong, the smallest case, the concept.

Messages describe behaviour and ideas, never the code that fixes them.
"""

from __future__ import annotations

from grader.diagnosis.rules import UNUSABLE
from grader.exercise.cases import Case, TrainCase
from grader.exercise.ops import method_name
from grader.judging.judge import Verdict
from grader.report.graph import mermaid
from grader.report.model import Counterexample, fmt

WHAT = {
    "not-implemented": "{method} is not written yet: it still raises NotImplementedError, or is missing.",
    "crash": "{method} raised an exception: {error}.",
    "timeout": "{method} did not finish in time: {detail}.",
    "wrong-forward": "{method} computes the wrong value: the result's .data is wrong.",
    "wrong-local-grad": "{method} passes the wrong gradient to its operands, even when every node is used once.",
    "grad-overwrite": "{method} gets gradients right when each node is used once, "
                      "but wrong when a node is used twice: one contribution replaces the other.",
    "constant-operand": "{method} goes wrong when the other operand is a plain number, not a Value.",
    "missing-child": "{method} leaves an operand out of the result's children (_prev), so a backward "
                     "pass never reaches it and nothing below it gets a gradient.",
    "detached-backward": "{method} does not attach its _backward to the node it returns, so the result "
                         "never passes its gradient on as its own (or another node's is replaced).",
    "missing-seed": "The output's own gradient is not 1 when the backward pass starts from it, so "
                    "the wrong amount (or nothing) flows back.",
    "incomplete-traversal": "backward() never runs the _backward of some nodes, so their operands get no gradient.",
    "wrong-order": "backward() runs every node once, but some node passes its gradient on "
                   "before every node that uses it has added its share.",
    "repeated-visit": "backward() runs the _backward of some node more than once, so its gradient is passed on twice.",
    "no-accumulation": "backward() replaces gradient it should only add to: a second backward() "
                       "on a graph that shares leaves (or the pass itself) wipes out gradient already there.",
    "missing-zero-grad": "The first step is right, but later steps are not: "
                         "gradients from earlier steps pile up on top of the new ones.",
    "zero-grad-misplaced": "The parameters do not move: the gradients are gone by the time the update uses them.",
    "wrong-update": "The parameters move in the wrong direction or by the wrong amount (or the "
                    "gradients are changed instead of the parameters).",
    "missing-backward": "The parameters do not move: the backward pass is never run, so every gradient stays 0.",
    "missing-update": "The parameters do not move: nothing changes them after the backward pass.",
    "wrong-loss": "train_step returns the wrong loss: it should be the loss before the update, as a number.",
    "load-error": "The submission could not be loaded: {error}.",
    "interface": "micrograde cannot use your code the way the exercise defines it: {detail}.",
    "nested-definition": "Methods are missing from the class: {detail}.",
    "value-equality": "{method} goes wrong because two distinct nodes with the same value are taken for one.",
    "missing-module": "{method} uses a module that is not installed where micrograde runs: {error}.",
    "load-timeout": "Loading the submission took longer than its time limit: {detail}.",
    "relu-at-zero": "{method} goes wrong at exactly 0: its value must be 0 and its gradient "
                    "a number between 0 and 1 (micrograd uses 0).",
    "forbidden-import": "The submission uses an autograd library or the grader's own code ({detail}), "
                        "so its gradients cannot be its own: the score is 0.",
    "computed-grad": "{method} is not graded: Value's .grad (or .data) is computed each time it is read "
                     "instead of being a stored number, so reading it says nothing about the backward pass.",
}

CONCEPT = {
    "not-implemented": "Fill in the stub; its docstring says what it must do.",
    "crash": "Run the smallest failing case yourself and read the traceback.",
    "timeout": "Look for a loop that never ends or a recursion that never stops.",
    "wrong-forward": "The forward value is ordinary arithmetic on the operands' .data.",
    "wrong-local-grad": "Chain rule: each operand's gradient grows by (this op's local derivative "
                        "with respect to that operand) times out.grad. Check the derivative rule, and "
                        "that it is multiplied by out.grad.",
    "grad-overwrite": "A node used twice must receive both contributions: gradients accumulate (+=), "
                      "they are never assigned (=).",
    "constant-operand": "Turn a plain number into a Value before you use its .data; "
                        "check the reflected operators too (2 + a, 3 * a).",
    "missing-child": "The result's children are every operand it was computed from: the graph is "
                     "found through them, and backward() visits only what it can find.",
    "detached-backward": "Each op defines how its result passes gradient to its operands, and that "
                         "function belongs to the result node: the one the op returns.",
    "missing-seed": "The derivative of the output with respect to itself is 1: the backward pass starts "
                    "there, so it is set before any _backward runs.",
    "incomplete-traversal": "The graph is every node reachable through _prev, at any depth; backward() "
                            "must reach all of them.",
    "wrong-order": "Reverse topological order: list a node only after all of its _prev are listed, "
                   "then call _backward from the output back to the inputs.",
    "repeated-visit": "Keep track of the nodes already visited, so each is listed (and run) once.",
    "no-accumulation": "backward() only adds to .grad; resetting gradients is the training loop's job "
                       "(zero_grad), before the next backward pass.",
    "missing-zero-grad": "Gradients accumulate, so each step must start from zero: reset every "
                         "parameter's gradient before the backward pass.",
    "zero-grad-misplaced": "Reset gradients before the backward pass (or after the update), "
                           "never between the backward pass and the update.",
    "wrong-update": "Gradient descent moves each parameter's data against its gradient, by lr times the gradient.",
    "missing-backward": "Gradients exist only after a backward pass from the loss: run it after "
                        "resetting the gradients and before the update.",
    "missing-update": "A training step ends by moving every parameter's data against its gradient.",
    "wrong-loss": "Keep the loss of the forward pass and return its .data, computed before any parameter changes.",
    "load-error": "The file must run on its own without errors: try `python yourfile.py`.",
    "missing-module": "Graded code may only use the standard library (math, random): write the formula "
                      "with math instead, and keep other libraries for plots and demos.",
    "load-timeout": "Code at the top level runs every time the file is loaded: keep only definitions there.",
    "value-equality": "Nodes are distinct objects even when their values are equal: compare and hash them by "
                      "identity (leave __eq__ and __hash__ out), or keep visited nodes by id().",
    "nested-definition": "A method's def sits at the class's indentation level, not inside another "
                         "method: move these defs one level out.",
    "interface": "micrograde makes nodes as Value(x) for a number x and finds their operands in _prev (or "
                 "_children, prev, parents); train_step gets a model with model(x), model.parameters() and "
                 "model.zero_grad(), whose parameters have only .data and .grad.",
    "relu-at-zero": "relu has a kink at 0: there, take the gradient of one side (1 or 0) consistently, "
                    "without dividing by the input.",
    "forbidden-import": "Write the gradients yourself: that is the exercise.",
    "computed-grad": "Keep .data and .grad as plain attributes that hold numbers; the backward pass "
                     "is what fills in .grad, one _backward at a time.",
}


def describe_error(error: dict) -> str:
    where = f" (line {error['line']})" if error.get("line") else ""
    message = f": {error['message']}" if error.get("message") else ""
    return f"{error.get('type', 'an error')}{message}{where}"


def counterexample(verdict: Verdict, focus: str) -> Counterexample | None:
    """The report's view of a failing verdict."""
    if verdict.error is not None:
        return None
    case = verdict.case
    if isinstance(case, TrainCase):
        return Counterexample(case.label, {}, dict(verdict.expected), dict(verdict.actual), "reference")
    expression = case.label
    graph = mermaid(*verdict.graph) if verdict.graph else None
    drawing = verdict.graph or None
    if focus != "grad" and not verdict.forward_ok:
        return Counterexample(expression, case.values, {"data": verdict.expected_data},
                              {"data": verdict.actual_data}, "reference", graph, drawing)
    return Counterexample(expression, case.values, dict(verdict.expected), dict(verdict.actual),
                          verdict.oracle, graph, drawing)


def explain_case(example: Counterexample | None) -> str:
    """One sentence: the expression, its inputs, and the first value that came out wrong."""
    if example is None:
        return ""
    inputs = ", ".join(f"{k} = {fmt(v)}" for k, v in example.inputs.items())
    wrong = [k for k in example.expected if fmt(example.expected[k]) != fmt(example.actual.get(k))]
    key = wrong[0] if wrong else next(iter(example.expected), None)
    if key is None:
        return f"Smallest failing case: {example.expression}."
    label = "the value" if key == "data" else (key if " " in key else f"{key}.grad")
    oracle = {"both": "the reference engine and finite differences",
              "reference": "the reference engine",
              "finite-difference": "finite differences of your forward pass"}[example.oracle]
    given = f" with {inputs}" if inputs else ""
    return (f"Smallest failing case: {example.expression}{given}: expected {label} = "
            f"{fmt(example.expected[key])}, got {fmt(example.actual.get(key))} (checked against {oracle}).")


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


def message(code: str, target: str, evidence: Verdict | None, focus: str, detail: str = "") -> str:
    method = method_name(target)
    error = describe_error(evidence.error) if evidence is not None and evidence.error else detail
    if not detail and evidence is not None and evidence.error:
        detail = str(evidence.error.get("message", ""))
    what = WHAT[code].format(method=method, error=error, detail=detail)
    case, hint = "", ""
    if evidence is not None and evidence.error:
        case = raising_case(evidence)
        if evidence.error.get("type") == "RecursionError":
            hint = recursion_hint(evidence)
    elif evidence is not None:
        case = explain_case(counterexample(evidence, focus))
    return " ".join(part for part in (what, case, hint, CONCEPT[code]) if part)
