"""The engine corpus says of each folder what its code does.

``tests/engines/check_engines.py`` runs every family's course, blank and learners, file by file in fresh processes,
against finite differences and right passes over their own steps, driven by each course's ``micrograde.toml``; a
verdict of ``expected.toml`` that disagrees with the code is a wrong ground truth.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest
from helpers import ROOT

ENGINES = ROOT / "tests" / "engines"
CHECKER = ENGINES / "check_engines.py"
FAMILIES = sorted(p.parent.name for p in ENGINES.glob("*/expected.toml"))


def test_the_corpus_has_its_seven_families():
    assert FAMILIES == ["dataclass_node", "function_ctx", "module_functions", "numpy_tensor", "returned_grads",
                        "tape_engine", "variable_pairs"]


@pytest.mark.parametrize("family", FAMILIES)
def test_every_verdict_agrees_with_what_the_code_does(family):
    done = subprocess.run([sys.executable, str(CHECKER), family], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    lines = done.stdout.strip().splitlines()
    assert lines[-1] == "every verdict agrees with what the code does"
    assert len(lines) >= 1 + 2 + 8  # course, blank, at least eight learners, the last line


def test_a_wrong_verdict_and_a_misplaced_line_are_caught(tmp_path, capsys):
    """The checker can fail: a learner's wrong local derivative said full, and a diagnosis pointing at a comment."""
    sys.path.insert(0, str(ENGINES))
    import check_engines

    family = tmp_path / "variable_pairs"
    shutil.copytree(ENGINES / "variable_pairs", family)
    verdicts = (family / "expected.toml").read_text(encoding="utf-8")
    said = """full = ["add", "mul", "pow", "sin", "cos", "exp", "backward"]
diagnoses = [{ target = "sub", code = "wrong-local-grad", file = "revmode.py", line = 47 }]"""
    assert said in verdicts
    verdicts = verdicts.replace(said, 'full = ["add", "mul", "sub", "pow", "sin", "cos", "exp", "backward"]')
    misplaced = '{ target = "backward", code = "wrong-order", file = "revmode.py", line = 95 }'
    assert misplaced in verdicts
    verdicts = verdicts.replace(misplaced, misplaced.replace("line = 95", "line = 91"))  # the blank line above
    (family / "expected.toml").write_text(verdicts, encoding="utf-8")
    with ThreadPoolExecutor(max_workers=2) as pool:
        assert check_engines.check_family(family, pool) is False
    out = capsys.readouterr().out
    assert "variable_pairs/learners/chidi: DISAGREES: sub: said full, but wrong-local-grad" in out
    assert "variable_pairs: SHAPE: variable_pairs/learners/ines: backward wrong-order at revmode.py:91 is no " \
           "statement ('')" in out
