"""The sandbox's layers as the grading process reads them: what each held, typed, and what that makes the score.

A layer is one step the child takes on itself before any submission code runs
(``LAYERS`` in ``grader/child/inside/confinement.py``, in order), and sends
back its result as plain data under the layer's name. Each result has its type
here (``Result`` and its kinds, one field of ``Confinement`` per layer, in the
same order), read defensively: a field the child did not send, or sent as
something else, is taken as not holding. The tamper-proof rule
(``Confinement.tamper_proof``) and the report's ``sandbox`` section
(``section``) read these results and nothing else, so a new layer is a step
there and a field here (``docs/internals.md``, "Adding a sandbox layer").
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

CAP_DAC_READ_SEARCH = 2
READ_AS_ROOT = 1 << CAP_DAC_READ_SEARCH  # the one capability a child may keep (see ``Privileges``)
UNKNOWN = "unknown (the child did not say)"
TYPES = {"bool": bool, "str": str, "int": int}


@dataclass(frozen=True)
class Result:
    """What one layer's step says: whether it holds, and why not."""

    held: bool = False
    detail: str = ""

    @classmethod
    def read(cls, raw: Any) -> Result:
        """The result the child sent (``raw``): each declared field taken where it has its declared type (a
        bool is no int here), its default elsewhere; a bare string is why the layer did not hold."""
        if isinstance(raw, str):
            return cls(detail=raw)
        if not isinstance(raw, dict):
            return cls(detail=UNKNOWN)
        kept = {f.name: raw[f.name] for f in dataclasses.fields(cls)
                if f.name in raw and type(raw[f.name]) is TYPES[str(f.type)]}
        return cls(**kept)


@dataclass(frozen=True)
class Privileges(Result):
    """``user``: who the child became, and the capabilities it kept (a mask; -1 when not known)."""

    who: str = "unknown"
    capabilities: int = -1


@dataclass(frozen=True)
class FileRules(Result):
    """``landlock``: the Landlock ABI the child restricted itself with (0: none)."""

    abi: int = 0


@dataclass(frozen=True)
class Confinement:
    """Every layer's result, in the order the child takes them (``confinement.LAYERS``)."""

    filesystem: Result = Result(detail=UNKNOWN)
    user: Privileges = Privileges()
    no_new_privs: Result = Result()
    landlock: FileRules = FileRules()
    seccomp: Result = Result()

    @classmethod
    def read(cls, held: Any) -> Confinement:
        """What the child said held (its ``init`` reply's ``confinement``), each layer by its declared type."""
        held = held if isinstance(held, dict) else {}
        return cls(**{f.name: type(f.default).read(held[f.name]) for f in dataclasses.fields(cls) if f.name in held})

    @property
    def filtered(self) -> bool:
        """The system-call filter holds, under ``no_new_privs`` (without which the kernel refuses it)."""
        return self.seccomp.held and self.no_new_privs.held

    @property
    def landlocked(self) -> bool:
        return self.landlock.held and self.landlock.abi > 0

    def tamper_proof(self, isolated: bool) -> bool:
        """Whether the kernel closed the file system, other processes and the network to the submission: the
        filter refused processes, sockets and signals, and either the minimal root of the namespaces left
        nothing else in view, without any capability, or Landlock allowed nothing else. A child that kept
        the right to read files as root (``CAP_DAC_READ_SEARCH``, where nobody cannot read the interpreter)
        is still closed by Landlock, which no capability lifts; its other use (opening files by handle) is
        refused by the filter."""
        capabilities = self.user.capabilities
        return self.filtered and ((isolated and self.filesystem.held and capabilities == 0)
                                  or (self.landlocked and capabilities & ~READ_AS_ROOT == 0))


def section(held: Any, mode: str, detail: str, isolated: bool, limits: dict) -> dict:
    """The report's ``sandbox`` section, from what the child said held (``held``, see ``Confinement``)."""
    layers = Confinement.read(held)
    capabilities = layers.user.capabilities
    if layers.filesystem.held:
        filesystem = "minimal root: the operating system and Python read-only, the working directory a sized tmpfs"
    elif layers.landlocked:
        filesystem = "Landlock: the Python a submission needs read-only, the working directory read-write"
    else:
        filesystem = f"{layers.filesystem.detail or 'unknown'}; blocked in Python only"
    return {
        "mode": mode,
        "tamper_proof": layers.tamper_proof(isolated),
        "limits": limits,
        "audit_hook": True,
        "processes_contained": isolated,
        "network": "none" if isolated else "refused by seccomp" if layers.filtered else "blocked in Python only",
        "filesystem": filesystem,
        "landlock": f"ABI {layers.landlock.abi}" if layers.landlocked
        else f"not applied: {layers.landlock.detail or 'unknown'}",
        "user": layers.user.who,
        "capabilities": "none" if capabilities == 0 else "reading files as root, within Landlock's rules"
        if layers.landlocked and capabilities == READ_AS_ROOT else "kept",
        "no_new_privs": layers.no_new_privs.held,
        "seccomp": layers.seccomp.held,
        "detail": detail,
    }
