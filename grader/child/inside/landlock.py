"""Landlock: the kernel's own allow-list of what a process may open, for a process without privileges.

Landlock (Linux 5.13 and later) lets any process, root or not, with or without
namespaces, shut itself and everything it starts out of every file it was not
explicitly given, and (by ABI version) out of TCP, out of signalling or
connecting to abstract Unix sockets of processes outside it, out of truncating
files or ``ioctl`` on devices. No capability can lift it: reading a file as root
(``CAP_DAC_READ_SEARCH``) still needs a Landlock rule. It is what keeps the
file system closed where a grader gets no namespaces (Docker's default profile,
a runner that restricts user namespaces, a laptop).

The three system calls are made through ``ctypes``, as the seccomp filter is
(``grader.child.inside.confinement``), rather than through the ``landlock``
package on PyPI: this module runs inside the child, which imports nothing that
is installed (the site-packages it may read are the submission's, not the
grader's), it is shipped compiled with the confinement and, like it, needs only
the standard library; the binding would add a dependency for three calls.

``restrict`` never raises past itself: a kernel without Landlock (``ENOSYS``),
one where it is built but disabled (``EOPNOTSUPP``) or an engine whose seccomp
profile predates it (``EPERM``) is reported, and the caller carries on.
"""

import ctypes
import os
import stat
import struct
import sys

# The same numbers on x86_64 and aarch64 (the generic system call table).
CREATE_RULESET, ADD_RULE, RESTRICT_SELF = 444, 445, 446
MACHINES = ("x86_64", "aarch64")
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH = 1

(EXECUTE, WRITE_FILE, READ_FILE, READ_DIR, REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR, MAKE_REG, MAKE_SOCK,
 MAKE_FIFO, MAKE_BLOCK, MAKE_SYM, REFER, TRUNCATE, IOCTL_DEV) = (1 << bit for bit in range(16))
# Every file-system right each ABI knows: handled rights not granted by a rule are denied.
FS_RIGHTS = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 4: (1 << 15) - 1, 5: (1 << 16) - 1}
NET_BIND_TCP, NET_CONNECT_TCP = 1, 2  # ABI 4: handled, and no port is ever allowed
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1, 2  # ABI 6: only within this process and what it starts
# The rights a rule on a file (not a directory) may carry.
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV

READ = READ_FILE | READ_DIR
# In the working directory: make, change and remove files, directories and links; never run a
# program, make a device, a FIFO or a socket there.
WRITE = (READ | WRITE_FILE | REMOVE_DIR | REMOVE_FILE | MAKE_DIR | MAKE_REG | MAKE_SYM | REFER | TRUNCATE)
DEVICE = READ_FILE | WRITE_FILE | TRUNCATE  # /dev/null and its kind (``open(..., "w")`` truncates)
ERRORS = {38: "the kernel has no Landlock (ENOSYS)", 95: "Landlock is turned off in this kernel (EOPNOTSUPP)",
          1: "Landlock's system calls are refused here (EPERM: a container's seccomp profile older than 2022?)"}


LOADED: dict[str, object] = {}


def syscall(number: int, *args: int) -> int:
    """A raw system call with up to five integer arguments, addresses included; ``OSError`` when it fails.

    Called through a prototype of C ``long``s, so that ctypes converts nothing
    per call: a child adds hundreds of rules, and converting objects each time
    would cost more than the calls (unused arguments are zeros, which no system
    call reads).
    """
    return checked(raw()(number, *args, *[0] * (5 - len(args))))


def raw():
    """libc's ``syscall`` as a prototype of six C ``long``s (loaded once)."""
    if "syscall" not in LOADED:
        prototype = ctypes.CFUNCTYPE(ctypes.c_long, *[ctypes.c_long] * 6, use_errno=True)
        LOADED["syscall"] = prototype(("syscall", ctypes.CDLL(None, use_errno=True)))
    return LOADED["syscall"]


def checked(result: int) -> int:
    """A system call's result; ``OSError`` (with ``ERRORS``' words) for a failure."""
    if result < 0:
        error = ctypes.get_errno()
        raise OSError(error, ERRORS.get(error, os.strerror(error)))
    return result


def abi() -> int:
    """The newest Landlock ABI this kernel offers; ``OSError`` saying why when there is none."""
    if not sys.platform.startswith("linux"):
        raise OSError(38, f"Landlock is Linux's ({sys.platform} has none)")
    if os.uname().machine not in MACHINES:
        raise OSError(38, f"no Landlock system call numbers known for {os.uname().machine}")
    return syscall(CREATE_RULESET, 0, 0, CREATE_RULESET_VERSION)


