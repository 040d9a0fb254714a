"""The kernel's side of confining a submission, applied by the child to itself.

This module runs inside the child process (its source is sent with the
``init`` request and executed there, before any submission code), so it
imports nothing but the standard library. The grading process decides the
``plan`` (see ``grader.child.sandbox``); the child carries it out in this order,
each step needing the privileges the next one gives up:

1. with namespaces: a new, minimal root filesystem (``new_root``): an empty
   tmpfs holding read-only binds of the operating system and the Python
   installation only, a sized tmpfs as the working directory, the copied
   submission read-only inside it, a fresh ``/proc`` for the child's own PID
   namespace and a tiny ``/dev``. The grader's checkout, virtualenvs other than
   the interpreter's, other students' submissions, batch output and caches are
   not hidden: they are simply not there. Where the interpreter's own
   site-packages hold the grader or the reference engine, those directories
   are covered by empty read-only mounts;
2. no privileges (``drop_privileges``): real root becomes ``nobody`` (keeping
   only the right to read files where ``nobody`` cannot read the interpreter);
   root of a user namespace keeps its uid but loses every capability, for good
   (securebits locked, bounding set emptied);
3. ``PR_SET_NO_NEW_PRIVS``, so no executable can give any of it back;
4. Landlock (``restrict_files``, by ``landlock``; without namespaces in two
   layers, see ``allowlist``), with or without namespaces:
   the child and all it could start may read only the shared libraries, the
   interpreter, its standard library and the site-packages entries a submission
   may import (not the grader's, the reference engine's or a forbidden
   library's), its own ``/proc`` entry and ``/dev/null`` and its kind, and
   write only in its working directory; no TCP, no signal or abstract Unix
   socket beyond itself, as far as the kernel's ABI goes. No capability lifts
   it, so a child that reads files as root (step 2) reads only these;
5. a seccomp filter (``seccomp_program``) refusing the system calls no
   solution needs and every escape needs: mounting, namespaces, tracing,
   keyrings, BPF, new processes and programs, sockets, signals to any other
   process (``kill`` and its kind, and ``fcntl`` making another process a
   file's owner, to which the kernel sends its I/O signals), another
   process's priority (``setpriority``), device nodes
   and FIFOs, ownership, permission bits (which
   Landlock does not govern) and extended attributes, truncating a file by
   its name (which Landlock before ABI 3 does not govern), allocating a
   file's disk at once (``fallocate``: faster than the grading process
   measures the working directory without namespaces), real-time
   scheduling, leaving the cores the grader gave it, raising resource limits.

Steps 2 to 5 also apply without namespaces (``MICROGRADE_SANDBOX=none`` or a
machine without them), as far as the kernel allows. ``apply`` reports which
steps held, and the grading process says in the report whether all did.
"""

import ctypes
import os
import struct
import sys

from . import landlock
from .allowlist import DEVICES, elsewhere, readable

NOBODY = 65534

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT = 1, 2, 4, 8, 32
MS_NOATIME, MS_NODIRATIME, MS_BIND, MS_REC, MS_PRIVATE, MS_RELATIME = 1024, 2048, 4096, 16384, 1 << 18, 1 << 21
MNT_DETACH = 2
# statvfs flags of a mount that a remount inside a user namespace must keep (else EPERM)
LOCKED_FLAGS = ((os.ST_NOSUID, MS_NOSUID), (os.ST_NODEV, MS_NODEV), (os.ST_NOEXEC, MS_NOEXEC),
                (os.ST_NOATIME, MS_NOATIME), (os.ST_NODIRATIME, MS_NODIRATIME), (os.ST_RELATIME, MS_RELATIME))

PR_SET_PDEATHSIG, PR_CAPBSET_DROP, PR_SET_SECUREBITS, PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP = 1, 24, 28, 38, 22
PR_SET_DUMPABLE = 4
SIGKILL = 9
PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
SECCOMP_MODE_FILTER = 2
# SECBIT_NOROOT, NO_SETUID_FIXUP, KEEP_CAPS and NO_CAP_AMBIENT_RAISE, each with its lock
LOCKED_SECUREBITS = 0b11111111
CAPABILITY_VERSION_3 = 0x20080522
CAP_DAC_READ_SEARCH = 2

