"""The kernel-level layers on their own, without the audit hook: what they really stop.

A probe process is started exactly as the grader starts a child (by the same
launcher, with the same limits, environment and confinement plan), applies the confinement,
then, with ``ctypes`` at hand as if it had got around the audit hook, tries
every escape it can and prints what happened. Run in both modes: with
namespaces, and with them turned off as on a machine without any.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest
from helpers import ROOT, processes_with
from test_landlock import kernel_abi

from grader.child import launcher, sandbox
from grader.errors import MachineError

# The confinement's modules, loaded as the child loads them (grader.child.shipping), with the plan and targets.
LOADER = r"""
import json, sys, types
sys.modules["probe"] = types.ModuleType("probe")
sys.modules["probe"].__path__ = []
for name, text in json.loads(sys.argv[1]).items():
    module = sys.modules["probe." + name] = types.ModuleType("probe." + name)
    module.__package__ = "probe"
    exec(compile(text, name, "exec"), module.__dict__)
plan, targets = json.loads(sys.argv[2]), json.loads(sys.argv[3])
"""

PROBE = LOADER + r"""
import ctypes, os, resource, signal, socket, subprocess
print(json.dumps({"held": module.apply(plan)}), flush=True)
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
results = {}

def attempt(name, action):
    try:
        result = action()
    except OSError as exc:
        results[name] = exc.errno or -1
        return
    except ValueError:  # what setrlimit makes of EPERM
        results[name] = -1
        return
    if isinstance(result, int) and result < 0:
        results[name] = ctypes.get_errno()
    else:
        results[name] = "ok"

def raw(name, *args):
    numbers = {"x86_64": {"unshare": 272, "setns": 308, "ptrace": 101, "pidfd_open": 434, "bpf": 321,
                          "keyctl": 250, "clone": 56, "memfd_create": 319, "pivot_root": 155, "mq_open": 240,
                          "mq_unlink": 241},
               "aarch64": {"unshare": 97, "setns": 268, "ptrace": 117, "pidfd_open": 434, "bpf": 280,
                           "keyctl": 219, "clone": 220, "memfd_create": 279, "pivot_root": 41, "mq_open": 180,
                           "mq_unlink": 181}}
    return lambda: libc.syscall(numbers[os.uname().machine][name], *args)

def write(path, data=b"x"):
    with open(path, "wb") as out:
        out.write(data)

def fill(count, size):
    for i in range(count):
        write(f"fill-{i}", b"\0" * size)

parent = os.getppid()
attempt("remount root read-write", lambda: libc.mount(None, b"/", None, 32 | 4096, None))
attempt("unmount /proc", lambda: libc.umount2(b"/proc", 2))
attempt("mount a tmpfs", lambda: libc.mount(b"x", b"/tmp", b"tmpfs", 0, None))
attempt("pivot_root", raw("pivot_root", b"/", b"/"))
attempt("unshare a user namespace", raw("unshare", 0x10000000 | 0x00020000))
attempt("setns", lambda: libc.syscall(308 if os.uname().machine == "x86_64" else 268,
                                      os.open("/proc/self/ns/mnt", os.O_RDONLY), 0))
attempt("ptrace the parent", raw("ptrace", 16, parent, 0, 0))
attempt("pidfd_open the parent", raw("pidfd_open", parent, 0))
attempt("bpf", raw("bpf", 0, 0, 0))
attempt("keyctl", raw("keyctl", 0, -3, 0))
attempt("clone a process", raw("clone", signal.SIGCHLD, 0, 0, 0, 0))
attempt("fork", lambda: os.fork() or os._exit(0))
attempt("fork_exec", lambda: subprocess.Popen(["true"]).wait())
attempt("execve", lambda: os.execv("/bin/true", ["true"]))
attempt("unix socket", lambda: socket.socket(socket.AF_UNIX).connect("/run/docker.sock"))
attempt("network socket", lambda: socket.socket(socket.AF_INET))
attempt("kill the parent", lambda: os.kill(parent, 0))
attempt("kill every process", lambda: os.kill(-1, 0))
import fcntl, struct
owned = os.open(".", os.O_RDONLY)  # a file's owner gets its I/O signals, sent by the kernel, not by kill
attempt("signal the parent as a file's owner", lambda: fcntl.fcntl(owned, fcntl.F_SETOWN, parent))
attempt("signal the parent as a file's owner, by thread",
        lambda: fcntl.fcntl(owned, 15, struct.pack("ii", 1, parent)))  # F_SETOWN_EX, F_OWNER_PID
