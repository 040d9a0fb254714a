"""The student's files: stubs that teach, and a notebook that says exactly what the .py files say."""

from __future__ import annotations

import ast
import json

import pytest
from helpers import ROOT

EXERCISES = ROOT / "exercises"
STUBS = {"Value": ("__add__", "__mul__", "__pow__", "tanh", "backward"), "train_step": ()}


def definitions(source: str) -> dict[str, str]:
    """Top-level classes and functions of ``source``, by name, as source text."""
    tree = ast.parse(source)
    return {node.name: ast.get_source_segment(source, node) for node in tree.body
            if isinstance(node, (ast.ClassDef, ast.FunctionDef))}


def notebook_code() -> str:
    notebook = json.loads((EXERCISES / "micrograd.ipynb").read_text())
    cells = ["".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "code"]
    return "\n\n".join(c for c in cells if not c.startswith("!"))


def test_notebook_and_py_stubs_are_identical():
    in_py = {**definitions((EXERCISES / "engine.py").read_text()),
             **definitions((EXERCISES / "train.py").read_text())}
    in_notebook = definitions(notebook_code())
    for name in STUBS:
        assert in_notebook[name] == in_py[name], f"{name} differs between the notebook and the .py files"


@pytest.mark.parametrize("method", STUBS["Value"])
def test_each_stub_raises_and_teaches(method):
    namespace: dict = {}
    exec((EXERCISES / "engine.py").read_text(), namespace)
    Value = namespace["Value"]
    stub = getattr(Value, method)
    assert stub.__doc__ and len(stub.__doc__.split()) >= 15
    args = () if method in ("tanh", "backward") else (Value(2.0),)
    with pytest.raises(NotImplementedError):
        stub(Value(3.0), *args)


def test_train_step_stub_raises():
    namespace: dict = {}
    exec((EXERCISES / "train.py").read_text(), namespace)
    with pytest.raises(NotImplementedError):
        namespace["train_step"](None, [], [], 0.1)
    assert "before" in namespace["train_step"].__doc__


def test_given_operators_are_written_in_terms_of_the_stubs():
    source = definitions((EXERCISES / "engine.py").read_text())["Value"]
    for operator in ("__neg__", "__radd__", "__sub__", "__rsub__", "__rmul__", "__truediv__", "__rtruediv__"):
        assert f"def {operator}(" in source
    assert "+=" in source and "NotImplementedError" in source
