"""A backward pass that lists a node before its operands fails a hand-picked case on every run,
whatever container holds the operands and whichever way the pass walks them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import ROOT, micrograde

SOLUTION = (Path(__file__).parents[1] / "corpus" / "solution.py").read_text()

STACK = """        stack = [self]
        while stack:
            v = stack.pop()
            if v not in visited:
                visited.add(v)
                topo.append(v)
                stack.extend(v._prev)
"""
RECURSIVE = """        def build_topo(v):
            if v not in visited:
                visited.add(v)
                topo.append(v)
                for child in v._prev:
                    build_topo(child)

        build_topo(self)
"""
ORIGINAL = """        def build_topo(v):
            if v not in visited:
                visited.add(v)
                for child in v._prev:
                    build_topo(child)
                topo.append(v)

        build_topo(self)
"""


@pytest.mark.parametrize("container", ["set", "tuple", "list"])
@pytest.mark.parametrize("walk", [STACK, RECURSIVE], ids=["explicit-stack", "recursive"])
def test_a_node_listed_before_its_operands_fails_a_hand_picked_case(tmp_path, container, walk):
    source = SOLUTION.replace(ORIGINAL, walk).replace("for node in reversed(topo):", "for node in topo:")
    source = source.replace("self._prev = set(_children)", f"self._prev = {container}(_children)")
    path = tmp_path / "engine.py"
    path.write_text(source)
    course = ROOT / "tests" / "courses" / "backward-only.toml"
    result = micrograde("grade", str(path), "--format", "json", "--config", str(course))
    report = json.loads(result.stdout)
    statuses = {c["id"]: c["status"] for c in report["checks"] if c["target"] == "backward"}
    assert statuses["backward.shared-node"] == "failed"
    [diagnosis] = [d for d in report["diagnoses"] if d["target"] == "backward"]
    assert diagnosis["code"] == "wrong-order"
    assert diagnosis["line"] == next(n for n, line in enumerate(source.splitlines(), 1)
                                     if line.strip() == "topo.append(v)")
