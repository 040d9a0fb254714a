"""The kernel's side of confining a submission, applied by the child to itself.

This module runs inside the child process (its code is shipped from the grading
process and run before any submission code), so it imports nothing but the
standard library. The grading process decides the ``plan`` (see
``grader.child.sandbox``); the child takes the steps of ``LAYERS`` in order,
each needing the privileges the next one gives up, and each returning its
declared result (``{"held": bool, ...}``, read by ``grader.child.layers``):

1. ``filesystem``, with namespaces: a new, minimal root filesystem
   (``new_root``): an empty tmpfs holding read-only binds of the operating
   system and the Python installation only, a sized tmpfs as the working
   directory, the copied submission read-only inside it, a fresh ``/proc`` for
   the child's own PID namespace and a tiny ``/dev``. The grader's checkout,
   virtualenvs other than the interpreter's, other students' submissions,
   batch output and caches are not hidden: they are simply not there. Where the
   interpreter's own site-packages hold the grader or the reference engine,
   those directories are covered by empty read-only mounts;
2. ``user``, no privileges (``drop_privileges``): real root becomes ``nobody``
   (keeping only the right to read files where ``nobody`` cannot read the
   interpreter); root of a user namespace keeps its uid but loses every
   capability, for good (securebits locked, bounding set emptied);
3. ``no_new_privs``: ``PR_SET_NO_NEW_PRIVS``, so no executable can give any of it back;
4. ``landlock`` (``restrict_files``, by ``landlock``; without namespaces in two
   layers, see ``allowlist``), with or without namespaces:
   the child and all it could start may read only the shared libraries, the
   interpreter, its standard library and the site-packages entries a submission
   may import (not the grader's, the reference engine's or a forbidden
   library's), its own ``/proc`` entry and ``/dev/null`` and its kind, and
   write only in its working directory; no TCP, no signal or abstract Unix
   socket beyond itself, as far as the kernel's ABI goes. No capability lifts
   it, so a child that reads files as root (step 2) reads only these;
5. ``seccomp``: the system-call filter (``seccomp``) refusing the system calls
   no solution needs and every escape needs.

Steps 2 to 5 also apply without namespaces (``MICROGRADE_SANDBOX=none`` or a
machine without them), as far as the kernel allows. ``apply`` reports what each
step held, and the grading process says in the report whether all did.
"""

import ctypes
import os
import struct
import sys

from . import landlock, seccomp
from .allowlist import DEVICES, elsewhere, readable

NOBODY = 65534

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT = 1, 2, 4, 8, 32
MS_NOATIME, MS_NODIRATIME, MS_BIND, MS_REC, MS_PRIVATE, MS_RELATIME = 1024, 2048, 4096, 16384, 1 << 18, 1 << 21
MNT_DETACH = 2
# statvfs flags of a mount that a remount inside a user namespace must keep (else EPERM)
LOCKED_FLAGS = ((os.ST_NOSUID, MS_NOSUID), (os.ST_NODEV, MS_NODEV), (os.ST_NOEXEC, MS_NOEXEC),
                (os.ST_NOATIME, MS_NOATIME), (os.ST_NODIRATIME, MS_NODIRATIME), (os.ST_RELATIME, MS_RELATIME))

PR_SET_PDEATHSIG, PR_CAPBSET_DROP, PR_SET_SECUREBITS, PR_SET_NO_NEW_PRIVS = 1, 24, 28, 38
PR_SET_DUMPABLE = 4
SIGKILL = 9
PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
# SECBIT_NOROOT, NO_SETUID_FIXUP, KEEP_CAPS and NO_CAP_AMBIENT_RAISE, each with its lock
LOCKED_SECUREBITS = 0b11111111
CAPABILITY_VERSION_3 = 0x20080522
CAP_DAC_READ_SEARCH = 2

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
    check(libc().syscall(seccomp.SYSCALLS[os.uname().machine][1]["pivot_root"], b".", b"."), "pivot_root")
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


def apply(plan: dict) -> dict:
    """Carry out ``plan``; return what held, as plain data for the report.

    Every step is tried even when an earlier one failed: a layer that holds is
    worth having, and the report says which did not.
    """
    try:
        return carry_out(plan)
    finally:
        release(plan)


def minimal_root(plan: dict, held: dict) -> dict:
    """Layer ``filesystem``: with namespaces, the minimal root (``new_root``); without, the grader's own."""
    if not plan["isolated"]:
        return {"held": False, "detail": "shared with the grader"}
    try:
        new_root(plan)
    except OSError as exc:
        return {"held": False, "detail": f"not confined ({exc})"}
    return {"held": True, "detail": "minimal root"}


def no_privileges(plan: dict, held: dict) -> dict:
    """Layer ``user``: who the child is now (``drop_privileges``) and the capabilities it has left."""
    try:
        who = drop_privileges(plan["workdir"])
    except OSError as exc:
        who = f"not dropped ({exc})"
    left = capabilities()
    return {"held": left == 0, "who": who, "capabilities": left}


def no_new_privileges(plan: dict, held: dict) -> dict:
    """Layer ``no_new_privs``: nothing the child runs can gain a privilege (a set-uid program's)."""
    return {"held": libc().prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0}


def file_rules(plan: dict, held: dict) -> dict:
    """Layer ``landlock``: what the child may read and write (``restrict_files``), with its ABI."""
    try:
        result = restrict_files(plan, held["filesystem"]["held"])
    except OSError as exc:
        result = {"abi": 0, "error": str(exc)}
    if held["user"].get("who", "").startswith("nobody") and "error" not in result:
        # Dumpable again (a change of uid made it not): its /proc entry is then nobody's, so that the grading
        # process, root without CAP_SYS_PTRACE in a Docker container, can read its descriptors as nobody
        # (``workdirs.seen_as``). No other child can: Landlock keeps each out of the others' entries and
        # refuses tracing outside its own domain, and the filter refuses ptrace.
        libc().prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)
    return {"held": "error" not in result, "abi": result["abi"], "detail": result.get("error", "")}


def system_call_filter(plan: dict, held: dict) -> dict:
    """Layer ``seccomp``: the filter (``seccomp``), which the kernel takes only under ``no_new_privs``."""
    return {"held": held["no_new_privs"]["held"] and seccomp.install(libc())}


# The layers in the order the child takes them: each step is given the plan and the results so far, and
# returns its own result, ``{"held": bool, ...}``, as ``grader.child.layers`` declares it.
LAYERS = (("filesystem", minimal_root), ("user", no_privileges), ("no_new_privs", no_new_privileges),
          ("landlock", file_rules), ("seccomp", system_call_filter))


def carry_out(plan: dict) -> dict:
    """Each step of ``LAYERS``, in order; what each held, by its name. A step that fails for a reason it
    did not foresee did not hold, and the rest are taken all the same."""
    held: dict[str, dict] = {}
    for name, step in LAYERS:
        try:
            held[name] = step(plan, held)
        except Exception as exc:  # noqa: BLE001 - reported; the grading process trusts only what it hears
            held[name] = {"held": False, "detail": f"{type(exc).__name__}: {exc}"}
    for name in [m for m in sys.modules if m == "ctypes" or m.startswith("ctypes.") or m == "_ctypes"]:
        del sys.modules[name]
    vars(landlock).clear()  # its system-call function too: nothing of ctypes is left for the submission
    vars(seccomp).clear()
    return held
