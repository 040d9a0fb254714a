"""The system-call filter a child installs on itself: what no solution needs and every escape needs.

Classic BPF through ``prctl(PR_SET_SECCOMP)``, for x86_64 and aarch64 (other
architectures get no filter, and the report says so), refusing: mounting,
namespaces, tracing, keyrings, BPF, new processes and programs, sockets,
signals to any other process (``kill`` and its kind, and ``fcntl`` making
another process a file's owner, to which the kernel sends its I/O signals),
another process's priority (``setpriority``), device nodes and FIFOs,
ownership, permission bits (which Landlock does not govern) and extended
attributes, truncating a file by its name (which Landlock before ABI 3 does
not govern), allocating a file's disk at once (``fallocate``: faster than the
grading process measures the working directory without namespaces), real-time
scheduling, leaving the cores the grader gave it, raising resource limits, and
file locks, leases and directory notifications (``flock``, ``fcntl``'s lock
commands: a file both can read, locked by one child and tested by another, is
a channel between two children that share nothing else).

One step of the confinement (``confinement.LAYERS``); like every module here it
runs in the fork server and in the child, and imports only the standard library.
"""

import ctypes
import os
import struct

PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
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
    "truncate", "fallocate", "flock", "setxattr", "lsetxattr", "fsetxattr",
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
# fcntl's commands that lock or watch a file (POSIX and open-file-description locks, leases, directory
# notifications): Landlock governs none, and a lock another child can test carries bits from one to the other.
F_LOCKS = (5, 6, 7, 36, 37, 38, 1024, 1026)  # F_GETLK, F_SETLK, F_SETLKW, F_OFD_*, F_SETLEASE, F_NOTIFY
PRIO_PROCESS = 0  # setpriority only on itself: another process with its uid is the grader, or a classmate's child

SYSCALLS = {
    "x86_64": (0xC000003E, {
        "socket": 41, "socketpair": 53, "clone": 56, "fork": 57, "vfork": 58, "execve": 59, "kill": 62,
        "semget": 64, "msgget": 68, "shmget": 29, "truncate": 76, "chmod": 90, "fchmod": 91, "chown": 92,
        "fcntl": 72, "flock": 73, "fchown": 93, "lchown": 94, "ptrace": 101, "fallocate": 285,
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
        "fremovexattr": 16, "fcntl": 25, "ioprio_set": 30, "flock": 32, "mknodat": 33, "umount2": 39, "mount": 40,
        "pivot_root": 41,
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
    labels["fcntl"] = len(program)  # any command but another process made a file's owner, and locks
    program += [instruction(BPF_LD_W_ABS, 24), instruction(BPF_JEQ_K, F_SETOWN, deny, 0),
                instruction(BPF_JEQ_K, F_SETOWN_EX, deny, 0)]
    program += [instruction(BPF_JEQ_K, command, deny, 0) for command in F_LOCKS]
    program.append(instruction(BPF_RET_K, SECCOMP_RET_ALLOW))
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


def install(libc: ctypes.CDLL) -> bool:
    """Install the filter on this process (needs no_new_privs), through ``libc`` (the C library, loaded by
    the confinement); False where the platform has none."""
    known = SYSCALLS.get(os.uname().machine)
    if known is None:
        return False
    program = seccomp_program(known[0], known[1], os.getpid())
    filters = b"".join(struct.pack("HBBI", *ins) for ins in program)
    buffer = ctypes.create_string_buffer(filters, len(filters))
    fprog = struct.pack("HP", len(program), ctypes.addressof(buffer))
    return libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, fprog, 0, 0) == 0
