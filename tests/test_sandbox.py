"""The kernel-level layer on its own, without the audit hook: what namespaces really stop."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from helpers import ROOT, processes_with

from grader.child import sandbox

PROBE = r"""
import os, subprocess, sys
sys.path.insert(0, sys.argv[1])
from grader.child.harness import confine
workdir, hidden, outside = sys.argv[2], sys.argv[3], sys.argv[4]
print("confine:", confine(workdir, [hidden]))
def attempt(what, action):
    try:
        action()
        print(what, "ok")
    except OSError as exc:
        print(what, "refused", exc.errno)
attempt("write-outside", lambda: open(outside, "w").write("x"))
attempt("write-inside", lambda: open(os.path.join(workdir, "f"), "w").write("x"))
attempt("read-hidden", lambda: open(os.path.join(hidden, "engine.py")).read())
import socket
attempt("network", lambda: socket.create_connection(("127.0.0.1", 9), timeout=1))
# a daemon that escapes its process group: setsid in a double fork
subprocess.Popen(["sh", "-c", "setsid sh -c 'sleep 600 micrograde-escapee' &"])
sys.stdout.flush()
import time
time.sleep(0.5)
"""


@pytest.fixture
def isolated():
    sandbox.detect.cache_clear()
    box = sandbox.detect()
    if not box.isolated:
        pytest.skip(f"no namespaces on this machine: {box.detail}")
    return box


def escapees() -> list[str]:
    return processes_with(b"micrograde-escapee")


def test_namespaces_confine_without_the_audit_hook(isolated, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    outside = tmp_path / "outside"
    hidden = ROOT / "reference"
    argv = isolated.wrap([sys.executable, "-c", PROBE, str(ROOT), str(work), str(hidden), str(outside)])
    result = subprocess.run(argv, capture_output=True, text=True, timeout=30, start_new_session=True)
    lines = dict(line.split(" ", 1) for line in result.stdout.splitlines())
    assert lines["confine:"].startswith("grader files hidden; read-only"), result.stdout + result.stderr
    assert lines["write-outside"].startswith("refused")
    assert lines["write-inside"] == "ok"
    assert lines["read-hidden"].startswith("refused")
    assert lines["network"].startswith("refused")
    assert not outside.exists()
    assert (hidden / "engine.py").is_file()  # hidden only inside the sandbox
    deadline = time.monotonic() + 5
    while escapees() and time.monotonic() < deadline:
        time.sleep(0.05)
    leftover = escapees()
    for pid in leftover:
        os.kill(int(pid), signal.SIGKILL)
    assert leftover == [], "a daemonised process outlived its sandbox"


def test_limits_are_applied_to_the_child():
    code = ("import resource; print(*[resource.getrlimit(r)[0] for r in "
            "(resource.RLIMIT_AS, resource.RLIMIT_CPU, resource.RLIMIT_FSIZE, resource.RLIMIT_NOFILE)])")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            preexec_fn=lambda: sandbox.limits(42))
    memory, cpu, fsize, nofile = map(int, result.stdout.split())
    assert (memory, cpu, fsize, nofile) == (sandbox.MEMORY_BYTES, 42, sandbox.FILE_BYTES, sandbox.OPEN_FILES)


def test_turning_namespaces_off(monkeypatch):
    monkeypatch.setenv("MICROGRADE_SANDBOX", "none")
    sandbox.detect.cache_clear()
    try:
        box = sandbox.detect()
        assert box.mode == "limits" and box.wrap(["python"]) == ["python"]
        assert box.to_json()["processes_contained"] is False
    finally:
        sandbox.detect.cache_clear()
