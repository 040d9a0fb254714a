"""Landlock on its own (``grader/child/inside/landlock.py``): what the kernel then refuses a process.

A small program restricts itself with the module's ``restrict`` and tries what
a submission that got past the audit hook would. Everything it uses is
imported before it restricts itself, so it needs to read nothing afterwards.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import uuid
from pathlib import Path

import pytest
from helpers import ROOT

LANDLOCK = ROOT / "grader" / "child" / "inside" / "landlock.py"
PROGRAM = r"""
import ctypes, errno, json, os, signal, socket, sys, types
landlock = types.ModuleType("landlock")
exec(compile(open(sys.argv[1]).read(), "landlock", "exec"), landlock.__dict__)
paths = json.loads(sys.argv[2])
if paths.get("unknown_call"):
    landlock.CREATE_RULESET = 100000  # no such system call: what a kernel without Landlock answers
ctypes.CDLL(None).prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS
held = landlock.restrict(dict.fromkeys(paths["read"]), paths["write"], paths["devices"])
results = {}

def attempt(name, action):
    try:
        action()
        results[name] = "ok"
    except OSError as exc:
        results[name] = errno.errorcode.get(exc.errno, exc.errno)

def write(path, mode="w"):
    with open(path, mode) as out:
        out.write("x")

attempt("read allowed", lambda: open(paths["readable"]).read())
attempt("list allowed", lambda: os.listdir(os.path.dirname(paths["readable"])))
attempt("write allowed", lambda: write(paths["readable"]))
attempt("read outside", lambda: open(paths["outside"]).read())
attempt("list outside", lambda: os.listdir(os.path.dirname(paths["outside"])))
attempt("write outside", lambda: write(paths["outside"]))
attempt("make in the working directory", lambda: (os.makedirs(paths["work"] + "/a/b"), write(paths["work"] + "/a/b/f")))
attempt("rename in the working directory", lambda: os.rename(paths["work"] + "/a/b/f", paths["work"] + "/a/f"))
attempt("truncate in the working directory", lambda: os.truncate(paths["work"] + "/a/f", 0))
attempt("rename out of the working directory", lambda: os.rename(paths["work"] + "/a/f", paths["outside"] + ".moved"))
attempt("link out of the working directory", lambda: os.link(paths["work"] + "/a/f", paths["outside"] + ".linked"))
attempt("remove outside", lambda: os.remove(paths["outside"]))
# A readable file made writable through the working directory: a hard link to it, or moved there, or its
# read-only descriptor opened again for writing through /proc (a file the grader's uid owns, as its venv's).
attempt("link a readable file into the working directory",
        lambda: os.link(paths["readable"], paths["work"] + "/linked"))
attempt("move a readable file into the working directory",
        lambda: os.rename(paths["readable"], paths["work"] + "/moved"))
attempt("reopen a readable file for writing",
        lambda: write(f"/proc/self/fd/{os.open(paths['readable'], os.O_RDONLY)}", "a"))
attempt("reopen a readable file's path for writing",
        lambda: write(f"/proc/self/fd/{os.open(paths['readable'], os.O_PATH)}", "a"))
