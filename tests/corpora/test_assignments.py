"""The real-assignment corpus says of each submission what its code does.

``tests/assignments/check_corpus.py`` runs every submission (numpy, no PyTorch) against the reference
engine and finite differences; a verdict that disagrees with the code is a wrong ground truth.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from helpers import ROOT

CHECKER = ROOT / "tests" / "assignments" / "check_corpus.py"


@pytest.mark.parametrize("assignment", ["karpathy_exercises", "dl_course_hw1", "tutorial_deep", "fairness"])
def test_every_verdict_agrees_with_what_the_code_does(assignment):
    done = subprocess.run([sys.executable, str(CHECKER), assignment], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]
    assert done.stdout.strip().endswith("every verdict agrees with what the code does")


def test_a_wrong_verdict_is_caught(tmp_path):
    """The checker can fail: a learner's grad-overwrite said to be right is reported."""
    sys.path.insert(0, str(CHECKER.parent))
    import check_corpus

    table = (CHECKER.parent / "karpathy_exercises" / "verdicts.toml").read_text()
    assert 'exp = { code = "grad-overwrite"' in table
    seen = check_corpus.observed("karpathy_exercises", "step_and_exp")
    assert seen["exp"][0] == "grad-overwrite"
    why = check_corpus.compare_part(CHECKER.parent / "karpathy_exercises", {"path": "step_and_exp.ipynb"}, "exp",
                                    {"locate": "Value.exp"}, "right", seen["exp"])
    assert why and "said right, but grad-overwrite" in why
