"""``micrograde grade --execute`` attacked from the notebook its kernel runs, in every platform mode.

The kernel runs the student's cells, so each cell here is what a hostile student writes once they know
the TA will run their notebook: it does nothing while graded (the grading children have no
``get_ipython``) and, in the kernel, rewrites the grader's report modules (the report is written after
the kernel ran), plants a ``.pth`` in the grader's site-packages (the next grade would run it), writes
beside the working folder and in a canary folder of the grader's user, reads every process's
environment (the grader's holds ``MICROGRADE_TEST_SECRET``) and raises what it read (a failing cell's
message goes into the report), and leaves ``sleep 600`` running by every way Python has. Each test
asserts: the score of the same notebook graded without ``--execute`` in Gradescope's ``results.json``,
every attack cell reported as failing (so it ran, in the kernel), the grader's trees and the canary
byte-identical, nothing new in ``/tmp``, the secret shown nowhere, no ``sleep`` left, and the kernel's
own sandbox in the report (tamper-proof; ``nobody`` where the grader is root).
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from helpers import SOLUTION, processes_with
from test_notebook import as_notebook
from test_platform_attacks import canary, watch  # noqa: F401 (a fixture)
from test_platforms import BUGGY

import reference.engine

REFERENCE = "obviously correct"  # a phrase of the reference engine's, that no report holds
KERNEL_ONLY = "try:\n    get_ipython\nexcept NameError:\n    pass  # graded: nothing to see\nelse:\n"
ATTACKS = {
    "rewrite the grader's report modules": """
    for path in REPORT_MODULES:
        with open(path, "a") as module:
            module.write("\\nrender_gradescope = lambda report, **options: '{\\"score\\": 100.0}'\\n")
    raise RuntimeError("rewrote the report modules")""",
    "plant a .pth": """
    for folder in SITE_PACKAGES:
        with open(folder + "/zz-kernel.pth", "w") as pth:
            pth.write(f"import os; open({CANARY!r} + '/pth-ran', 'w')\\n")
    raise RuntimeError("planted")""",
    "write outside the working folder": """
    import os
    for path in (CANARY + "/notes.txt", "/tmp/" + MARK, os.path.expanduser("~/../" + MARK)):
        with open(path, "w") as out:
            out.write("written by the kernel")
    raise RuntimeError("wrote outside")""",
    "read the grader's environment": """
    import os
    found = []
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/environ", "rb") as environ:
                found.append(environ.read().decode(errors="replace"))
        except OSError:
            pass
    raise RuntimeError("environments: " + " ".join(e for e in found if "SECRET" in e))""",
    "read the reference engine": """
    import io, linecache
    found = []
    for path in REFERENCE_ENGINES:
        for read in (lambda: open(path).read(), lambda: io.open_code(path).read().decode(),
                     lambda: "".join(linecache.getlines(path))):
            try:
                found.append(read()[:400])
            except Exception:
                pass
    raise RuntimeError("reference: " + " ".join(found).replace("\\n", " "))""",
    "leave sleep 600 running": """
    import os, subprocess, threading
    sleeper = ["/bin/sh", "-c", "sleep 600; true", MARK]  # a shell that waits on sleep, named by the mark
    for start in (lambda: subprocess.Popen(sleeper, start_new_session=True),
                  lambda: os.posix_spawn(sleeper[0], sleeper, dict(os.environ)),
                  lambda: os.system(f"/bin/sh -c 'sleep 600; true' {MARK} &"),
                  lambda: os.fork() or os.execv(sleeper[0], sleeper)):
        try:
            start()
        except OSError:
            pass
    threading.Thread(target=__import__("time").sleep, args=(600,)).start()
    get_ipython().system(f"/bin/sh -c 'sleep 600; true' {MARK} &")
    raise RuntimeError("tried to leave sleep running")""",
}


def notebook_of(*sources: str) -> dict:
    """A notebook of the solution's cell and then one code cell for each of ``sources``."""
    cells = [{"cell_type": "code", "metadata": {}, "id": f"cell-{number}", "outputs": [], "execution_count": None,
              "source": source} for number, source in enumerate((SOLUTION, *sources))]
    return {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells}