attempt("real-time scheduling", lambda: os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1)))
attempt("leave its core", lambda: os.sched_setaffinity(0, range(os.cpu_count())))
attempt("set a resource limit", lambda: resource.setrlimit(resource.RLIMIT_NOFILE,
                                                          resource.getrlimit(resource.RLIMIT_NOFILE)))
attempt("memfd", raw("memfd_create", b"x", 0))
# A POSIX message queue outlives its process, like a System V segment. Landlock refuses opening it, once the
# kernel has made it: refused or not, it must not be there afterwards.
attempt("message queue", raw("mq_open", targets["queue"].encode(), os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600, 0))
results["message queue left"] = "ok" if raw("mq_unlink", targets["queue"].encode())() == 0 else ctypes.get_errno()
attempt("mkfifo", lambda: os.mkfifo(targets["fifo"]))
attempt("mknod", lambda: os.mknod("node"))
attempt("chown", lambda: (write("owned"), os.chown("owned", 0, 0)))
attempt("setxattr", lambda: (write("tagged"), os.setxattr("tagged", "user.x", b"1")))
attempt("write outside", lambda: write(targets["outside"]))
attempt("chmod outside", lambda: os.chmod(targets["canary"], 0o777))
attempt("read the reference", lambda: open(targets["reference"], "rb").read())
attempt("read a copy of the reference", lambda: open(targets["copy"], "rb").read())
attempt("read the grader's environment", lambda: open(f"/proc/{parent}/environ", "rb").read())
attempt("truncate the reference", lambda: os.truncate(targets["copy"], 0))
attempt("rename outside", lambda: os.rename(targets["canary"], targets["canary"] + ".moved"))
attempt("remove outside", lambda: os.remove(targets["canary"]))
attempt("list the folder outside", lambda: os.listdir(os.path.dirname(targets["canary"])))
attempt("write in the working directory", lambda: (os.makedirs("plots"), write("plots/loss.png")))
if plan["isolated"]:
    attempt("fill the working directory", lambda: fill(20, 15 * 1024 * 1024))
    for name in os.listdir("."):
        if name.startswith("fill-"):
            os.remove(name)
    attempt("make many files", lambda: fill(plan["work_files"] + 10, 0))
capabilities = next(int(line.split()[1], 16) for line in open("/proc/self/status") if line.startswith("CapEff"))
print(json.dumps({"results": results, "uid": os.getuid(), "capabilities": capabilities,
                  "root": [n for n in ("home", "srv", "var", "mnt", "opt", "run") if os.path.exists("/" + n)]}),
      flush=True)
"""
REFUSED = (
    "remount root read-write", "unmount /proc", "mount a tmpfs", "pivot_root", "unshare a user namespace", "setns",
    "ptrace the parent", "pidfd_open the parent", "bpf", "keyctl", "clone a process", "fork", "fork_exec", "execve",
    "unix socket", "network socket", "kill the parent", "kill every process", "signal the parent as a file's owner",
    "signal the parent as a file's owner, by thread", "real-time scheduling",
    "leave its core", "set a resource limit", "memfd", "message queue", "message queue left", "mkfifo", "mknod",
    "chown", "setxattr",
)


@pytest.fixture
def box(mode):
    return launcher.detect()


def confinement_modules() -> str:
    """The confinement's modules, as ``LOADER`` reads them."""
    return json.dumps({name: (ROOT / "grader" / "child" / "inside" / f"{name}.py").read_text()
                       for name in ("landlock", "allowlist", "seccomp", "confinement")})


def run_child(box: sandbox.Sandbox, program: str, argv: list[str], work: Path,
              cpu_seconds: int = 30, layer: dict | None = None) -> tuple[str, str]:
    """Have the launcher run ``python -c program`` as it runs every child, to its end; its output.
    ``layer``: the fork server's Landlock layer it is given (``Sandbox.shared_layer``), at descriptor 3."""
    out, err = tempfile.TemporaryFile(), tempfile.TemporaryFile()
    child = launcher.Child(program, ["-c", *argv], (out.fileno(), err.fileno()), cwd=str(work),
                            env=sandbox.environment(str(work)), limits=sandbox.limits(cpu_seconds),
                            isolated=box.isolated, layer=layer)
    deadline = time.monotonic() + 60
    while child.alive and time.monotonic() < deadline:
        time.sleep(0.02)
    child.end()
    out.seek(0)
    err.seek(0)
    return out.read().decode(), err.read().decode()