# Classic BPF as seccomp reads it: struct seccomp_data {int nr; u32 arch; u64 ip; u64 args[6];}
BPF_LD_W_ABS, BPF_JEQ_K, BPF_JGE_K, BPF_JSET_K, BPF_RET_K = 0x20, 0x15, 0x35, 0x45, 0x06
SECCOMP_RET_KILL_PROCESS, SECCOMP_RET_ERRNO, SECCOMP_RET_ALLOW = 0x80000000, 0x00050000, 0x7FFF0000
EPERM, ENOSYS = 1, 38
X32_SYSCALL_BIT = 0x40000000
CLONE_THREAD = 0x00010000
CLONE_NAMESPACES = 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000 | 0x00020000

# Refused outright: what escapes, persists, spies or hogs, and no solution needs.
REFUSED = (
    "mount", "umount2", "pivot_root", "chroot", "unshare", "setns", "fsopen", "fsconfig", "fsmount",
    "fspick", "move_mount", "open_tree", "mount_setattr", "ptrace", "process_vm_readv", "process_vm_writev",
    "kcmp", "pidfd_open", "pidfd_send_signal", "pidfd_getfd", "bpf", "perf_event_open", "userfaultfd",
    "keyctl", "add_key", "request_key", "fork", "vfork", "execve", "execveat", "socket", "socketpair",
    "mknod", "mknodat", "chown", "fchown", "lchown", "fchownat", "chmod", "fchmod", "fchmodat", "fchmodat2",
    "truncate", "fallocate", "setxattr", "lsetxattr", "fsetxattr",
    "removexattr", "lremovexattr", "fremovexattr", "sched_setscheduler", "sched_setparam", "sched_setattr",
    "sched_setaffinity", "ioprio_set", "setrlimit", "io_uring_setup", "io_uring_enter", "io_uring_register",
    "memfd_create", "memfd_secret", "shmget", "msgget", "semget", "mq_open", "open_by_handle_at", "name_to_handle_at",
    "quotactl",
    "acct", "swapon", "swapoff", "reboot", "kexec_load", "kexec_file_load", "init_module", "finit_module",
    "delete_module", "settimeofday", "clock_settime", "adjtimex", "clock_adjtime", "sethostname",
    "setdomainname", "syslog", "vhangup", "iopl", "ioperm",
)
# Signals only to itself: the first argument (pid, or thread group id) must be the child's own pid.
OWN_PID_FIRST = ("kill", "tgkill", "tkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo")
# fcntl's commands that make another process a file's owner, which the kernel then sends the file's I/O
# signals to (any signal, SIGKILL too, chosen with F_SETSIG): a ``kill`` that passes no pid through ``kill``.
F_SETOWN, F_SETOWN_EX = 8, 15
PRIO_PROCESS = 0  # setpriority only on itself: another process with its uid is the grader, or a classmate's child