def attacked_notebook(folder: Path, grading, canary_folder: Path, mark: str) -> Path:
    """BUGGY as a notebook, with one attack a cell after it (each a no-op while graded)."""
    reports = sorted(str(p) for tree in grading.trees for p in tree.rglob("report/gradescope.py")
                     if "grader" in p.parts) + sorted(str(p) for tree in grading.trees
                                                     for p in tree.rglob("grader/report/text.py"))
    sites = sorted({str(p.parent) for tree in grading.trees for p in tree.rglob("*.dist-info")
                    if p.parent.name == "site-packages"})
    engines = sorted({str(p) for tree in grading.trees for p in tree.rglob("reference/engine.py")}
                     | {reference.engine.__file__})
    assert reports and sites, grading.trees
    notebook = as_notebook(BUGGY)
    layout = {"REPORT_MODULES": reports, "SITE_PACKAGES": sites, "REFERENCE_ENGINES": engines,
              "CANARY": str(canary_folder), "MARK": mark}  # what a student who guessed the layout writes
    notebook["cells"].append({"cell_type": "code", "metadata": {}, "id": "layout", "outputs": [],
                              "execution_count": None, "source": "".join(f"{k} = {v!r}\n" for k, v in layout.items())})
    for number, body in enumerate(ATTACKS.values()):
        notebook["cells"].append({"cell_type": "code", "metadata": {}, "id": f"attack-{number}", "outputs": [],
                                  "execution_count": None, "source": KERNEL_ONLY + body.lstrip("\n")})
    folder.mkdir()
    path = folder / "work.ipynb"
    path.write_text(json.dumps(notebook, indent=1))
    grading.hand_over(folder)
    return path


def gradescope_score(grading, path: Path, *options: str):
    """Gradescope's ``results.json`` of ``path``, graded by this platform with ``options``."""
    result = grading.run("grade", str(path), "--format", "gradescope", *options, cwd=path.parent, timeout=600)
    assert result.returncode in (0, 1), f"{grading.name}: exit {result.returncode}: {result.stderr[-2000:]}"
    return json.loads(result.stdout), result


def test_the_kernel_is_confined_as_the_grading_children_are(grading, workspace, canary):  # noqa: F811
    mark = f"micrograde-kernel-{uuid.uuid4().hex}"
    path = attacked_notebook(workspace / "submission", grading, canary, mark)
    honest, _ = gradescope_score(grading, path)
    assert honest["score"] < 100
    # A first --execute of an honest notebook: the grader's own first imports (byte code it caches) come first.
    (workspace / "honest").mkdir()
    (workspace / "honest" / "work.ipynb").write_text(json.dumps(as_notebook(BUGGY)))
    grading.hand_over(workspace / "honest")
    gradescope_score(grading, workspace / "honest" / "work.ipynb", "--execute")
    watched = watch(grading, canary, path.parent)
    json_report = grading.run("grade", str(path), "--format", "json", "--execute", cwd=path.parent, timeout=600)
    executed, result = gradescope_score(grading, path, "--execute")
    following, after = gradescope_score(grading, path)  # a .pth planted in the venv would run here
    outputs = (result.stdout, result.stderr, json_report.stdout, json_report.stderr, after.stdout, after.stderr)
    breaches = watched.breaches(*outputs)
    breaches += [f"the reference engine shown in output {i}" for i, text in enumerate(outputs) if REFERENCE in text]
    pth_ran = (canary / "pth-ran").exists()
    left = processes_with(mark.encode())
    watched.repair()
    assert breaches == [] and not pth_ran and left == [], (breaches, pth_ran, left)
    assert executed["score"] == following["score"] == honest["score"]
    execution = json.loads(json_report.stdout)["execution"]
    failed = {cell["first_line"] for cell in execution["failed_cells"]}
    assert execution["status"] == "completed" and failed >= {"try:"}, execution
    assert len([c for c in execution["failed_cells"] if c["first_line"] == "try:"]) == len(ATTACKS), execution
    assert execution["sandbox"]["tamper_proof"] is True, execution["sandbox"]
    if grading.uid == 0:
        assert execution["sandbox"]["user"].startswith("nobody"), execution["sandbox"]


def test_a_kernel_that_never_returns_is_ended(mode, tmp_path):
    """A cell that never returns, and one that starts threads that never end: the run stops at the cell's
    time limit, and the kernel and everything of it is ended when it does."""
    from test_hostile import leftover_children

    from grader.staff.execute import execute_notebook

    notebook = notebook_of("import threading, time\nfor _ in range(4):\n"
                           "    threading.Thread(target=time.sleep, args=(600,)).start()",
                           "while True:\n    pass", "print('never reached')")
    path = tmp_path / "work.ipynb"
    path.write_text(json.dumps(notebook))
    execution = execute_notebook(path, timeout=2.0)
    assert execution["status"] == "a cell ran past its time limit", execution
    assert execution["failed_cells"] == []  # the loop was the cell that ran past: the ones before it ran
    assert leftover_children() == []


