"""Run a command the way a platform without namespaces runs it: ``python nonamespaces.py [--user NAME]
[--no-landlock] -- COMMAND...``.

Docker's default seccomp profile, for a container without ``CAP_SYS_ADMIN``, answers ``unshare`` and
``setns`` with EPERM, ``clone`` with EPERM when its flags ask for a namespace, and ``clone3`` with ENOSYS
(a filter cannot read clone3's flags, which sit in memory; the C library then falls back to ``clone``).
This script installs the same refusals on itself (``PR_SET_NO_NEW_PRIVS`` and a classic-BPF seccomp
filter) and then ``exec``s the command, which inherits them, so that the command finds no namespaces by
itself, exactly as it would in a container. ``--no-landlock`` also answers ENOSYS to the three Landlock
system calls, as an old Docker engine or a kernel without Landlock does. ``--user`` first becomes that
user (no supplementary groups), for a grader run by an ordinary user whose user namespaces are refused
(Ubuntu since 23.10 and GitHub's ubuntu-24.04 runners restrict them). Run as root without ``--user``, the
command also loses ``CAP_SYS_PTRACE``, which Docker does not give a container's root by default: it may
then read the ``/proc`` entries of another uid's processes only as that uid.

It is test code and stands alone: nothing here imports the grader.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import pwd
import struct

PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
PR_CAPBSET_DROP, CAP_SYS_PTRACE = 24, 19
BPF_LD_W_ABS, BPF_JEQ_K, BPF_JSET_K, BPF_RET_K = 0x20, 0x15, 0x45, 0x06
SECCOMP_RET_ERRNO, SECCOMP_RET_ALLOW = 0x00050000, 0x7FFF0000
EPERM, ENOSYS = 1, 38
# CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET: what Docker's profile refuses in clone's flags
NAMESPACE_FLAGS = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000
# machine: (AUDIT_ARCH, unshare, setns, clone, clone3); the Landlock calls are 444-446 on both
MACHINES = {"x86_64": (0xC000003E, 272, 308, 56, 435), "aarch64": (0xC00000B7, 97, 268, 220, 435)}
LANDLOCK = (444, 445, 446)


def program(machine: str, landlock: bool) -> list[tuple[int, int, int, int]]:
    """The filter as ``(code, jt, jf, k)``; jumps are relative, so the verdicts sit at the end:
    ``allow``, ``eperm``, ``enosys``, counted back from there."""
    arch, unshare, setns, clone, clone3 = MACHINES[machine]
    enosys_calls = [clone3] + ([] if landlock else list(LANDLOCK))
    body: list[tuple[int, int | str, int | str, int]] = [
        (BPF_LD_W_ABS, 0, 0, 4),  # seccomp_data.arch
        (BPF_JEQ_K, 0, "allow", arch),  # another ABI: not what a container's profile is about
        (BPF_LD_W_ABS, 0, 0, 0),  # seccomp_data.nr
        (BPF_JEQ_K, "eperm", 0, unshare),
        (BPF_JEQ_K, "eperm", 0, setns),
        *[(BPF_JEQ_K, "enosys", 0, number) for number in enosys_calls],
        (BPF_JEQ_K, 0, "allow", clone),
        (BPF_LD_W_ABS, 0, 0, 16),  # the low half of clone's flags (args[0])
        (BPF_JSET_K, "eperm", "allow", NAMESPACE_FLAGS),
    ]
    verdicts = {"allow": SECCOMP_RET_ALLOW, "eperm": SECCOMP_RET_ERRNO | EPERM, "enosys": SECCOMP_RET_ERRNO | ENOSYS}
    at = {label: len(body) + i for i, label in enumerate(verdicts)}
    resolved = [(code, *(at[j] - index - 1 if isinstance(j, str) else j for j in (jt, jf)), k)
                for index, (code, jt, jf, k) in enumerate(body)]
    return resolved + [(BPF_RET_K, 0, 0, verdict) for verdict in verdicts.values()]


def refuse_namespaces(landlock: bool) -> None:
    """Install the filter on this process, for good (it passes to every process it becomes or starts)."""
    libc = ctypes.CDLL(None, use_errno=True)
    instructions = program(os.uname().machine, landlock)
    filters = b"".join(struct.pack("HBBI", *ins) for ins in instructions)
    buffer = ctypes.create_string_buffer(filters, len(filters))
    fprog = ctypes.create_string_buffer(struct.pack("HP", len(instructions), ctypes.addressof(buffer)))
    for call in ((PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), (PR_SET_SECCOMP, SECCOMP_MODE_FILTER, fprog, 0, 0)):
        if libc.prctl(*call) != 0:
            raise SystemExit(f"nonamespaces: prctl{call[:1]} failed: {os.strerror(ctypes.get_errno())}")


def become(name: str) -> None:
    """Become user ``name``, its group and no other: what a login as that user gives, minus the groups."""
    entry = pwd.getpwnam(name)
    os.setgroups([])
    os.setresgid(entry.pw_gid, entry.pw_gid, entry.pw_gid)
    os.setresuid(entry.pw_uid, entry.pw_uid, entry.pw_uid)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--user", help="run the command as this user")
    parser.add_argument("--no-landlock", action="store_true", help="answer ENOSYS to the Landlock calls too")
    parser.add_argument("command", nargs="+")
    args = parser.parse_args()
    if os.uname().machine not in MACHINES:
        raise SystemExit(f"nonamespaces: no filter for {os.uname().machine}")
    if args.user:
        become(args.user)
    elif os.geteuid() == 0 and ctypes.CDLL(None, use_errno=True).prctl(PR_CAPBSET_DROP, CAP_SYS_PTRACE, 0, 0, 0) != 0:
        raise SystemExit(f"nonamespaces: dropping CAP_SYS_PTRACE failed: {os.strerror(ctypes.get_errno())}")
    refuse_namespaces(landlock=not args.no_landlock)
    os.execvp(args.command[0], args.command)


if __name__ == "__main__":
    main()