def probe(box: sandbox.Sandbox, tmp_path: Path) -> tuple[dict, dict]:
    """Run the probe as a child; what held, and what each attempt gave (``"ok"`` or an errno)."""
    work = tmp_path / "work"
    work.mkdir()
    targets = {"outside": str(tmp_path / "outside"), "fifo": str(tmp_path / "fifo"),
               "canary": str(tmp_path / "canary"), "reference": str(ROOT / "reference" / "engine.py"),
               "copy": str(tmp_path / "copy" / "engine.py"), "queue": f"micrograde-probe-{uuid.uuid4().hex}"}
    Path(targets["canary"]).write_text("canary")
    os.chmod(targets["canary"], 0o600)
    Path(targets["copy"]).parent.mkdir()
    Path(targets["copy"]).write_bytes(Path(targets["reference"]).read_bytes())
    argv = [confinement_modules(), json.dumps(box.plan(work.resolve())), json.dumps(targets)]
    stdout, stderr = run_child(box, PROBE, argv, work)
    lines = [json.loads(line) for line in stdout.splitlines()]
    assert len(lines) == 2, stdout + stderr
    assert not (tmp_path / "outside").exists() or not box.isolated
    assert not (tmp_path / "fifo").exists()
    return lines[0]["held"], lines[1]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="seccomp and namespaces are Linux's")
def test_escapes_without_the_audit_hook(box, tmp_path, monkeypatch):
    monkeypatch.setenv("MICROGRADE_SECRET", "s3cret")  # in this process's environment, the child's parent
    held, seen = probe(box, tmp_path)
    results = seen["results"]
    assert held["no_new_privs"] == {"held": True} and held["seccomp"] == {"held": True}
    # none, but where nobody cannot read the interpreter: then reading (not writing) as root
    kept = held["user"]["who"].startswith("nobody, reading files as root")
    assert held["user"]["capabilities"] == seen["capabilities"] == (4 if kept else 0)  # CAP_DAC_READ_SEARCH
    assert held["user"]["held"] is not kept
    assert {name: results[name] for name in REFUSED if results[name] == "ok"} == {}
    assert results["write in the working directory"] == "ok"
    if box.isolated:
        assert held["filesystem"] == {"held": True, "detail": "minimal root"}
        # Nothing of the machine but the system and the interpreter: no checkout, no other file.
        assert seen["root"] == []
        for name in ("write outside", "chmod outside", "read the reference", "read a copy of the reference",
                     "read the grader's environment", "fill the working directory", "make many files"):
            assert results[name] != "ok", name
        assert (tmp_path / "canary").stat().st_mode & 0o777 == 0o600
    else:
        assert held["filesystem"] == {"held": False, "detail": "shared with the grader"}
    kernel, why = kernel_abi()
    assert held["landlock"] == ({"held": True, "abi": kernel, "detail": ""} if kernel
                                else {"held": False, "abi": 0, "detail": why})
    if kernel:  # in either mode, whatever the user: nothing outside the working directory and the Python it needs
        for name in ("write outside", "chmod outside", "read the reference", "read a copy of the reference",
                     "read the grader's environment", "truncate the reference", "rename outside", "remove outside",
                     "list the folder outside"):
            assert results[name] != "ok", name
        assert (tmp_path / "canary").read_text() == "canary" and (tmp_path / "copy" / "engine.py").stat().st_size
    if os.geteuid() == 0:
        # Run by root, the child is nobody: it may not look into the grader, nor write or chmod root's files.
        assert seen["uid"] == 65534 and held["user"]["who"].startswith("nobody")
        for name in ("read the grader's environment", "write outside", "chmod outside"):
            assert results[name] != "ok", name


def test_a_daemon_dies_with_its_sandbox(tmp_path):
    """Even were process creation allowed, the PID namespace takes every process down with the child."""
    launcher.detect.cache_clear()
    box = launcher.detect()
    if not box.isolated:
        pytest.skip(f"no namespaces on this machine: {box.detail}")
    mark = f"micrograde-escapee-{uuid.uuid4().hex}"
    code = f"import subprocess; subprocess.Popen(['sh', '-c', \"setsid sh -c 'sleep 600 {mark}' &\"]); " \
           "import time; time.sleep(0.5); print('started', flush=True)"
    assert run_child(box, code, [], tmp_path)[0] == "started\n"
    leftover = processes_with(mark.encode())
    for pid in leftover:
        os.kill(int(pid), 9)
    assert leftover == [], "a daemonised process outlived its sandbox"


LIMITS = ("import os, resource; print(*[resource.getrlimit(r)[0] for r in (resource.RLIMIT_AS, resource.RLIMIT_CPU, "
          "resource.RLIMIT_FSIZE, resource.RLIMIT_NOFILE, resource.RLIMIT_CORE)], os.getsid(0), os.getpid(), "
          "os.getcwd(), sorted(os.environ) == sorted({env}), sorted(os.listdir('/proc/self/fd')))")
