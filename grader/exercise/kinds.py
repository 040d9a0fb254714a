"""Every kind of target a course can grade, described once: the fourth table, beside ops, codes and formats.

A *kind* is what a target is: an op of the class (``__add__``...), the class's
``backward``, a training function. It says

- which part of the submission it grades (its ``Role``: the class, the training
  function), found by the name the course gives that part;
- which child process runs its cases (its ``Lane``: the plain one, or the one
  given the grader's training engine) and which request the child answers for it
  (``request``, a handler of ``grader.child.inside.protocol``);
- which gradients its messages speak of (``focus``) and every diagnosis code its
  rules may give (``codes``, each in ``grader.diagnosis.codes``).

The layers above hold each kind's behaviour in one table each, keyed by the kind:
planning and judging its cases (``grader.judging.plan.PLANS``), the rules that
name its misconceptions (``grader.diagnosis.target.RULES``) and the statement a
diagnosis points at (``grader.diagnosis.blame``). ``tests/test_kinds.py`` checks
that every kind has its entry in each. Adding a kind of target is the recipe in
``docs/internals.md``.
"""

from __future__ import annotations

from dataclasses import dataclass

from grader.exercise import ops


@dataclass(frozen=True)
class Role:
    """A part of the submission that targets grade, found by the name the course gives it."""

    key: str  # how grading and the child refer to it: the part's name in the classic exercise
    what: str  # what the child accepts as it: "class" or "function"
    setting: str  # the ``[scaffold]`` key of the course configuration that names it

    def __str__(self) -> str:
        return self.key


VALUE = Role("Value", "class", "class")
TRAIN_STEP = Role("train_step", "function", "train_function")
ROLES = (VALUE, TRAIN_STEP)


@dataclass(frozen=True)
class Lane:
    """A child process of a grade, by what it is given beside the submission."""

    name: str
    training_engine: bool  # the grader's own engine and MLP, that a training function runs on


PLAIN = Lane("plain", training_engine=False)
TRAINING = Lane("training", training_engine=True)
LANES = (PLAIN, TRAINING)

# What may go wrong with any part whatever its kind: it is missing, it raises, it hangs, it needs a module
# that is not installed, or no node of the class can be made.
ANY = frozenset({"not-implemented", "crash", "timeout", "missing-module", "interface"})
# What may go wrong with the class's nodes, whatever is graded of them.
NODES = frozenset({"value-equality", "computed-grad"})


@dataclass(frozen=True)
class Kind:
    name: str
    role: Role
    lane: Lane
    request: str  # the child's handler for its cases
    focus: str  # what its messages compare: "both" (values and gradients) or "grad"
    codes: frozenset[str]  # every code its rules may give


KINDS: dict[str, Kind] = {kind.name: kind for kind in (
    Kind("op", VALUE, PLAIN, "op", "both", ANY | NODES | {
        "wrong-forward", "wrong-local-grad", "grad-overwrite", "constant-operand", "missing-child",
        "detached-backward", "relu-at-zero"}),
    Kind("backward", VALUE, PLAIN, "backward", "grad", ANY | NODES | {
        "missing-seed", "incomplete-traversal", "wrong-order", "repeated-visit", "no-accumulation"}),
    Kind("train", TRAIN_STEP, TRAINING, "train", "both", ANY | {
        "missing-zero-grad", "zero-grad-misplaced", "wrong-update", "missing-backward", "missing-update",
        "wrong-loss"}),
)}

# The targets that are not ops, by the kind of each (an op's kind is "op").
GIVEN_TARGETS = {"backward": "backward", "train_step": "train"}


def kind_of(target: str) -> Kind:
    """The kind of the target named ``target`` (``KeyError`` for a name that is no target)."""
    return KINDS["op"] if target in ops.OPS else KINDS[GIVEN_TARGETS[target]]
