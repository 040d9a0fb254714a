"""The sandbox's layers as the grading process reads them: typed results, and the tamper-proof rule on them.

The child's steps (``grader/child/inside/confinement.py``, ``LAYERS``) and the grading process's
readings (``grader/child/layers.py``, ``Confinement``) name the same layers in the same order; a result
the child garbles is a layer that did not hold; and the rule gives tamper-proof exactly for the
combinations ``docs/security.md`` states, tried over every combination of the layers' results.
"""

from __future__ import annotations

import ast
import dataclasses
import itertools

from helpers import ROOT

from grader.child import layers
from grader.child.layers import Confinement, FileRules, Privileges, Result

READ_AS_ROOT = 1 << 2


def child_layers() -> list[str]:
    """The names in ``LAYERS`` of the child's confinement module, in order, read from its source (it runs
    only in the child, which the grading process never imports)."""
    tree = ast.parse((ROOT / "grader" / "child" / "inside" / "confinement.py").read_text(encoding="utf-8"))
    [assigned] = [node.value for node in tree.body if isinstance(node, ast.Assign)
                  and [getattr(t, "id", None) for t in node.targets] == ["LAYERS"]]
    return [step.elts[0].value for step in assigned.elts]


def test_the_child_takes_the_layers_the_grading_process_reads_in_the_same_order():
    assert child_layers() == [f.name for f in dataclasses.fields(Confinement)]


def test_a_garbled_result_is_a_layer_that_did_not_hold():
    read = Confinement.read({"filesystem": "not confined (EPERM)", "user": {"who": 7, "capabilities": True},
                             "no_new_privs": {"held": 1}, "landlock": {"held": True, "abi": "7"},
                             "seccomp": ["held"]})
    assert read.filesystem == Result(False, "not confined (EPERM)")
    assert read.user == Privileges()  # neither a name nor a mask: unknown, capabilities kept
    assert read.no_new_privs.held is False and read.seccomp.held is False  # 1 and a list are not True
    assert read.landlock == FileRules(held=True, abi=0) and not read.landlocked
    assert Confinement.read(None) == Confinement() and Confinement().filesystem.detail == layers.UNKNOWN
    assert read.tamper_proof(isolated=True) is False and read.tamper_proof(isolated=False) is False


def test_tamper_proof_is_the_filter_and_a_closed_file_system():
    for isolated, (root, filtered, privileges, abi, capabilities) in itertools.product((True, False), itertools.product(
            (True, False), (True, False), (True, False), (0, 4), (0, READ_AS_ROOT, 1 << 21, -1))):
        held = Confinement(filesystem=Result(root, "minimal root" if root else "shared with the grader"),
                           user=Privileges(held=capabilities == 0, who="nobody", capabilities=capabilities),
                           no_new_privs=Result(privileges), landlock=FileRules(abi > 0, abi=abi),
                           seccomp=Result(filtered))
        closed_by_root = isolated and root and capabilities == 0
        closed_by_landlock = abi > 0 and capabilities in (0, READ_AS_ROOT)
        expected = filtered and privileges and (closed_by_root or closed_by_landlock)
        assert held.tamper_proof(isolated) is expected, (isolated, root, filtered, privileges, abi, capabilities)


def test_the_reports_section_says_what_each_layer_held():
    held = {"filesystem": {"held": False, "detail": "shared with the grader"},
            "user": {"held": False, "who": "nobody, reading files as root", "capabilities": READ_AS_ROOT},
            "no_new_privs": {"held": True}, "landlock": {"held": True, "abi": 4, "detail": ""},
            "seccomp": {"held": True}}
    section = layers.section(held, "limits", "no namespaces here", False, {})
    assert section["tamper_proof"] is True and section["landlock"] == "ABI 4"
    assert section["capabilities"] == "reading files as root, within Landlock's rules"
    assert section["filesystem"].startswith("Landlock") and section["network"] == "refused by seccomp"
    held["landlock"] = {"held": False, "abi": 0, "detail": "the kernel has no Landlock (ENOSYS)"}
    section = layers.section(held, "limits", "no namespaces here", False, {})
    assert section["tamper_proof"] is False and section["capabilities"] == "kept"
    assert section["landlock"] == "not applied: the kernel has no Landlock (ENOSYS)"
    assert section["filesystem"] == "shared with the grader; blocked in Python only"