EXPECTED_LIMITS = [sandbox.MEMORY_BYTES, 42, sandbox.FILE_BYTES, sandbox.OPEN_FILES, 0]


def test_a_child_gets_its_limits_session_directory_environment_and_descriptors(box, tmp_path):
    env = sandbox.environment(str(tmp_path))
    stdout, stderr = run_child(box, LIMITS.format(env=sorted(env)), [], tmp_path, cpu_seconds=42)
    *limits, session, pid, cwd, same_environment, fds = stdout.split(maxsplit=9)
    assert list(map(int, limits)) == EXPECTED_LIMITS, stderr
    # A session of its own, whatever session the grader is in (under a CI runner's PID namespace, one it cannot
    # see): without namespaces the child leads it; with them its supervisor, outside the child's namespace, does.
    assert (int(session), int(pid)) == ((0, 1) if box.isolated else (int(pid), int(pid)))
    assert (cwd, same_environment) == (str(tmp_path), "True")
    assert fds.strip() == "['0', '1', '2', '3']"  # the streams, and the descriptor listdir itself opened


def test_limits_are_applied_to_an_executed_notebook():
    code = LIMITS.split(", os.getsid")[0] + ")"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            preexec_fn=sandbox.limiter(42))
    assert list(map(int, result.stdout.split())) == EXPECTED_LIMITS


def test_turning_namespaces_off(monkeypatch):
    monkeypatch.setenv("MICROGRADE_SANDBOX", "none")
    launcher.detect.cache_clear()
    try:
        box = launcher.detect()
        assert box.mode == "limits"
        section = box.to_json({"filesystem": {"held": False, "detail": "shared with the grader"},
                               "user": {"held": True, "who": "nobody", "capabilities": 0},
                               "no_new_privs": {"held": True}, "seccomp": {"held": True}})
        assert section["processes_contained"] is False and section["tamper_proof"] is False
        assert "not tamper-proof" in sandbox.not_tamper_proof(section)
    finally:
        launcher.detect.cache_clear()


def test_a_child_dies_with_its_launcher_and_the_next_gets_a_new_one(tmp_path):
    box = launcher.detect()
    out, err = tempfile.TemporaryFile(), tempfile.TemporaryFile()
    child = launcher.Child("import time; time.sleep(60)", ["-c"], (out.fileno(), err.fileno()), cwd=str(tmp_path),
                            env=sandbox.environment(str(tmp_path)), limits=sandbox.limits(60), isolated=box.isolated)
    assert child.alive
    first = launcher.running().process
    first.kill()
    first.wait()
    deadline = time.monotonic() + 10
    while child.alive and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not child.alive
    child.end()  # nothing left to end, and no error
    assert launcher.running().process is not first
    assert run_child(box, "print('again')", [], tmp_path)[0] == "again\n"


def test_a_child_that_cannot_be_set_up_is_the_machines_failure_not_a_crash(tmp_path):
    out = tempfile.TemporaryFile()
    child = launcher.Child("print('never')", ["-c"], (out.fileno(), out.fileno()), cwd=str(tmp_path / "gone"),
                            env=sandbox.environment(str(tmp_path)), limits=sandbox.limits(5),
                            isolated=launcher.detect().isolated)
    with pytest.raises(MachineError, match="could not be started: .*No such file or directory"):
        child.started()
    assert not child.alive
    child.end()
    out.seek(0)
    assert out.read() == b""


