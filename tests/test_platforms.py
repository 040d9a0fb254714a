"""micrograde graded the way the platforms run it (``tests/platforms.py``): the same scores in every mode,
and a report that says which mode it was."""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path

from helpers import SOLUTION

from grader.grade import Options, grade

# One real bug: __add__ overwrites the gradient instead of adding to it.
BUGGY = SOLUTION.replace("self.grad += 1.0 * out.grad", "self.grad = 1.0 * out.grad").replace(
    "other.grad += 1.0 * out.grad", "other.grad = 1.0 * out.grad")


@functools.cache
def deserved(source: str) -> dict:
    """``source``'s report graded in this test process, as the rest of the suite grades: the scores
    every platform must give too."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "work.py"
        path.write_text(source)
        return grade(path, Options(timeout=10.0)).to_json()


def verdict(report: dict) -> tuple:
    """What a grade decides: the score of each target and the diagnosis codes."""
    return (report["score"], {t: s["score"] for t, s in report["targets"].items()},
            sorted((d["target"], d["code"]) for d in report["diagnoses"]))


def test_every_mode_gives_the_same_scores(any_platform, workspace):
    for name, source in (("solution", SOLUTION), ("buggy", BUGGY)):
        report, _ = any_platform.grade(workspace / name, source)
        assert verdict(report) == verdict(deserved(source)), (any_platform.name, name)
    assert verdict(deserved(SOLUTION))[0] == 100.0 and ("add", "grad-overwrite") in verdict(deserved(BUGGY))[2]


def test_each_mode_finds_its_sandbox_by_itself(any_platform, workspace):
    """No ``MICROGRADE_SANDBOX`` anywhere: in a container or as a user whose user namespaces are refused,
    micrograde finds no namespaces, and a report without them warns that it is not tamper-proof
    unless another layer closed the machine to the submission."""
    report, result = any_platform.grade(workspace, SOLUTION)
    section = report["sandbox"]
    if any_platform.name == "namespaces":
        assert section["mode"] == "namespaces" and section["tamper_proof"] is True
        assert section["user"] == "nobody"
    else:
        assert section["mode"] != "namespaces" and "not permitted" in section["detail"], section
        assert section["seccomp"] is True and section["no_new_privs"] is True
        if any_platform.name == "user":
            assert section["user"] == f"uid {any_platform.uid}"
    if any_platform.name == "docker-old":
        assert section["tamper_proof"] is False
    assert ("not tamper-proof" in result.stdout) is (section["tamper_proof"] is False)
