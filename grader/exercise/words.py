"""What a course's engine calls a node's parts, for the messages a learner reads and for reading their code.

micrograd names a node's number ``data``, its gradient ``grad``, its operands ``_prev`` and its chain-rule
step ``_backward``; the diagnoses' wording (``grader.diagnosis.codes``) and the reading of a learner's code
for the statement at fault (``grader.diagnosis.blame``) are written in those words. A course whose engine
names them otherwise (``[engine]``: ``derivative``, ``history.inputs``, ``chain_rule``) has both speak its
engine's words instead: the learner reads ``a.derivative``, and an update of ``p.derivative`` is the one
read as a gradient update.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from grader.exercise import forms
from grader.exercise.engine import ENGINE_KEYS, Engine
from grader.exercise.names import CHILDREN_NAMES


@dataclass(frozen=True)
class Words:
    value: str = "data"
    grad: str = "grad"
    step: str = "_backward"
    operands: tuple[str, ...] = CHILDREN_NAMES  # the first is the one messages name
    backward: str = "backward"  # what starts the pass: the class's method, or a function of its module
    local: str | None = None  # where a node keeps (operand, local derivative) pairs, in an engine that keeps them
    functions: tuple[tuple[str, str], ...] = ()  # the engine's module functions that apply an op: (name, op)

    def speak(self, text: str) -> str:
        """``text``, written in micrograd's words, in the engine's."""
        if self == MICROGRAD:
            return text
        for old, new in ((r"\.data\b", f".{self.value}"), (r"\.grad\b", f".{self.grad}"),
                         (r"\b_backward\b", self.step), (r"\b_prev\b", self.operands[0]),
                         (r"\bbackward\(\)", f"{self.backward}()")):
            text = re.sub(old, new.replace("\\", r"\\"), text)
        return text


MICROGRAD = Words()


def words_of(engine: Engine) -> Words:
    """The words of a course's engine: the last attribute of each of its forms that reads one (``node.derivative``:
    ``derivative``), micrograd's where the course says nothing."""
    def last(key: str) -> str | None:
        text = dict(engine.texts).get(key)
        if not text:
            return None
        names, path = ENGINE_KEYS[key]
        tree = forms.parse(text, key, names, "node" if path else None)
        if key == "step":
            tree = tree[1] if tree[0] == "call" else tree
        found = forms.attribute_path(tree, "node")
        return found[-1] if found else None

    operands = last("operands") or last("local")
    functions = []
    for op, text in engine.calls:
        tree = forms.parse(text, op, ("a", "b", "k"))
        if tree[0] == "call" and tree[1][0] == "name" and all(a[0] == "name" and a[1] in ("a", "b", "k")
                                                              for a in tree[2]):
            functions.append((tree[1][1], op))  # ``exp(a)``, ``add(a, b)``: a function of the engine's module
    return Words(last("value") or "data", last("grad") or "grad", last("step") or "_backward",
                 (operands, *CHILDREN_NAMES) if operands else CHILDREN_NAMES,
                 engine.backward_function() or "backward", last("local"), tuple(functions))