SYSCALLS = {
    "x86_64": (0xC000003E, {
        "socket": 41, "socketpair": 53, "clone": 56, "fork": 57, "vfork": 58, "execve": 59, "kill": 62,
        "semget": 64, "msgget": 68, "shmget": 29, "truncate": 76, "chmod": 90, "fchmod": 91, "chown": 92,
        "fcntl": 72, "fchown": 93, "lchown": 94, "ptrace": 101, "fallocate": 285,
        "syslog": 103, "rt_sigqueueinfo": 129, "mknod": 133, "setpriority": 141, "sched_setparam": 142,
        "sched_setscheduler": 144, "sched_setaffinity": 203, "vhangup": 153, "pivot_root": 155, "mq_open": 240,
        "adjtimex": 159, "setrlimit": 160,
        "chroot": 161, "acct": 163, "settimeofday": 164, "mount": 165, "umount2": 166, "swapon": 167,
        "swapoff": 168, "reboot": 169, "sethostname": 170, "setdomainname": 171, "iopl": 172, "ioperm": 173,
        "init_module": 175, "delete_module": 176, "quotactl": 179, "setxattr": 188, "lsetxattr": 189,
        "fsetxattr": 190, "removexattr": 197, "lremovexattr": 198, "fremovexattr": 199, "tkill": 200,
        "clock_settime": 227, "tgkill": 234, "kexec_load": 246, "add_key": 248, "request_key": 249,
        "keyctl": 250, "ioprio_set": 251, "mknodat": 259, "fchownat": 260, "fchmodat": 268, "unshare": 272,
        "rt_tgsigqueueinfo": 297, "perf_event_open": 298, "prlimit64": 302, "name_to_handle_at": 303,
        "open_by_handle_at": 304, "clock_adjtime": 305, "setns": 308, "process_vm_readv": 310,
        "process_vm_writev": 311, "kcmp": 312, "finit_module": 313, "sched_setattr": 314,
        "memfd_create": 319, "kexec_file_load": 320, "bpf": 321, "execveat": 322, "userfaultfd": 323,
        "pidfd_send_signal": 424, "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
        "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433,
        "pidfd_open": 434, "clone3": 435, "pidfd_getfd": 438, "mount_setattr": 442, "memfd_secret": 447,
        "fchmodat2": 452,
    }),
    "aarch64": (0xC00000B7, {
        "setxattr": 5, "lsetxattr": 6, "fsetxattr": 7, "removexattr": 14, "lremovexattr": 15,
        "fremovexattr": 16, "fcntl": 25, "ioprio_set": 30, "mknodat": 33, "umount2": 39, "mount": 40, "pivot_root": 41,
        "truncate": 45, "fallocate": 47, "chroot": 51, "fchmod": 52, "fchmodat": 53, "fchownat": 54, "fchown": 55,
        "vhangup": 58,
        "quotactl": 60, "acct": 89,
        "unshare": 97, "kexec_load": 104, "init_module": 105, "delete_module": 106, "clock_settime": 112,
        "syslog": 116, "ptrace": 117, "sched_setparam": 118, "sched_setscheduler": 119,
        "sched_setaffinity": 122, "kill": 129,
        "tkill": 130, "tgkill": 131, "rt_sigqueueinfo": 138, "reboot": 142, "sethostname": 161,
        "setdomainname": 162, "setrlimit": 164, "settimeofday": 170, "adjtimex": 171, "mq_open": 180, "msgget": 186,
        "semget": 190, "shmget": 194, "socket": 198, "socketpair": 199, "keyctl": 219, "add_key": 217,
        "request_key": 218, "clone": 220, "setpriority": 140, "execve": 221, "swapon": 224, "swapoff": 225,
        "rt_tgsigqueueinfo": 240, "perf_event_open": 241, "prlimit64": 261, "name_to_handle_at": 264,
        "open_by_handle_at": 265, "clock_adjtime": 266, "setns": 268, "process_vm_readv": 270,
        "process_vm_writev": 271, "kcmp": 272, "finit_module": 273, "sched_setattr": 274,
        "memfd_create": 279, "bpf": 280, "execveat": 281, "userfaultfd": 282, "kexec_file_load": 294,
        "pidfd_send_signal": 424, "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
        "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433,
        "pidfd_open": 434, "clone3": 435, "pidfd_getfd": 438, "mount_setattr": 442, "memfd_secret": 447,
        "fchmodat2": 452,
    }),
}


LOADED: dict[str, ctypes.CDLL] = {}


def libc() -> ctypes.CDLL:
    """The C library, with ``errno`` kept for ``check``: loaded once, so that each of its functions
    is looked up once too (a child makes dozens of calls, and each lookup costs more than the call)."""
    if "libc" not in LOADED:
        LOADED["libc"] = ctypes.CDLL(None, use_errno=True)
    return LOADED["libc"]