@pytest.mark.parametrize("cell", ["from grader import check\ncheck(Value, train_step)", "import grader"])
def test_micrograde_s_own_check_cell_is_not_run_in_the_kernel(tmp_path, cell):
    """The exercise notebook ends with ``check(Value, train_step)``: the kernel cannot reach the grader
    (a forbidden import), so the cell is listed as not run, with why, never as the student's failure."""
    from helpers import micrograde

    notebook = as_notebook(SOLUTION)
    notebook["cells"].append({"cell_type": "code", "metadata": {}, "id": "check", "outputs": [],
                              "execution_count": None, "source": cell})
    path = tmp_path / "work.ipynb"
    path.write_text(json.dumps(notebook))
    result = micrograde("grade", str(path), "--format", "json", "--execute", timeout=300)
    execution = json.loads(result.stdout)["execution"]
    assert [c["first_line"] for c in execution["not_run"]] == [cell.splitlines()[0]]
    assert cell.splitlines()[0] not in {c["first_line"] for c in execution["failed_cells"]}


GRADE_AFTER_PREPARE = r"""
import io, json, sys
from pathlib import Path
import grader.commands.grade
from grader.child import launcher
from grader.staff.execute import prepare
launcher.running()  # the kernel's child starts the fork server, which reads what it runs, before any cell runs
prepare()  # what --execute does before the kernel starts
before, opened = set(sys.modules), []
sys.addaudithook(lambda event, args: opened.append(args[0]) if event == "open" and not isinstance(args[0], int)
                 else None)  # files by name (a descriptor already open names no file)
from grader.grade import Options, grade_submission
from grader.submission.siblings import read_as_run
submission = read_as_run(Path(sys.argv[1]), Options().config)
report = grade_submission(submission, Options())
from grader.report import handback
from grader.report.formats import FORMATS
from grader.report.github import report_to_github
raw = handback.graded_notebook(submission).path.read_bytes()
handback.dumps(handback.feedback_notebook(raw, report, submission))
handback.render_html(handback.feedback_notebook(raw, report, submission, as_html=True))
for known in FORMATS.values():
    known.render(report, seconds=1.0, colour=True)
report_to_github(report, submission, io.StringIO())
print(json.dumps({"opened": [str(p) for p in opened], "imported": sorted(set(sys.modules) - before)}))
"""


def test_everything_the_grader_grades_and_renders_with_is_read_before_the_kernel_starts(tmp_path):
    """After ``prepare`` (before the kernel runs), grading the notebook and writing every report format,
    the feedback notebook, the page and GitHub's annotations imports no module of micrograde's and opens
    none of its files, nbconvert's templates or the page's style sheets: a kernel that rewrote
    ``grader/report/*.py`` or the templates, were it to get past the sandbox, would change nothing the
    grader writes."""
    import subprocess
    import sys

    import nbconvert
    from helpers import ROOT

    import grader

    path = tmp_path / "work.ipynb"
    path.write_text(json.dumps(as_notebook(BUGGY)))
    done = subprocess.run([sys.executable, "-c", GRADE_AFTER_PREPARE, str(path)], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)
    seen = json.loads(done.stdout.splitlines()[-1])
    assert [m for m in seen["imported"] if m.partition(".")[0] in ("grader", "reference", "nbconvert")] == []
    guarded = (Path(grader.__file__).parent, Path(reference.engine.__file__).parent, Path(nbconvert.__file__).parent,
               Path(sys.prefix) / "share" / "jupyter")
    assert [p for p in seen["opened"] if any(Path(p).is_relative_to(g) for g in guarded)] == [], seen["opened"]
    assert str(path) in seen["opened"]  # the audit hook did see the files opened


@pytest.mark.parametrize("written", ['{"id": 999}\n', '{"id": 3, ' + "[" * 100000 + "\n", "x" * (5 << 20)])
def test_a_kernel_that_writes_its_own_replies_ends_the_run_and_no_more(mode, tmp_path, written):
    """A cell that writes on the kernel's reply descriptor (a reply for a request never sent, one nested past
    any parser's depth, more than a reply may hold): the run ends as a kernel that died, with the cells before
    it reported, and nothing of it reaches the grading process but that."""
    from test_hostile import leftover_children

    from grader.staff.execute import execute_notebook

    notebook = notebook_of("raise ValueError('a cell of its own that fails')",
                           f"import os, sys\nos.write(int(sys.argv[-1]), {written.encode()!r})",
                           "print('never reached')")
    path = tmp_path / "work.ipynb"
    path.write_text(json.dumps(notebook))
    execution = execute_notebook(path, timeout=10.0)
    assert execution["status"] == "the kernel died", execution
    assert [c["error"] for c in execution["failed_cells"]] == ["ValueError: a cell of its own that fails"], execution
    assert leftover_children() == []
