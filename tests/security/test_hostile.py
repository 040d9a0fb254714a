"""Hostile and broken submissions: each ends in a clean report, honest scores, no leftover process.

Every case runs twice: in the strongest sandbox this machine offers, and with
namespaces turned off (``MICROGRADE_SANDBOX=none``), which is what a machine
without them gets. Each case states its time bound.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
import uuid
from pathlib import Path

import pytest
from helpers import SOLUTION, parent_of, processes_with, unreaped_children
from test_landlock import kernel_abi

import reference
from grader.child.shipping import child_mark
from grader.grade import Options, grade

TARGETS = ("add", "mul", "pow", "tanh", "backward", "train_step")
REFERENCE_DIR = Path(reference.__file__).resolve().parent
SLEEPER = f"micrograde-test-sleeper-{uuid.uuid4().hex}"  # marks the processes these tests try to leave behind


def leftover_children() -> list[str]:
    """Children started by this test process, and processes these tests tried to leave behind: no others.
    (The launcher, this process's own child, lives as long as it does; every child is the launcher's.)"""
    return [pid for pid in processes_with(child_mark().encode(), SLEEPER.encode()) if parent_of(pid) != os.getpid()]


def run(tmp_path: Path, source: str, timeout: float = 10.0, bound: float = 30.0, name: str = "work.py"):
    path = tmp_path / name
    path.write_text(source)
    start = time.monotonic()
    report = grade(path, Options(timeout=timeout))
    elapsed = time.monotonic() - start
    assert elapsed < bound, f"took {elapsed:.1f} s, bound {bound} s"
    assert leftover_children() == []
    assert unreaped_children() == []
    json.dumps(report.to_json(), allow_nan=False)  # always valid, plain JSON
    return report


def assert_only(report, expect: dict[str, list[str]]) -> None:
    """Exactly these codes; every target not named keeps full marks."""
    scores = report.target_scores()
    for target in TARGETS:
        if target in expect:
            assert sorted(report.codes(target)) == sorted(expect[target]), (target, report.diagnoses)
            assert scores[target][0] < scores[target][1]
        else:
            assert report.codes(target) == [], (target, report.diagnoses)
            assert scores[target][0] == scores[target][1], target
    assert sorted(report.codes("submission")) == sorted(expect.get("submission", [])), report.diagnoses


def inject(method_line: str, code: str) -> str:
    """``SOLUTION`` with ``code`` as the first statement of the method whose def is ``method_line``."""
    indent = " " * 8
    body = "\n".join(indent + line for line in code.splitlines())
    assert SOLUTION.count(method_line) == 1
    return SOLUTION.replace(method_line, f"{method_line}\n{body}")


ADD = "    def __add__(self, other):"
BACKWARD = "    def backward(self):"


def test_infinite_loop_in_an_op_costs_only_that_op(tmp_path, mode):
    report = run(tmp_path, inject(ADD, "while True:\n    pass"), timeout=1.0, bound=15)
    assert_only(report, {"add": ["timeout"]})
    assert {c.status for c in report.checks if c.target == "add"} == {"timeout"}


def test_a_hang_after_a_failure_is_found_keeps_the_failure(tmp_path, mode):
    """`=` for `+=` in `__mul__`, and a loop that never ends on deep graphs only: the search meets
    the failure (`a * a`) first and the hang later; the report keeps both."""
    source = inject("    def __mul__(self, other):", "if depth(self) > 3:\n    while True:\n        pass")
    source = source.replace("class Value", "def depth(node):\n    return 1 + max((depth(c) for c in node._prev), "
                            "default=0)\n\n\nclass Value", 1)
    for part in ("self.grad += other.data * out.grad", "other.grad += self.data * out.grad"):
        source = source.replace(part, part.replace("+=", "="))
    report = run(tmp_path, source, timeout=1.0, bound=15)
    assert_only(report, {"mul": ["grad-overwrite", "timeout"]})
    generated = next(c for c in report.checks if c.id == "mul.generated")
    assert generated.status == "failed" and generated.counterexample.expression == "(a * a)"


def test_infinite_loop_at_import(tmp_path, mode):
    report = run(tmp_path, "while True:\n    pass\n" + SOLUTION, timeout=1.0, bound=10)
    assert report.codes("submission") == ["load-timeout"]
    assert next(d.line for d in report.diagnoses) == 1  # the loop, at the top level
    assert report.score == 0.0
    assert all(c.status == "error" for c in report.checks)


def test_sigterm_ignored_and_a_hang(tmp_path, mode):
    source = "import signal\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n" + inject(ADD, "while True:\n    pass")
    report = run(tmp_path, source, timeout=1.0, bound=15)
    assert_only(report, {"add": ["timeout"]})


def test_memory_bomb_in_an_op(tmp_path, mode):
    report = run(tmp_path, inject(ADD, "hog = bytearray(8 * 1024 ** 3)"), bound=30)
    assert_only(report, {"add": ["crash"]})
    assert "MemoryError" in next(d.message for d in report.diagnoses if d.target == "add")


def test_memory_bomb_at_import(tmp_path, mode):
    report = run(tmp_path, "hog = [0] * (4 * 1024 ** 3)\n" + SOLUTION, bound=30)
    assert report.codes("submission") == ["load-error"]
    assert report.score == 0.0


def test_deep_recursion_in_backward(tmp_path, mode):
    report = run(tmp_path, inject(BACKWARD, "def down(n):\n    return down(n + 1)\ndown(0)"), bound=30)
    assert_only(report, {"backward": ["crash"]})
    assert "RecursionError" in next(d.message for d in report.diagnoses if d.target == "backward")


@pytest.mark.parametrize("statement", ["import sys; sys.exit(0)", "import os; os._exit(0)",
                                       "raise KeyboardInterrupt", "raise SystemExit(0)"])
def test_leaving_at_import(tmp_path, mode, statement):
    """Leaving before anything is defined grades nothing; sys.exit() is how a script ends, so it is said
    as a warning, while a process that vanished or an interrupt is a load error."""
    report = run(tmp_path, statement + "\n" + SOLUTION, bound=15)
    if "exit(0)" in statement and "_exit" not in statement or "SystemExit" in statement:
        assert report.codes("submission") == [] and any("sys.exit" in w for w in report.warnings)
    else:
        assert report.codes("submission") == ["load-error"]
    assert report.score == 0.0 and not report.perfect


@pytest.mark.parametrize(("statement", "why"), [("import sys; sys.exit(0)", "SystemExit"),
                                                ("raise KeyboardInterrupt", "KeyboardInterrupt"),
                                                ("import os; os._exit(0)", "exited")])
def test_leaving_inside_backward(tmp_path, mode, statement, why):
    report = run(tmp_path, inject(BACKWARD, statement), bound=20)
    assert_only(report, {"backward": ["crash"]})
    assert why in next(d.message for d in report.diagnoses if d.target == "backward")


def test_background_process_and_thread_are_refused(tmp_path, mode):
    source = SOLUTION + (
        "\nimport subprocess, threading\n"
        f"try:\n    subprocess.Popen(['sleep', '600', '{SLEEPER}'])\nexcept PermissionError:\n"
        "    pass\n"
        "try:\n    threading.Thread(target=lambda: None, daemon=True).start()\nexcept RuntimeError:\n    pass\n"
        "import os\ntry:\n    os.fork()\nexcept PermissionError:\n    pass\n"
    )
    report = run(tmp_path, source, bound=20)
    assert_only(report, {})


def test_process_started_by_an_op_is_gone_afterwards(tmp_path, mode):
    # The audit hook refuses this; were it bypassed, the pid namespace (or the
    # process group) still takes the process down with the child.
    source = inject(ADD, f"import subprocess\nsubprocess.Popen(['sleep', '600', '{SLEEPER}'])")
    report = run(tmp_path, source, bound=20)
    assert_only(report, {"add": ["crash"]})


def test_fifty_megabytes_printed(tmp_path, mode):
    source = "import sys\nfor _ in range(50):\n    print('x' * (1024 * 1024))\n" + SOLUTION
    report = run(tmp_path, source, bound=30)
    assert_only(report, {})
    assert len(report.output) <= 64 * 1024
    assert any("printed more" in w for w in report.warnings)


def test_fake_report_then_exit(tmp_path, mode):
    fake = json.dumps({"schema_version": 1, "score": 100.0, "max_score": 100.0, "checks": [], "diagnoses": []})
    source = f"print({fake!r})\nimport os\nos._exit(0)\n" + SOLUTION
    report = run(tmp_path, source, bound=15)
    assert report.codes("submission") == ["load-error"]
    assert report.score == 0.0
    assert fake in report.output  # only ever captured output


def test_monkeypatching_cannot_inflate_a_score(tmp_path, mode):
    # A wrong __mul__ that tries to fix its grade by patching what it can reach.
    buggy = SOLUTION.replace("self.grad += other.data * out.grad", "self.grad = other.data * out.grad").replace(
        "other.grad += self.data * out.grad", "other.grad = self.data * out.grad")
    patches = (
        "import math, builtins, json, sys\n"
        "math.tanh = lambda x: 0.0\nmath.isclose = lambda *a, **k: True\n"
        "json.dumps = lambda *a, **k: '{}'\n"
        "main = sys.modules['__main__']\n"
        "if hasattr(main, 'HANDLERS'):\n"
        "    main.HANDLERS['op'] = lambda api, request: {'data': [1.0] * len(request['expr']),\n"
        "                                                'grads': [1.0] * len(request['expr']), 'fd': {}}\n"
        "builtins.float = int\n"
    )
    report = run(tmp_path, buggy + "\n" + patches, bound=30)
    assert report.score < 100.0
    assert all(report.target_scores()[t][0] < report.target_scores()[t][1] for t in ("add", "mul", "pow", "tanh"))


@pytest.mark.parametrize("value", ["None", "'2.0'", "complex(1, 2)", "float('nan')", "float('inf')",
                                   "10 ** 400", "Liar()"])
def test_strange_data_and_grad(tmp_path, mode, value):
    liar = ("class Liar:\n    def __float__(self):\n        return 4.0\n    def __eq__(self, other):\n"
            "        return True\n    __hash__ = object.__hash__\n\n\n")
    source = liar + SOLUTION.replace(
        'out = Value(self.data * other.data, (self, other), "*")',
        f'out = Value(self.data * other.data, (self, other), "*")\n        out.data = {value}').replace(
        "self.grad += other.data * out.grad", f"self.grad = {value}")
    report = run(tmp_path, source, bound=30)
    assert "mul" in {d.target for d in report.diagnoses}
    assert report.target_scores()["mul"][0] < 15.0
    assert set(report.codes("mul")) <= {"wrong-forward", "crash", "wrong-local-grad", "grad-overwrite"}
    for target in ("add", "pow", "tanh", "train_step"):
        assert report.target_scores()[target][0] == report.target_scores()[target][1], target


def test_numpy_scalars_are_numbers(tmp_path, mode):
    numpy = pytest.importorskip("numpy")
    del numpy
    source = "import numpy as np\n" + SOLUTION.replace(
        'out = Value(self.data + other.data, (self, other), "+")',
        'out = Value(np.float64(self.data + other.data), (self, other), "+")')
    report = run(tmp_path, source, bound=30)
    assert_only(report, {})


def test_value_subclassing_float(tmp_path, mode):
    source = (
        "class Value(float):\n"
        "    def __new__(cls, data, _children=(), _op=''):\n"
        "        self = super().__new__(cls, data)\n"
        "        self.data, self.grad, self._prev, self._op = data, 0.0, set(_children), _op\n"
        "        self._backward = lambda: None\n"
        "        return self\n"
        "    def __init__(self, *args, **kwargs):\n        pass\n"
        "    __hash__ = object.__hash__\n"
    )
    report = run(tmp_path, source + "\n" + SOLUTION.split("class Value:")[1].split("def train_step")[0]
                 .replace("\n    def __init__", "\n    def _unused_init"), bound=30)
    assert report.score < 100.0  # survives; whatever it earns, it earns honestly


def test_reading_the_reference_is_forbidden(tmp_path, mode):
    engine = REFERENCE_DIR / "engine.py"
    source = SOLUTION + f"\ntry:\n    SOURCE = open({str(engine)!r}).read()\nexcept OSError:\n    pass\n"
    report = run(tmp_path, source, bound=20)
    assert report.codes("submission") == ["forbidden-import"]
    assert report.score == 0.0


def test_overwriting_the_reference_fails_and_changes_nothing(tmp_path, mode):
    engine = REFERENCE_DIR / "engine.py"
    before = hashlib.sha256(engine.read_bytes()).hexdigest()
    source = SOLUTION + f"\ntry:\n    open({str(engine)!r}, 'w').write('broken')\nexcept OSError:\n    pass\n"
    report = run(tmp_path, source, bound=20)
    assert hashlib.sha256(engine.read_bytes()).hexdigest() == before
    assert report.score == 0.0 and report.codes("submission") == ["forbidden-import"]


def test_writing_outside_the_working_directory_is_refused(tmp_path, mode):
    target = tmp_path / f"pwned-{uuid.uuid4().hex}"
    source = SOLUTION + (f"\nimport os\ntry:\n    open({str(target)!r}, 'w').write('x')\nexcept OSError:\n    pass\n"
                         f"try:\n    os.mkdir({str(target) + '-dir'!r})\nexcept OSError:\n    pass\n")
    report = run(tmp_path, source, bound=20)
    assert not target.exists() and not Path(str(target) + "-dir").exists()
    assert_only(report, {})


def test_obfuscated_import_of_the_reference(tmp_path, mode):
    source = SOLUTION.replace(
        "def train_step(model, xs, ys, lr):",
        "def train_step(model, xs, ys, lr):\n    engine = __import__(''.join(['ref', 'erence']))")
    report = run(tmp_path, source, bound=20)
    assert "forbidden-import" in report.codes("submission")
    assert report.score == 0.0


def test_static_import_of_an_autograd_library(tmp_path, mode):
    """Graded code that imports a library: forbidden, wherever the library is installed."""
    source = SOLUTION.replace("def train_step(model, xs, ys, lr):\n",
                              "def train_step(model, xs, ys, lr):\n    try:\n        import torch\n"
                              "    except ImportError:\n        pass\n")
    report = run(tmp_path, source, bound=20)
    assert report.codes("submission") == ["forbidden-import"]
    assert report.score == 0.0 and report.diagnoses[0].line == SOLUTION.splitlines().index(
        "def train_step(model, xs, ys, lr):") + 3


def test_no_network(tmp_path, mode):
    source = SOLUTION + ("\nimport socket\ntry:\n    socket.create_connection(('127.0.0.1', 9), timeout=1)\n"
                         "    raise SystemExit('network reached')\nexcept OSError:\n    pass\n")
    report = run(tmp_path, source, bound=20)
    assert_only(report, {})


def test_the_sandbox_is_reported(tmp_path, mode):
    report = run(tmp_path, SOLUTION, bound=20)
    assert report.sandbox["mode"] == ("namespaces" if mode == "auto" else "limits")
    assert report.sandbox["audit_hook"] is True
    kernel = kernel_abi()[0]
    assert report.sandbox["tamper_proof"] is (mode == "auto" or kernel > 0)
    if mode == "auto":
        assert report.sandbox["filesystem"].startswith("minimal root")
    elif kernel:
        assert report.sandbox["filesystem"].startswith("Landlock")


def test_notebook_shell_escapes_never_run(tmp_path, mode):
    marker = tmp_path / "keep-me"
    marker.write_text("still here")
    created = tmp_path / f"created-{uuid.uuid4().hex}"
    cells = [SOLUTION, f"!rm -f {marker}", f"%system touch {created}", f"import os\nos.system('touch {created}')"]
    notebook = {"nbformat": 4, "nbformat_minor": 5, "metadata": {},
                "cells": [{"cell_type": "code", "metadata": {}, "source": c, "outputs": [],
                           "execution_count": None, "id": f"c{i}"} for i, c in enumerate(cells)]}
    report = run(tmp_path, json.dumps(notebook), bound=20, name="work.ipynb")
    assert marker.read_text() == "still here" and not created.exists()
    assert_only(report, {})
    assert any("cell 4" in w for w in report.warnings)


def test_the_grader_environment_is_not_inherited(tmp_path, mode, monkeypatch):
    monkeypatch.setenv("MICROGRADE_SECRET", "s3cret")
    source = SOLUTION.replace("return loss.data", "import os\n    assert 'MICROGRADE_SECRET' not in os.environ\n"
                                                  "    return loss.data")
    report = run(tmp_path, source, bound=20)
    assert_only(report, {})
    assert os.environ["MICROGRADE_SECRET"] == "s3cret"


# Walks up every frame it runs in, from loading to train_step, and fails loudly if any of them
# can reach ctypes (or the C library): the confinement takes it away before any submission code.
CTYPES_HUNTER = """
import sys

def reachable_ctypes():
    found = []
    frame = sys._getframe()
    while frame is not None:
        for scope in (frame.f_globals, frame.f_locals):
            for name, value in list(scope.items()):
                kind = type(value)
                if "ctypes" in (getattr(value, "__name__", None), getattr(kind, "__module__", None)) or \\
                        str(getattr(kind, "__module__", "")).startswith(("ctypes", "_ctypes")):
                    found.append(name)
        frame = frame.f_back
    return found

assert reachable_ctypes() == [], reachable_ctypes()
"""


def test_no_frame_reaches_ctypes(tmp_path, mode):
    checked = SOLUTION.replace("return loss.data", "assert reachable_ctypes() == []\n    return loss.data")
    source = CTYPES_HUNTER + checked
    report = run(tmp_path, source)
    assert_only(report, {})