NEIGHBOURS = LOADER + r"""
import os
layer = plan["landlock"]["layer"]
given = os.readlink(f"/proc/self/fd/{layer}")
held = module.apply(plan)
results = {"layer given": given, "layer kept": os.path.exists(f"/proc/self/fd/{layer}")}

def attempt(name, action):
    try:
        action()
        results[name] = "ok"
    except OSError as exc:
        results[name] = exc.errno

def write(path):
    with open(path, "w") as out:
        out.write("x")

attempt("write in its working directory", lambda: write("mine"))
attempt("read its working directory", lambda: open("mine").read())
attempt("read the standard library", lambda: open(os.__file__).read())
attempt("read its own /proc entry", lambda: open(f"/proc/{os.getpid()}/status").read())
attempt("read the other's working directory", lambda: open(targets["other"] + "/secret").read())
attempt("list the other's working directory", lambda: os.listdir(targets["other"]))
attempt("write in the other's working directory", lambda: write(targets["other"] + "/planted"))
attempt("read next to its working directory", lambda: open(targets["next"]).read())
attempt("write next to its working directory", lambda: write(targets["next"]))
attempt("list the directory of working directories", lambda: os.listdir(os.path.dirname(os.getcwd())))
attempt("read the grader's environment", lambda: open(f"/proc/{os.getppid()}/environ", "rb").read())
print(json.dumps({"held": held["landlock"], "results": results}), flush=True)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Landlock is Linux's")
def test_children_sharing_the_fork_servers_landlock_layer_reach_only_their_own_working_directory(tmp_path,
                                                                                               monkeypatch):
    """Without namespaces every child of a grading process restricts itself with the one layer the fork
    server made (read-write on the whole directory of working directories) and a layer of its own: two
    children of one grading process, one after the other, each reaches its own working directory and
    neither the other's nor a file beside them."""
    kernel, why = kernel_abi()
    if not kernel:
        pytest.skip(f"this kernel offers no Landlock: {why}")
    monkeypatch.setenv("MICROGRADE_SANDBOX", "none")
    launcher.detect.cache_clear()
    try:
        box = launcher.detect()
        holder = tmp_path / "work"
        works = [holder / "one", holder / "two"]
        for work in works:
            work.mkdir(parents=True)
            (work / "secret").write_text(work.name)
        (holder / "next.txt").write_text("beside")
        modules = confinement_modules()
        seen = []
        for work, other in (works, works[::-1]):
            targets = {"other": str(other.resolve()), "next": str((holder / "next.txt").resolve())}
            argv = [modules, json.dumps(box.plan(work.resolve(), 3)), json.dumps(targets)]
            stdout, stderr = run_child(box, NEIGHBOURS, argv, work, layer=box.shared_layer(work))
            assert stdout, stderr
            seen.append(json.loads(stdout))
    finally:
        launcher.detect.cache_clear()
    for child in seen:
        results = child["results"]
        assert child["held"] == {"held": True, "abi": kernel, "detail": ""}
        assert results.pop("layer given") == "anon_inode:[landlock-ruleset]" and results.pop("layer kept") is False
        allowed = ("write in its working directory", "read its working directory", "read the standard library",
                   "read its own /proc entry")
        assert {name: results.pop(name) for name in allowed} == dict.fromkeys(allowed, "ok")
        assert results == dict.fromkeys(results, errno.EACCES)
    assert (holder / "next.txt").read_text() == "beside" and not (holder / "one" / "planted").exists()


ROOTED = NEIGHBOURS.split("attempt(\"read the other's")[0] + r"""
attempt("write /dev/shm", lambda: write("/dev/shm/planted"))
attempt("list /", lambda: os.listdir("/"))
print(json.dumps({"held": held["landlock"], "root": held["filesystem"], "results": results}), flush=True)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Landlock and namespaces are Linux's")
def test_with_namespaces_every_child_adds_its_own_rules_to_the_fork_servers_layer_and_is_held_by_it(tmp_path):
    """With namespaces each child adds its ``/proc`` entry and working directory to the layer of the long
    list the fork server made, and restricts itself with it; past the children after which the fork server
    makes the layer anew, every child still reaches its own working directory, the standard library and its
    ``/proc`` entry, and nothing its root shows beyond them (``/`` itself, a writable ``/dev/shm``)."""
    kernel, why = kernel_abi()
    if not kernel:
        pytest.skip(f"this kernel offers no Landlock: {why}")
    launcher.detect.cache_clear()
    box = launcher.detect()
    if not box.isolated:
        pytest.skip(f"no namespaces on this machine: {box.detail}")
    modules = confinement_modules()
    seen = []
    for number in range(66):  # more than forkserver.LAYER_CHILDREN
        work = tmp_path / f"work{number}"
        work.mkdir()
        stdout, stderr = run_child(box, ROOTED, [modules, json.dumps(box.plan(work, 3)), "{}"], work,
                                   layer=box.shared_layer(work))
        assert stdout, stderr
        seen.append(json.loads(stdout))
    for number, child in enumerate(seen):
        results = child["results"]
        assert child["held"] == {"held": True, "abi": kernel, "detail": ""}, number
        assert child["root"] == {"held": True, "detail": "minimal root"}, number
        assert results.pop("layer given") == "anon_inode:[landlock-ruleset]" and results.pop("layer kept") is False
        allowed = ("write in its working directory", "read its working directory", "read the standard library",
                   "read its own /proc entry")
        assert {name: results.pop(name) for name in allowed} == dict.fromkeys(allowed, "ok"), number
        assert results == {"write /dev/shm": errno.EACCES, "list /": errno.EACCES}, number
