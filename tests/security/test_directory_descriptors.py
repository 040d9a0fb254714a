"""The audit hook and paths relative to a directory descriptor, tried as a hostile student would.

A submission opens a directory it may read (``/``, ``/proc``, site-packages, the
batch's output folder) and acts relative to it: the hook judges paths, and
``os.open(name, flags, dir_fd=d)`` names something its path alone does not.
Without namespaces, with Landlock and with it turned off (the hook alone, as on
macOS): every route is refused, a route to the grader's files counts as reading
them, and nothing outside the working directory changes.
"""

from __future__ import annotations

import json
import sysconfig
import uuid
from pathlib import Path

import pytest
from helpers import ROOT, SOLUTION
from test_confinement import full_marks, graded, printed

from grader.child import launcher

REFERENCE = ROOT / "reference" / "engine.py"
SAYING_WHY = '''
def attempt(name, action):
    try:
        result = action()
        print(f"{name}: ok {result!r}"[:200])
    except BaseException as exc:
        print(f"{name}: refused {type(exc).__name__} {exc}"[:300])
'''


@pytest.fixture(params=["landlock", "hook alone"])
def without_namespaces(request, monkeypatch):
    monkeypatch.setenv("MICROGRADE_SANDBOX", "none")
    monkeypatch.setenv("MICROGRADE_LANDLOCK", "1" if request.param == "landlock" else "0")
    monkeypatch.setenv("MICROGRADE_SECRET", secret := uuid.uuid4().hex)
    launcher.detect.cache_clear()
    yield secret
    launcher.detect.cache_clear()


def test_every_route_relative_to_a_directory_descriptor_is_refused(tmp_path, without_namespaces):
    out = tmp_path / "out"
    out.mkdir()
    (out / "grades.csv").write_text("student,score\nalice,71\n")
    site = sysconfig.get_paths()["purelib"]
    out.chmod(0o777)  # as the grader's own user would find them: not closed by permissions
    (out / "grades.csv").chmod(0o666)
    source = SOLUTION + SAYING_WHY + f"""
import os, sys
O = os.O_RDONLY
root, proc, out, site = (os.open(p, os.O_PATH) for p in ("/", "/proc", {str(out)!r}, {site!r}))
parent = os.getppid()
attempt("environ relative to /proc", lambda: os.read(os.open(f"{{parent}}/environ", O, dir_fd=proc), 4096))
attempt("environ relative to /", lambda: os.read(os.open(f"proc/{{parent}}/environ", O, dir_fd=root), 4096))
attempt("pth in site-packages", lambda: os.open("evil.pth", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=site))
attempt("open with an opener", lambda: open("grades.csv", "w", opener=lambda p, f: os.open(p, f, dir_fd=out)))
attempt("rename into the output", lambda: (open("forged", "w").write("x"),
                                           os.rename("forged", "grades.csv", dst_dir_fd=out)))
attempt("remove in the output", lambda: os.remove("grades.csv", dir_fd=out))
attempt("mkdir in the output", lambda: os.mkdir("planted", dir_fd=out))
attempt("link into the output", lambda: os.link("forged", "linked", dst_dir_fd=out))
attempt("symlink in the output", lambda: os.symlink("/etc/passwd", "planted", dir_fd=out))
attempt("chmod in the output", lambda: os.chmod("grades.csv", 0o666, dir_fd=out))
attempt("utime in the output", lambda: os.utime("grades.csv", (0, 0), dir_fd=out))
attempt("list by descriptor", lambda: os.listdir(out))
attempt("scan by descriptor", lambda: list(os.scandir(out)))
attempt("chmod by descriptor", lambda: os.chmod(out, 0o777))
attempt("chdir by descriptor", lambda: (os.chdir(proc), open(f"{{parent}}/environ").read()))
attempt("fchdir", lambda: (os.fchdir(out), open("grades.csv", "a").write("bob,100")))
attempt("the real os.open", lambda: os.open.__kwdefaults__)
attempt("os.open from supports_dir_fd", lambda: next(f for f in os.supports_dir_fd if f.__name__ == "open"))
import _imp, importlib, importlib.machinery, posix
attempt("a second posix", lambda: _imp.create_builtin(importlib.machinery.ModuleSpec("posix", None)))
attempt("a second _imp", lambda: _imp.create_builtin(importlib.machinery.ModuleSpec("_imp", None)))
attempt("posix reloaded", lambda: importlib.reload(posix))
def import_again(name):
    module = sys.modules.pop(name)
    try:
        return __import__(name)
    finally:
        sys.modules[name] = module
attempt("posix imported again", lambda: import_again("posix"))
attempt("os.open still guarded", lambda: os.open("grades.csv", O, dir_fd=out))
"""
    report = graded(tmp_path, source)
    seen = printed(report)
    assert full_marks(report), report.diagnoses
    names = [line.partition(", lambda")[0].removeprefix('attempt("')[:-1] for line in source.splitlines()
             if line.startswith("attempt(")]
    assert len(names) == 23
    # every one refused by the hook itself, before the kernel was asked
    why = {name: seen.get(name, "missing") for name in names}
    assert why.pop("os.open from supports_dir_fd").rstrip() == "refused StopIteration"  # not there to be found
    assert {name: text for name, text in why.items()
            if not text.startswith("refused") or not text.endswith(("while grading", "off limits"))} == {}
    assert (out / "grades.csv").read_text() == "student,score\nalice,71\n"
    assert sorted(p.name for p in out.iterdir()) == ["grades.csv"] and (out / "grades.csv").stat().st_mtime > 0
    assert not Path(site, "evil.pth").exists()
    assert without_namespaces not in json.dumps(report.to_json())