def check(result: int, what: str) -> None:
    """Raise ``OSError`` for a libc call that returned -1."""
    if result != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"{what}: {os.strerror(error)}")


def mount(source: str | None, target: str, fstype: str | None = None, flags: int = 0,
          data: str | None = None) -> None:
    def encode(text):
        return text.encode() if text is not None else None

    check(libc().mount(encode(source), encode(target), encode(fstype), flags, encode(data)), f"mount {target}")


def bind(source: str, target: str, device: bool = False) -> None:
    """A read-only, nosuid (and but for a ``device``, nodev) bind of ``source`` at ``target``.

    The flags the source mount already has are kept: inside a user namespace a
    remount that would clear one of them is refused.
    """
    mount(source, target, None, MS_BIND)
    flags = os.statvfs(target).f_flag
    kept = sum(ms for st, ms in LOCKED_FLAGS if flags & st)
    mount(None, target, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | (0 if device else MS_NODEV) | kept)


def mountpoint(path: str, directory: bool) -> None:
    """An empty directory, or an empty file, at ``path`` for something to be mounted on."""
    os.makedirs(path if directory else os.path.dirname(path), mode=0o755, exist_ok=True)
    if not directory and not os.path.exists(path):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))


def new_root(plan: dict) -> None:
    """Replace the whole filesystem view with a minimal root (see the module docstring).

    ``plan`` says what to bind (``binds``), which top-level links to recreate
    (``links``, such as ``/bin -> usr/bin``), what to cover (``hidden``,
    ``hidden_names``), and the working directory with its size.
    """
    workdir = plan["workdir"]
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    submission = os.path.join(workdir, "submission")
    copied = None
    if os.path.isdir(submission) and not os.path.islink(submission):
        copied = os.open(submission, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW)
    root = workdir  # a mount point that exists and is ours; only this namespace sees what is mounted on it
    mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,nr_inodes=4096,mode=0755")

    def inside(path):
        return root + path

    for name, target in plan["links"]:
        os.symlink(target, inside(name))
    for path in plan["binds"]:
        if os.path.exists(path) and not os.path.exists(inside(path)):
            mountpoint(inside(path), os.path.isdir(path))
            bind(path, inside(path))
    work = inside(workdir)
    mountpoint(work, True)
    mount("tmpfs", work, "tmpfs", MS_NOSUID | MS_NODEV,
          f"size={plan['work_bytes']},nr_inodes={plan['work_files']},mode=0700")
    if copied is not None:
        mountpoint(os.path.join(work, "submission"), True)
        bind(f"/proc/self/fd/{copied}", os.path.join(work, "submission"))
        os.close(copied)
    mountpoint(inside("/proc"), True)
    mount("proc", inside("/proc"), "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    dev = inside("/dev")
    mountpoint(dev, True)
    mount("tmpfs", dev, "tmpfs", MS_NOSUID, "size=64k,nr_inodes=64,mode=0755")
    for name in DEVICES:
        mountpoint(os.path.join(dev, name), False)
        bind(f"/dev/{name}", os.path.join(dev, name), device=True)
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"), ("stdout", "/proc/self/fd/1"),
                         ("stderr", "/proc/self/fd/2")):
        os.symlink(target, os.path.join(dev, name))
    mountpoint(os.path.join(dev, "shm"), True)
    mount("tmpfs", os.path.join(dev, "shm"), "tmpfs", MS_NOSUID | MS_NODEV,
          f"size={plan['shm_bytes']},nr_inodes=64,mode=1777")
    mount(None, dev, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID)

    os.chdir(root)
    check(libc().syscall(SYSCALLS[os.uname().machine][1]["pivot_root"], b".", b"."), "pivot_root")
    check(libc().umount2(b".", MNT_DETACH), "umount the old root")
    os.chdir("/")
    cover(plan["hidden"], plan["hidden_names"])
    mount(None, "/", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
    os.chdir(workdir)


def cover(hidden: list[str], names: list[str]) -> None:
    """Empty read-only mounts over the grader's own files wherever the new root still shows them.

    ``hidden`` are its package directories as the grading process found them;
    ``names`` are its top-level package names, covered in every directory on
    the child's ``sys.path`` too (a second installation of the grader).
    """
    places = set(hidden)
    for entry in sys.path:
        places.update(os.path.join(entry, name) for name in names)
    for place in sorted(places):
        if os.path.isdir(place) and not os.path.islink(place):
            mount("tmpfs", place, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                  "size=4k,nr_inodes=4,mode=0755")


def in_initial_user_namespace() -> bool:
    """Whether this process is real root's kind (no user namespace), by its uid map."""
    with open("/proc/self/uid_map", encoding="ascii") as uid_map:
        return uid_map.read().split() == ["0", "0", "4294967295"]


def capabilities() -> int:
    """The effective and permitted capability masks of this process."""
    found = {}
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith(("CapEff:", "CapPrm:")):
                found[line[:6]] = int(line.split()[1], 16)
    return found.get("CapEff", -1) | found.get("CapPrm", -1)


def readable_by_nobody(paths: list[str], listed: bool = True) -> bool:
    """Whether ``nobody`` could reach every one of ``paths`` and, where ``listed``, read (or list) it too,
    by permission bits."""
    for path in paths:
        current = "/"
        for part in os.path.abspath(path).strip("/").split("/"):
            current = os.path.join(current, part)
            try:
                mode = os.stat(current).st_mode
            except OSError:
                break
            if not mode & 0o001 or (listed and current == os.path.abspath(path) and not mode & 0o004):
                return False
    return True


def drop_privileges(workdir: str) -> str:
    """Give up root for good; return who the child now is, for the report.

    Real root (no user namespace) becomes ``nobody``, and the working directory
    is handed over to it; where ``nobody`` cannot read the interpreter (pyenv
    under ``/root``), it keeps one capability, to read and search any file
    (``CAP_DAC_READ_SEARCH``), and still cannot write, chmod or signal anything
    of root's. Root of a user namespace cannot change uid (only 0 is mapped):
    it keeps uid 0, which is the invoking user outside, and loses every
    capability. Either way securebits are locked and the bounding and ambient
    sets emptied before the effective and permitted sets are set.
    """
    c = libc()
    if os.geteuid() != 0:
        return f"uid {os.geteuid()}"
    c.prctl(PR_SET_SECUREBITS, LOCKED_SECUREBITS, 0, 0, 0)  # NO_SETUID_FIXUP: capset decides, not setresuid
    for cap in range(64):
        if c.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            break
    c.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    kept = 0
    who = "root of a user namespace"
    if in_initial_user_namespace():
        if not (readable_by_nobody([p for p in sys.path if os.path.exists(p)])
                and readable_by_nobody([os.path.dirname(workdir)], listed=False)):
            kept = 1 << CAP_DAC_READ_SEARCH
        os.chown(workdir, NOBODY, NOBODY)
        parent = os.getppid()
        os.setgroups([])
        os.setresgid(NOBODY, NOBODY, NOBODY)
        os.setresuid(NOBODY, NOBODY, NOBODY)
        # A change of uid clears the signal the kernel sends when the parent dies: set it again,
        # and leave at once if the parent died in between.
        c.prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0)
        if os.getppid() != parent:
            os._exit(1)
        who = "nobody, reading files as root (nobody cannot read the interpreter)" if kept else "nobody"
    check(c.capset(struct.pack("Ii", CAPABILITY_VERSION_3, 0), struct.pack("6I", kept, kept, 0, 0, 0, 0)),
          "capset")
    return who


