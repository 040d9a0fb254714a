"""micrograde graded the way the platforms run it (``tests/support/platforms.py``): the same scores in every mode,
and a report that says which mode it was."""

from __future__ import annotations

import functools
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import platforms
import pytest
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
        # root's child becomes nobody; an ordinary user's is root of a user namespace, with no capability
        assert section["user"] == ("nobody" if any_platform.uid == 0 else "root of a user namespace")
    else:
        assert section["mode"] != "namespaces" and "not permitted" in section["detail"], section
        assert section["seccomp"] is True and section["no_new_privs"] is True
        if any_platform.name == "user":
            assert section["user"] == f"uid {any_platform.uid}"
    if any_platform.name == "docker-old":
        assert section["tamper_proof"] is False
    assert ("not tamper-proof" in result.stdout) is (section["tamper_proof"] is False)


PROBE = r"""
import ctypes, errno, json, os, sys
libc = ctypes.CDLL(None, use_errno=True)
calls = {"x86_64": {"unshare": 272, "setns": 308, "clone": 56, "clone3": 435},
         "aarch64": {"unshare": 97, "setns": 268, "clone": 220, "clone3": 435}}[os.uname().machine]
CLONE_NEWNET, SIGCHLD = 0x40000000, 17

def errno_of(result):
    return "ok" if result >= 0 else errno.errorcode[ctypes.get_errno()]

cloned = libc.syscall(calls["clone"], CLONE_NEWNET | SIGCHLD, 0, 0, 0, 0)
if cloned == 0:  # the clone went through, and this is the new process
    os._exit(0)
found = {
    "unshare": errno_of(libc.syscall(calls["unshare"], CLONE_NEWNET)),
    "setns": errno_of(libc.syscall(calls["setns"], os.open("/proc/self/ns/net", os.O_RDONLY), 0)),
    "clone a namespace": errno_of(cloned),
    "clone3": errno_of(libc.syscall(calls["clone3"], None, 0)),
    "landlock": errno_of(libc.syscall(444, None, 0, 1)),
}
pid = os.fork()
if pid == 0:
    os._exit(0)
found["fork"] = "ok" if os.waitpid(pid, 0)[1] == 0 else "failed"
print(json.dumps(found))
"""


@pytest.mark.parametrize("options", [[], ["--no-landlock"]], ids=["docker", "docker-old"])
def test_the_filter_refuses_what_docker_refuses(options):
    """What ``nonamespaces.py`` installs: namespaces refused as Docker's default profile refuses them
    (EPERM; clone3 ENOSYS, so that the C library falls back to clone), processes still started, and
    Landlock there unless the old engine is modelled."""
    result = subprocess.run([sys.executable, str(platforms.WRAPPER), *options, "--", sys.executable, "-c", PROBE],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout)
    landlock = found.pop("landlock")
    assert found == {"unshare": "EPERM", "setns": "EPERM", "clone a namespace": "EPERM", "clone3": "ENOSYS",
                     "fork": "ok"}
    assert (landlock == "ENOSYS") is bool(options), landlock  # without the filter the kernel answers an ABI