attempt("write /dev/null", lambda: write("/dev/null"))
attempt("read /dev/zero", lambda: open("/dev/zero", "rb").read(1))
attempt("read /etc/hostname", lambda: open("/etc/hostname").read())
attempt("read the parent's environment", lambda: open(f"/proc/{os.getppid()}/environ", "rb").read())
attempt("connect over TCP", lambda: socket.create_connection(("127.0.0.1", paths["port"]), timeout=2))
attempt("bind a TCP port", lambda: socket.socket().bind(("127.0.0.1", 0)))
attempt("signal the parent", lambda: os.kill(os.getppid(), 0))
attempt("connect to an abstract socket", lambda: socket.socket(socket.AF_UNIX).connect(paths["abstract"]))
print(json.dumps({"held": held, "results": results}))
"""


def restricted(tmp_path: Path, **extra) -> dict:
    """Run the program with a readable folder, a working directory and ``/dev/null`` and ``/dev/zero``
    granted, as the grader's own user; what held and what each attempt gave."""
    readable, work, outside = tmp_path / "readable", tmp_path / "work", tmp_path / "outside"
    for folder in (readable, work, outside):
        folder.mkdir()
    (readable / "file").write_text("allowed")
    (outside / "secret").write_text("secret")
    import socket

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    abstract = socket.socket(socket.AF_UNIX)
    abstract.bind(b"\0micrograde-test-" + str(os.getpid()).encode())
    abstract.listen(1)
    paths = {"read": [str(readable)], "write": [str(work)], "devices": ["/dev/null", "/dev/zero"],
             "readable": str(readable / "file"), "outside": str(outside / "secret"), "work": str(work),
             "port": listener.getsockname()[1], "abstract": abstract.getsockname().decode("latin-1"), **extra}
    try:
        result = subprocess.run([sys.executable, "-c", PROGRAM, str(LANDLOCK), json.dumps(paths)],
                                capture_output=True, text=True, timeout=30)
    finally:
        listener.close()
        abstract.close()
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def kernel_abi() -> tuple[int, str]:
    """The kernel's Landlock ABI, asked as the child asks it (0 if none), and why there is none."""
    probe = ("import sys, types; m = types.ModuleType('l'); exec(open(sys.argv[1]).read(), m.__dict__)\n"
             "try:\n    print(m.abi(), '')\nexcept OSError as exc:\n    print(0, exc.strerror)")
    result = subprocess.run([sys.executable, "-c", probe, str(LANDLOCK)], capture_output=True, text=True, check=True)
    abi, _, why = result.stdout.strip().partition(" ")
    return int(abi), why


@pytest.fixture
def abi() -> int:
    version, why = kernel_abi()
    if version == 0:
        pytest.skip(f"this kernel offers no Landlock: {why}")
    return version


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Landlock is Linux's")
def test_only_what_was_granted_is_reachable(tmp_path, abi):
    seen = restricted(tmp_path)
    assert seen["held"] == {"abi": abi}
    results = seen["results"]
    allowed = ("read allowed", "list allowed", "make in the working directory", "rename in the working directory",
               "truncate in the working directory", "write /dev/null", "read /dev/zero")
    assert {name: results[name] for name in allowed} == dict.fromkeys(allowed, "ok")
    denied = ["write allowed", "read outside", "list outside", "write outside",
              "rename out of the working directory", "link out of the working directory", "remove outside",
              "read /etc/hostname", "read the parent's environment"]
    assert {name: results[name] for name in denied} == dict.fromkeys(denied, "EACCES")
    # Landlock refuses a link whose new place would give the file rights its old one does not (EXDEV)
    assert results["link a readable file into the working directory"] == "EXDEV"
    for name in ("move a readable file into the working directory", "reopen a readable file for writing",
                 "reopen a readable file's path for writing"):
        assert results[name] in ("EACCES", "EXDEV"), name
    assert (tmp_path / "outside" / "secret").read_text() == "secret"
    assert (tmp_path / "readable" / "file").read_text() == "allowed"
    if abi >= 4:
        assert results["connect over TCP"] == results["bind a TCP port"] == "EACCES"
    if abi >= 6:
        assert results["signal the parent"] == results["connect to an abstract socket"] == "EPERM"


def test_a_kernel_without_landlock_is_reported_not_raised(tmp_path):
    seen = restricted(tmp_path, unknown_call=True)
    assert seen["held"] == {"abi": 0, "error": "the kernel has no Landlock (ENOSYS)"}
    assert seen["results"]["read outside"] == "ok"  # nothing was restricted


