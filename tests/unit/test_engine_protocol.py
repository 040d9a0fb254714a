"""The engine protocol: how a course describes its engine (``[engine]``, ``[ops]``), and what micrograde finds alone.

The seven families of ``tests/engines/`` are graded whole by ``test_engines.py``; here, each part of the protocol on
its own: the forms and their one-line errors, a description read back to the same configuration, an engine of
another shape graded with no description at all (and what it was assumed to be said), an op graded under a name
of its own at a tutorial's forward-only step, and comparisons.
"""

from __future__ import annotations

import json

import pytest
from helpers import ROOT, micrograde

from grader import Options, grade_file
from grader.errors import ConfigError
from grader.exercise import config
from grader.exercise.forms import parse as parse_form

FUNCTION_CTX = ROOT / "tests" / "engines" / "function_ctx"


@pytest.mark.parametrize(("text", "said"), [
    ("node.__class__", "Python's own machinery"),
    ("lambda node: node.data", "lambda syntax"),
    ("[p for p in node.parents]", "listcomp syntax"),
    ("f(*node.parents)", "unpacks arguments"),
    ("node.data +", "is not a Python expression"),
    ("", "a short Python expression on one line"),
])
def test_a_form_that_is_no_step_of_an_engine_is_refused_naming_its_key(text, said):
    with pytest.raises(ConfigError) as refused:
        parse_form(text, "micrograde.toml [engine] value", ("node",), "node")
    assert said in str(refused.value) and str(refused.value).startswith("micrograde.toml [engine] value")


def test_a_bare_attribute_path_is_one_of_the_node():
    assert parse_form("history.inputs", "k", ("node",), "node") == parse_form("node.history.inputs", "k", ("node",))


@pytest.mark.parametrize(("tables", "said"), [
    ({"engine": {"colour": "red"}}, "[engine]: unknown key 'colour'"),
    ({"engine": {"grad_on": "roots"}}, "[engine] grad_on: expected \"all\" or \"leaves\""),
    ({"engine": {"step": "node.chain_rule(grad)", "local": "node.parents"}}, "step and local both say"),
    ({"engine": {"leaf": "Scalar(2.0)"}}, "does not use x"),
    ({"engine": {"backward": "backpropagate(1.0)"}}, "does not use out"),
    ({"ops": {"lt": {"formula": "a - b"}}}, "is a comparison micrograde knows"),
    ({"ops": {"cosh": {"call": "a.cosh()"}}}, "give its formula of a (and b)"),
    ({"ops": {"mul": {"call": "Mul.apply(x, y)"}}}, "does not use a, the op's first operand"),
    ({"ops": {"mul": {"written": "my mul"}}}, "written: expected the name of the class or function"),
    ({"targets": {"add_forward": {"op": "conv", "points": 1}}}, "op: 'conv' is not an op micrograde knows"),
])
def test_a_wrong_engine_description_is_one_line_naming_its_key(tables, said):
    with pytest.raises(ConfigError) as refused:
        config.parse({"targets": {"add": {"points": 1}}, **tables}, "course.toml")
    assert said in str(refused.value) and "\n" not in str(refused.value)


def test_a_described_engine_reads_back_to_the_same_configuration(tmp_path):
    """What ``micrograde template`` and the notebooks carry: the course file written back from the configuration
    is the very same configuration (the same hash), [engine] and [ops] with it."""
    course = config.load(FUNCTION_CTX / "micrograde.toml")
    written = tmp_path / "micrograde.toml"
    written.write_text(config.as_toml(config.tables(course), "read back"), encoding="utf-8")
    again = config.load(written)
    assert again.sha256 == course.sha256 and again.engine == course.engine
    assert course.sha256 != config.default().sha256


def test_an_engine_of_another_shape_is_graded_with_no_description_and_what_was_assumed_is_said(tmp_path):
    """tinydiff's answer key, with a configuration that names only its class: micrograde finds the history record
    that holds the operands, the gradient kept as .derivative and the chain_rule step by watching the engine, gives
    full marks, and says once what it assumed."""
    course = tmp_path / "course.toml"
    course.write_text('[scaffold]\nclass = "Scalar"\n\n[targets.mul]\npoints = 10\n[targets.neg]\npoints = 5\n'
                      '[targets.backward]\npoints = 10\n', encoding="utf-8")
    report = grade_file(FUNCTION_CTX / "course", Options(config=config.load(course))).to_json()
    assert report["score"] == report["max_score"] == 25.0, report["diagnoses"]
    [assumed] = [w for w in report["warnings"] if "found this by watching your code" in w]
    assert ".history.inputs" in assumed and ".derivative" in assumed and ".chain_rule(grad)" in assumed


FORWARD_ONLY = '''class Value:
    """Exercise 2: the forward pass only (the gradients come in Exercise 4)."""

    def __init__(self, data):
        self.data = data

    def __add__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        return Value(self.data {add} other.data)

    def __radd__(self, other):
        return self + other
'''


@pytest.mark.parametrize(("add", "score"), [("+", 5.0), ("-", 0.0)])
def test_an_op_is_graded_under_a_name_of_its_own_on_an_engine_with_no_backward_yet(tmp_path, add, score):
    course = tmp_path / "course.toml"
    course.write_text('[engine]\noperands = ""\n\n[targets.add_forward]\nop = "add"\npoints = 5\n'
                      'off = ["local-grad", "reused-node", "generated"]\n', encoding="utf-8")
    learner = tmp_path / "step2.py"
    learner.write_text(FORWARD_ONLY.format(add=add), encoding="utf-8")
    report = grade_file(learner, Options(config=config.load(course))).to_json()
    assert report["targets"]["add_forward"]["score"] == score
    assert [(d["target"], d["code"], d["line"]) for d in report["diagnoses"]] == (
        [] if score else [("add_forward", "wrong-forward", 9)])
    assert {c["id"] for c in report["checks"]} == {"add_forward.forward", "add_forward.constant-operand"}


COMPARING = '''
    def __lt__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        return {result}
'''


@pytest.mark.parametrize(("result", "code"), [
    ("self.data < other.data", None),  # a truth value: right, with no gradient to give
    ("Value(1.0 if self.data < other.data else 0.0)", None),
    ("Value(1.0 if self.data > other.data else 0.0)", "wrong-forward"),
])
def test_a_comparison_gives_one_or_zero_as_a_node_or_a_truth_value(tmp_path, result, code):
    solution = (ROOT / "tests" / "corpus" / "solution.py").read_text(encoding="utf-8")
    learner = tmp_path / "engine.py"
    learner.write_text(solution.replace("\n    def __add__", COMPARING.format(result=result) + "\n    def __add__", 1),
                       encoding="utf-8")
    course = tmp_path / "course.toml"
    course.write_text("[targets.lt]\npoints = 6\n[targets.add]\npoints = 4\n", encoding="utf-8")
    done = micrograde("grade", str(learner), "--config", str(course), "--format", "json")
    report = json.loads(done.stdout)
    assert [d["code"] for d in report["diagnoses"]] == ([code] if code else [])
    assert (report["targets"]["lt"]["score"] == 6.0) is (code is None)
