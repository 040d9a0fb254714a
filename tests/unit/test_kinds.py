"""The table of kinds of target (``grader.exercise.kinds``): every kind has its behaviour in every layer, and
every code a target is given is one its kind declares."""

from __future__ import annotations

import json
import tomllib

import golden
import pytest
from helpers import CORPUS, ROOT

from grader.child.inside.protocol import HANDLERS
from grader.diagnosis.codes import CODES
from grader.diagnosis.target import RULES
from grader.exercise import ops
from grader.exercise.config import GIVEN_TARGETS, default, load
from grader.exercise.kinds import KINDS, LANES, ROLES, kind_of
from grader.judging.kinds import PREPARE


@pytest.mark.parametrize("name", sorted(KINDS))
def test_every_kind_has_its_behaviour_in_every_layer(name):
    kind = KINDS[name]
    assert name in PREPARE and name in RULES
    assert kind.request in HANDLERS, "the child answers its cases"
    assert kind.lane in LANES
    if kind.role is None:  # the part a target grades is named by one of its options
        option, what = kind.part
        assert option in {o.key for o in kind.options if o.required} and what in ("class", "function", "value")
    else:
        assert kind.role in ROLES
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
    courses = [default(), *(load(path) for path in sorted((ROOT / "tests" / "courses").glob("*.toml")))]
    kinds = {target.name: KINDS[target.kind] for config in courses for target in config.targets}
    kinds |= {name: kind_of(name) for name, _ in given if name not in kinds and name != "submission"}
    undeclared = sorted((target, code) for target, code in given
                        if target != "submission" and code not in kinds[target].codes)
    assert undeclared == [], json.dumps(undeclared)
    assert len(given) > 40


# The kinds whose parts are the scaffold's own: the value class's methods and train_step, stubbed by the scaffold.
SCAFFOLDS_OWN = {"op", "backward", "train"}


@pytest.mark.parametrize("name", sorted(KINDS))
def test_every_kind_has_its_stub_its_docs_and_a_course_that_grades_it(name):
    """A kind is whole only with a stub ``scaffold --config`` writes for it, its ``kind = "..."`` in
    docs/staff.md, and a course of the tests that grades a target of it (whose corpus then checks it)."""
    from grader.staff.stubs import STUBS

    assert name in STUBS or name in SCAFFOLDS_OWN, "scaffold --config writes no stub for it (grader/staff/stubs.py)"
    staff = (ROOT / "docs" / "staff.md").read_text(encoding="utf-8")
    # (the scaffold's own kinds are named in one sentence: `kind = "op"`, `"backward"` and `"train"` may be written)
    assert f'kind = "{name}"' in staff or (name in SCAFFOLDS_OWN and f'`"{name}"`' in staff)
    courses = [*(ROOT / "tests").glob("courses/*.toml"), *(ROOT / "tests").glob("engines/*/micrograde.toml"),
               *(ROOT / "tests").glob("assignments/**/*.toml")]
    assert name in SCAFFOLDS_OWN or any(f'kind = "{name}"' in p.read_text(encoding="utf-8") for p in courses)