def test_reaching_the_reference_relative_to_a_directory_descriptor_counts_as_reading_it(tmp_path, without_namespaces):
    source = SOLUTION + f"""
import os
root = os.open("/", os.O_PATH)
try:
    exec(os.read(os.open({str(REFERENCE)[1:]!r}, os.O_RDONLY, dir_fd=root), 1 << 20))
except OSError:
    pass
"""
    report = graded(tmp_path, source)
    assert report.codes("submission") == ["forbidden-import"] and report.score == 0


def test_the_hook_decides_with_functions_the_submission_cannot_replace(tmp_path, without_namespaces):
    """``os.path.realpath`` asks ``os.lstat`` and ``os.readlink`` when it runs: replaced, they made a path
    outside the working directory resolve inside it, and the hook let the write through; a replaced
    ``os.getpid`` made the grader's ``/proc`` entry the child's own."""
    outside = tmp_path / "outside"
    tmp_path.chmod(0o777)  # as the grader's own user would find it: not closed by permissions
    source = SOLUTION + SAYING_WHY + f"""
import os
if not os.path.islink("a-link"):  # the child that grades train_step loads this too, in the same folder
    os.symlink("anything", "a-link")
work, lstat, readlink = os.getcwd(), os.lstat, os.readlink
os.lstat = lambda p, *a, **k: lstat(work + "/a-link") if p == {str(outside)!r} else lstat(p, *a, **k)
os.readlink = lambda p, *a, **k: work + "/inside" if p == {str(outside)!r} else readlink(p, *a, **k)
attempt("fooled", lambda: os.path.realpath({str(outside)!r}).startswith(work))
attempt("write outside", lambda: open({str(outside)!r}, "w").write("forged"))
parent = os.getppid()
os.getpid = lambda: parent  # the grader's /proc entry then looks like the child's own
attempt("the grader's environment", lambda: open(f"/proc/{{parent}}/environ").read())
"""
    report = graded(tmp_path, source)
    seen = printed(report)
    assert seen["fooled"] == "ok True"  # the attack works on os.path.realpath itself
    assert seen["write outside"].endswith("a submission may only write in its working directory")
    assert seen["the grader's environment"].endswith("other processes are off limits")
    assert not outside.exists() and full_marks(report), report.diagnoses
