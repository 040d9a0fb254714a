"""The table of kinds of target (``grader.exercise.kinds``): every kind has its behaviour in every layer, and
every code a target is given is one its kind declares."""

from __future__ import annotations

import json
import tomllib

import golden
import pytest
from helpers import CORPUS

from grader.child.inside.protocol import HANDLERS
from grader.diagnosis.codes import CODES
from grader.diagnosis.target import RULES
from grader.exercise import ops
from grader.exercise.config import GIVEN_TARGETS
from grader.exercise.kinds import KINDS, LANES, ROLES, kind_of
from grader.judging.kinds import PREPARE


@pytest.mark.parametrize("name", sorted(KINDS))
def test_every_kind_has_its_behaviour_in_every_layer(name):
    kind = KINDS[name]
    assert name in PREPARE and name in RULES
    assert kind.request in HANDLERS, "the child answers its cases"
    assert kind.role in ROLES and kind.lane in LANES
    assert kind.codes <= set(CODES), sorted(kind.codes - set(CODES))
    assert kind.focus in ("both", "grad")


def test_every_target_has_a_kind():
    assert {kind_of(op).name for op in ops.OPS} == {"op"}
    assert {name: kind_of(name).name for name in GIVEN_TARGETS} == GIVEN_TARGETS
    with pytest.raises(KeyError):
        kind_of("softmax")


def test_every_code_given_to_a_target_is_one_its_kind_declares():
    """Over every corpus report (mutants, learner-style code, courses), and every mutant's expectation."""
    mutants = tomllib.loads((CORPUS / "mutants.toml").read_text())["mutant"]
    given = {(target, code) for m in mutants for target, codes in m["expect"].items() for code in codes}
    given |= {(d["target"], d["code"]) for report in golden.kept().values() for d in report["diagnoses"]}
    undeclared = sorted((target, code) for target, code in given
                        if target != "submission" and code not in kind_of(target).codes)
    assert undeclared == [], json.dumps(undeclared)
    assert len(given) > 40