def test_a_submission_without_namespaces_reaches_nothing_outside(tmp_path, abi, monkeypatch):
    """As graded where no namespaces exist: what the audit hook lets through (reads of anything not the
    grader's, listings) Landlock refuses, even to a child that reads files as root."""
    from helpers import SOLUTION
    from test_confinement import ATTEMPT, full_marks, graded, printed

    from grader.child import launcher

    secret = uuid.uuid4().hex
    home, cache, students = tmp_path / "home", tmp_path / "cache", tmp_path / "submissions"
    for folder in (home, cache, students / "alice"):
        folder.mkdir(parents=True)
    (home / ".netrc").write_text(f"password {secret}\n")
    (home / ".netrc").chmod(0o600)  # root's alone: a child reading as root could read it, but for Landlock
    (cache / "replay.json").write_text("{}")
    (students / "alice" / "engine.py").write_text(f"# {secret}\n")
    monkeypatch.setenv("MICROGRADE_SANDBOX", "none")
    monkeypatch.setenv("MICROGRADE_CACHE_DIR", str(cache))
    launcher.detect.cache_clear()
    site = sysconfig.get_paths()["purelib"]
    source = SOLUTION + ATTEMPT + f"""
import os, sys
site = [p for p in sys.path if p.endswith("site-packages")][0]
attempt("list site-packages", lambda: os.listdir(site))
attempt("read an editable install's finder", lambda: [open(os.path.join(site, n)).read() for n in
                                                     ("__editable___micrograde_0_1_0_finder.py", "micrograde.pth")])
attempt("read the grader's home", lambda: open({str(home / ".netrc")!r}).read())
attempt("read another student's work", lambda: open({str(students / "alice" / "engine.py")!r}).read())
attempt("list the students", lambda: os.listdir({str(students)!r}))
attempt("list /tmp", lambda: os.listdir("/tmp"))
attempt("list the grader's home", lambda: os.listdir({str(home)!r}))
attempt("rewrite the cache", lambda: open({str(cache / "replay.json")!r}, "w").write("[]"))
attempt("plant a .pth", lambda: open({str(Path(site) / "evil.pth")!r}, "w").write("import os"))
attempt("write outside", lambda: open({str(tmp_path / "outside")!r}, "w").write("x"))
attempt("read the grader's environment", lambda: open(f"/proc/{{os.getppid()}}/environ").read())
"""
    try:
        report = graded(tmp_path, source)
    finally:
        launcher.detect.cache_clear()
    seen = printed(report)
    assert full_marks(report), report.diagnoses
    assert len(seen) == 11 and {name: text for name, text in seen.items() if not text.startswith("refused")} == {}
    assert secret not in json.dumps(report.to_json())
    assert (cache / "replay.json").read_text() == "{}" and not (Path(site) / "evil.pth").exists()
    assert not (tmp_path / "outside").exists()
    assert report.sandbox["tamper_proof"] is True and report.sandbox["landlock"] == f"ABI {abi}"


def test_what_lies_in_the_temporary_directory_is_read_by_its_rules_alone(tmp_path, abi, monkeypatch):
    """A file the child may read that lies in the temporary directory (a Python there, on a CI runner or
    in a container) opens nothing beside it: the working directories have a folder of their own in the
    temporary directory, and Landlock grants that folder, not the temporary directory around the files
    the child may read (where a checkout, a virtualenv and a course's files lie)."""
    from helpers import SOLUTION
    from test_confinement import ATTEMPT, full_marks, graded, printed

    from grader.child import launcher, sandbox, workdirs

    course = Path(tempfile.mkdtemp(prefix="micrograde-test-course-"))
    try:
        (course / "readable.txt").write_text("granted\n")
        (course / "reference.py").write_text("the course's own answers\n")
        monkeypatch.setattr(sandbox, "LIBRARY_FILES", (*sandbox.LIBRARY_FILES, str(course / "readable.txt")))
        monkeypatch.setenv("MICROGRADE_SANDBOX", "none")
        launcher.detect.cache_clear()
        source = SOLUTION + ATTEMPT + f"""
attempt("read what it may", lambda: open({str(course / "readable.txt")!r}).read())
attempt("read beside it", lambda: open({str(course / "reference.py")!r}).read())
attempt("list beside it", lambda: __import__("os").listdir({str(course)!r}))
"""
        try:
            report = graded(tmp_path, source)
        finally:
            launcher.detect.cache_clear()
    finally:
        shutil.rmtree(course)
    seen = printed(report)
    assert full_marks(report), report.diagnoses
    assert seen["read what it may"].startswith("ok") and seen["read beside it"].startswith("refused"), seen
    assert seen["list beside it"].startswith("refused"), seen
    assert Path(workdirs.working_directories()).parent == Path(tempfile.gettempdir())