def restrict_files(plan: dict, own_root: bool) -> dict:
    """Landlock (``landlock``): read only what ``readable`` finds and the child's own ``/proc`` entry,
    write only in the working directory, use only ``/dev/null`` and its kind. Without namespaces the
    long list is the fork server's layer, made once (``allowlist``), at descriptor ``layer``: the child
    adds its own small one, and closes that descriptor before any submission code runs. Returns what
    held, for the report."""
    rules = plan["landlock"]
    if rules is None:
        return {"abi": 0, "error": "turned off (MICROGRADE_LANDLOCK=0)"}
    shared = rules["layer"] if landlock.is_ruleset(rules["layer"]) else None
    own = {f"/proc/{os.getpid()}": True}
    sys.modules["_frozen_importlib_external"].PathFinder.find_spec("micrograde-no-such-module")  # list them now
    if shared is not None and plan["isolated"] and own_root:
        # The fork server's layer holds the long list; this child's /proc and working directory are file
        # systems of its own, which no other child can reach, so its two rules join that layer.
        return landlock.restrict_adding(shared, own, [plan["workdir"]])
    if shared is not None and not plan["isolated"]:
        paths = elsewhere(os.path.dirname(plan["workdir"]), rules)
    else:
        shared, paths = None, readable(rules, plan["hidden"])
    paths.update(own)
    return landlock.restrict(paths, [plan["workdir"]], [f"/dev/{name}" for name in DEVICES], shared)