def ruleset(version: int) -> int:
    """A new ruleset handling every right ``version`` knows; its descriptor."""
    fs = FS_RIGHTS[min(version, max(FS_RIGHTS))]
    if version >= 6:
        attr = struct.pack("QQQ", fs, NET_BIND_TCP | NET_CONNECT_TCP, SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL)
    elif version >= 4:
        attr = struct.pack("QQ", fs, NET_BIND_TCP | NET_CONNECT_TCP)
    else:
        attr = struct.pack("Q", fs)
    buffer = ctypes.create_string_buffer(attr, len(attr))
    return syscall(CREATE_RULESET, ctypes.addressof(buffer), len(attr), 0)


class Rules:
    """Path-beneath rules added to one ruleset, through one reused ``landlock_path_beneath_attr``."""

    def __init__(self, ruleset_fd: int, handled: int) -> None:
        self.ruleset_fd = ruleset_fd
        self.handled = handled
        self.attr = ctypes.create_string_buffer(12)  # {u64 allowed_access; s32 parent_fd} packed
        self.address = ctypes.addressof(self.attr)
        self.call = raw()

    def allow(self, path: str, rights: int, directory: bool | None = None) -> bool:
        """Grant ``rights`` (as far as the ruleset handles them) on ``path`` and beneath it; False if
        ``path`` does not exist or cannot be opened (nothing to grant). ``directory`` says whether it is
        one, where the caller knows (else it is asked of the kernel)."""
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            return False
        try:
            if not (stat.S_ISDIR(os.fstat(fd).st_mode) if directory is None else directory):
                rights &= FILE_RIGHTS
            struct.pack_into("=Qi", self.attr, 0, rights & self.handled, fd)
            checked(self.call(ADD_RULE, self.ruleset_fd, RULE_PATH_BENEATH, self.address, 0, 0))
        finally:
            os.close(fd)
        return True


def grant(ruleset_fd: int, version: int, read: dict[str, bool | None], write: list[str],
          devices: list[str]) -> None:
    """Add to a ruleset (``ruleset``'s, for ``version``) the rules that let read ``read`` (each path with
    whether it is a directory, or ``None``: not known), write ``write`` (directories) and use ``devices``
    (files)."""
    rules = Rules(ruleset_fd, FS_RIGHTS[min(version, max(FS_RIGHTS))])
    for path, directory in read.items():
        rules.allow(path, READ, directory)
    for paths, rights, directory in ((write, WRITE, True), (devices, DEVICE, False)):
        for path in paths:
            rules.allow(path, rights, directory)


def layer(version: int, read: dict[str, bool | None], write: list[str], devices: list[str]) -> int:
    """A ruleset (its descriptor) handling every right ``version`` knows, that lets read ``read``, write
    ``write`` and use ``devices`` (see ``grant``)."""
    fd = ruleset(version)
    try:
        grant(fd, version, read, write, devices)
    except OSError:
        os.close(fd)
        raise
    return fd


def is_ruleset(fd: int | None) -> bool:
    """Whether descriptor ``fd`` of this process is a Landlock ruleset (such as ``layer`` makes)."""
    try:
        return fd is not None and os.readlink(f"/proc/self/fd/{fd}") == "anon_inode:[landlock-ruleset]"
    except OSError:
        return False


def restrict(read: dict[str, bool | None], write: list[str], devices: list[str], shared: int | None = None) -> dict:
    """Restrict this process (it must be single-threaded and have ``PR_SET_NO_NEW_PRIVS``) and all
    it starts to reading ``read`` (each path with whether it is a directory, or ``None``: not
    known), writing ``write`` and using ``devices``, and nothing else; and, where ``shared`` is a
    ruleset made beforehand (``layer``), to what it allows too (layers intersect).

    Returns ``{"abi": N}`` once the restriction holds, else ``{"abi": N or 0, "error": why}``.
    """
    try:
        version = abi()
    except OSError as exc:
        return {"abi": 0, "error": exc.strerror}
    try:
        fd = layer(version, read, write, devices)
    except OSError as exc:
        return {"abi": version, "error": f"creating the ruleset: {exc.strerror}"}
    try:
        for ruleset_fd in (shared, fd) if shared is not None else (fd,):
            syscall(RESTRICT_SELF, ruleset_fd, 0)
    except OSError as exc:
        return {"abi": version, "error": exc.strerror}
    finally:
        os.close(fd)
    return {"abi": version}


def restrict_adding(shared: int, read: dict[str, bool | None], write: list[str]) -> dict:
    """Restrict this process with the ruleset ``shared`` (``layer``, made beforehand), after adding to it
    the rules that let read ``read`` and write ``write``; what it returns is as ``restrict``'s.

    A ruleset is not used up by a restriction: every process restricted with ``shared`` later gets these
    rules too. A rule is on an inode, so that is harmless only where the paths lie on file systems no
    other process can reach (a child's own ``/proc`` and working directory, in namespaces of its own)."""
    try:
        version = abi()
    except OSError as exc:
        return {"abi": 0, "error": exc.strerror}
    try:
        grant(shared, version, read, write, [])
        syscall(RESTRICT_SELF, shared, 0)
    except OSError as exc:
        return {"abi": version, "error": exc.strerror}
    return {"abi": version}