def test_what_the_child_may_read_leaves_out_the_grader_and_forbidden_libraries(tmp_path, monkeypatch):
    """Granted whole where nothing is left out beneath, entry by entry down to what is."""
    from grader.child.inside import allowlist

    def make(*paths):
        for path in paths:
            (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / path).touch()

    make("stdlib/os.py", "stdlib/json/__init__.py", "stdlib/site-packages/torch/__init__.py",
         "clean/lib/os.py", "clean/lib/site-packages/pip/__init__.py",
         "venv/site-packages/numpy/__init__.py", "venv/site-packages/numpy.libs/libblas.so",
         "venv/site-packages/grader/__init__.py", "venv/site-packages/micrograde-0.1.0.dist-info/RECORD",
         "venv/site-packages/__editable___micrograde_0_1_0_finder.py", "venv/site-packages/sympy/__init__.py",
         "venv/site-packages/__pycache__/six.cpython-311.pyc",
         "venv/site-packages/__pycache__/__editable___micrograde_0_1_0_finder.cpython-311.pyc",
         "libs/x86_64-linux-gnu/libc.so.6", "checkout/reference/engine.py")
    root = str(tmp_path)
    monkeypatch.setattr(sys, "path", [f"{root}/stdlib", f"{root}/clean/lib", f"{root}/venv/site-packages"])
    rules = {"libraries": [f"{root}/libs"], "read": ["/etc/ld.so.cache"], "leave_out": ["grader", "micrograde",
                                                                                       "reference", "sympy", "torch"]}
    found = allowlist.readable(rules, [f"{root}/checkout/reference"])
    assert sorted(p.removeprefix(root) for p in found if p.startswith(root)) == [
        "/clean/lib",  # its site-packages holds nothing left out: one rule
        "/libs",
        "/stdlib/json", "/stdlib/os.py",  # its site-packages (off sys.path) holds torch: left out whole
        "/venv/site-packages/__pycache__/six.cpython-311.pyc",
        "/venv/site-packages/numpy", "/venv/site-packages/numpy.libs",
    ]
    assert "/etc/ld.so.cache" in found and not any(p.startswith("/proc") for p in found)  # the child adds its own


def test_a_childs_own_layer_reads_nothing_of_the_working_directories_but_what_the_long_list_needs(tmp_path,
                                                                                                  monkeypatch):
    """Without namespaces the fork server's layer lets every child read and write the whole directory of
    working directories: each child's own layer (``allowlist.elsewhere``) must grant nothing there but
    the trees the long list reads from (and the child its own working directory, added apart)."""
    from grader.child.inside import allowlist

    root = tmp_path.resolve()
    holder = root / "work"
    for folder in (holder / "alice", holder / "python", root / "venv" / "site", root / "elsewhere"):
        folder.mkdir(parents=True)
    (root / "beside.txt").write_text("x")
    monkeypatch.setattr(sys, "path", [str(root / "venv" / "site"), str(holder / "python")])
    rules = {"libraries": [], "read": [], "leave_out": []}
    top = "/" + str(holder).split("/")[1]
    found = allowlist.elsewhere(str(holder), rules)
    assert "/proc" not in found and "/usr" in found and top not in found
    assert sorted(p for p in found if p.startswith(top + "/")) == sorted([str(holder / "python"), str(root / "venv")])
    monkeypatch.setattr(sys, "path", [str(root)])  # a tree that holds the directory of working directories
    found = allowlist.elsewhere(str(holder), rules)
    assert sorted(p for p in found if p.startswith(top + "/")) == sorted(
        str(root / name) for name in ("beside.txt", "elsewhere", "venv"))