def release(plan: dict) -> None:
    """Close the fork server's Landlock layer (``restrict_files``), whatever held: a rule a submission
    added to it would reach every child made with it after."""
    layer = (plan["landlock"] or {}).get("layer")
    if layer is not None:
        try:
            os.close(layer)
        except OSError:
            pass


def instruction(code: int, k: int, jt: int | str = 0, jf: int | str = 0) -> list:
    """One BPF instruction; a jump target may be a label until ``seccomp_program`` resolves it."""
    return [code, jt, jf, k]


def seccomp_program(arch: int, table: dict[str, int], own_pid: int) -> list[tuple[int, int, int, int]]:
    """The filter as (code, jt, jf, k) instructions; jumps may name labels, resolved at the end."""
    deny, allow = "deny", "allow"
    program = [
        instruction(BPF_LD_W_ABS, 4),
        instruction(BPF_JEQ_K, arch, 1, 0),
        instruction(BPF_RET_K, SECCOMP_RET_KILL_PROCESS),  # another ABI (i386 on x86_64): no way round
        instruction(BPF_LD_W_ABS, 0),
    ]
    if arch == SYSCALLS["x86_64"][0]:
        program.append(instruction(BPF_JGE_K, X32_SYSCALL_BIT, deny, 0))
    program += [instruction(BPF_JEQ_K, table[name], deny, 0) for name in REFUSED if name in table]
    program += [instruction(BPF_JEQ_K, table["clone3"], "enosys", 0),  # glibc falls back to clone
                instruction(BPF_JEQ_K, table["clone"], "clone", 0),
                instruction(BPF_JEQ_K, table["prlimit64"], "prlimit", 0),
                instruction(BPF_JEQ_K, table["fcntl"], "fcntl", 0),
                instruction(BPF_JEQ_K, table["setpriority"], "setpriority", 0)]
    program += [instruction(BPF_JEQ_K, table[name], "own-pid", 0) for name in OWN_PID_FIRST if name in table]
    program.append(instruction(BPF_RET_K, SECCOMP_RET_ALLOW))
    labels = {"clone": len(program)}  # threads only (numpy's BLAS starts some), in no new namespace
    program += [instruction(BPF_LD_W_ABS, 16), instruction(BPF_JSET_K, CLONE_THREAD, 0, deny),
                instruction(BPF_JSET_K, CLONE_NAMESPACES, deny, allow)]
    labels["prlimit"] = len(program)  # reading limits, never setting them
    program += [instruction(BPF_LD_W_ABS, 32), instruction(BPF_JEQ_K, 0, 0, deny),
                instruction(BPF_LD_W_ABS, 36), instruction(BPF_JEQ_K, 0, allow, deny)]
    labels["fcntl"] = len(program)  # any command but making another process the owner of a file's signals
    program += [instruction(BPF_LD_W_ABS, 24), instruction(BPF_JEQ_K, F_SETOWN, deny, 0),
                instruction(BPF_JEQ_K, F_SETOWN_EX, deny, allow)]
    labels["setpriority"] = len(program)  # its own nice value only: (PRIO_PROCESS, 0 or its own pid)
    program += [instruction(BPF_LD_W_ABS, 16), instruction(BPF_JEQ_K, PRIO_PROCESS, 0, deny),
                instruction(BPF_LD_W_ABS, 24), instruction(BPF_JEQ_K, 0, allow, 0),
                instruction(BPF_JEQ_K, own_pid, allow, deny)]
    labels["own-pid"] = len(program)
    program += [instruction(BPF_LD_W_ABS, 16), instruction(BPF_JEQ_K, own_pid, allow, deny)]
    # BPF only jumps forward: the verdicts come last
    for label, verdict in ((allow, SECCOMP_RET_ALLOW), (deny, SECCOMP_RET_ERRNO | EPERM),
                           ("enosys", SECCOMP_RET_ERRNO | ENOSYS)):
        labels[label] = len(program)
        program.append(instruction(BPF_RET_K, verdict))
    for index, ins in enumerate(program):
        for slot in (1, 2):
            if isinstance(ins[slot], str):
                ins[slot] = labels[ins[slot]] - index - 1
    return [tuple(ins) for ins in program]


def install_seccomp() -> bool:
    """Install the filter on this process (needs no_new_privs); False where the platform has none."""
    known = SYSCALLS.get(os.uname().machine)
    if known is None:
        return False
    program = seccomp_program(known[0], known[1], os.getpid())
    filters = b"".join(struct.pack("HBBI", *ins) for ins in program)
    buffer = ctypes.create_string_buffer(filters, len(filters))
    fprog = struct.pack("HP", len(program), ctypes.addressof(buffer))
    return libc().prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, fprog, 0, 0) == 0


def apply(plan: dict) -> dict:
    """Carry out ``plan``; return what held, as plain data for the report.

    Every step is tried even when an earlier one failed: a layer that holds is
    worth having, and the report says which did not.
    """
    try:
        return carry_out(plan)
    finally:
        release(plan)


def carry_out(plan: dict) -> dict:
    """Each step of ``apply``, in order."""
    held = {"filesystem": "shared with the grader", "user": "unchanged", "capabilities_left": True,
            "no_new_privs": False, "seccomp": False}
    if plan["isolated"]:
        try:
            new_root(plan)
            held["filesystem"] = "minimal root"
        except OSError as exc:
            held["filesystem"] = f"not confined ({exc})"
    try:
        held["user"] = drop_privileges(plan["workdir"])
    except OSError as exc:
        held["user"] = f"not dropped ({exc})"
    held["capabilities"] = capabilities()
    held["capabilities_left"] = held["capabilities"] != 0
    held["no_new_privs"] = libc().prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0
    try:
        held["landlock"] = restrict_files(plan, held["filesystem"] == "minimal root")
    except OSError as exc:
        held["landlock"] = {"abi": 0, "error": str(exc)}
    if held["user"].startswith("nobody") and "error" not in held["landlock"]:
        # Dumpable again (a change of uid made it not): its /proc entry is then nobody's, so that the grading
        # process, root without CAP_SYS_PTRACE in a Docker container, can read its descriptors as nobody
        # (``sandbox.seen_as``). No other child can: Landlock keeps each out of the others' entries and
        # refuses tracing outside its own domain, and the filter refuses ptrace.
        libc().prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)
    held["seccomp"] = held["no_new_privs"] and install_seccomp()
    for name in [m for m in sys.modules if m == "ctypes" or m.startswith("ctypes.") or m == "_ctypes"]:
        del sys.modules[name]
    vars(landlock).clear()  # its system-call function too: nothing of ctypes is left for the submission
    return held
