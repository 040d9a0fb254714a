"""``--execute``: run the notebook top to bottom in a kernel, as Jupyter would, inside the child sandbox.

This is what a TA wants when a student says "it worked on my machine": every
code cell runs in order, in a fresh kernel, and the cells that fail are listed.
The kernel is the student's code, so it runs where every submission runs: in a
child started by the fork server and confined as the grading children are (its
own uid where the grader is root, namespaces where there are, Landlock, the
system-call filter, the resource limits, the audit hook), IPython's shell
running one cell a request (``grader/child/inside/kernel.py``). A cell gets the
grade's time limit; a cell that runs past it, or a kernel that dies, ends the
run, and everything the kernel started ends with its child.

Before the kernel starts, the grading process imports everything it grades and
renders the report and the pages with (``prepare``): nothing the kernel could
write afterwards, were it to get past the sandbox, is read by the grader again. The
kernel's account of its cells is a list of warnings for the TA; it never
changes a score, which the grading children decided before.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import json
import pkgutil
import time
from pathlib import Path

from grader.child import sandbox
from grader.child.inside.policy import GRADER_MODULES
from grader.child.worker import STARTUP_SECONDS, Streams, Worker, WorkerLost, cpu_limit
from grader.errors import InputError

KERNEL_STARTUP_SECONDS = 60.0  # importing IPython and making its shell, on a loaded machine
# The packages of micrograde's that a grade and its report use, imported whole before the kernel runs (``prepare``).
GRADING_PACKAGES = ("grader.exercise", "grader.submission", "grader.search", "grader.judging", "grader.diagnosis",
                    "grader.report")
PAGE_MODULES = ("grader.report.page", "grader.report.sanitise")  # they need the html extra


def available() -> bool:
    return importlib.util.find_spec("IPython") is not None


def prepare() -> None:
    """Before any code of the notebook runs: import every module the grader grades with and renders a
    report, a notebook or a page with, make what each child is shipped (the training engine is compiled
    from the grader's files), and make the page's renderer ready (its templates and style sheets read)."""
    from grader.child.worker import compiled
    from grader.exercise.kinds import LANES
    from grader.report.extras import html_missing
    from grader.search import shipped

    pages = html_missing() is None  # the html extra, without which no page is written
    for package in GRADING_PACKAGES:
        path = importlib.import_module(package).__path__
        for module in pkgutil.iter_modules(path, f"{package}."):
            if pages or module.name not in PAGE_MODULES:
                importlib.import_module(module.name)
    for lane in LANES:
        compiled(lane)
    for space, examples in shipped.default_searches():  # the openings micrograde ships, read once a process
        shipped.opening(space, examples)
    if pages:
        importlib.import_module("grader.report.page").prepare()


def runs_the_grader(source: str) -> bool:
    """Whether a code cell imports micrograde itself (``from grader import check``): its own check, which
    the kernel cannot run (the grader is out of a submission's reach) and the grade already answers."""
    from grader.submission.notebook import neutralise

    try:
        tree = ast.parse(neutralise(source) or "")
    except (SyntaxError, ValueError):
        return False
    names = [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names]
    names += [node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module]
    return any(name.partition(".")[0] in GRADER_MODULES for name in names)


def run_cells(cells: list[str], timeout: float, deadline: float) -> tuple[str, list[dict | None], dict | None]:
    """Run ``cells`` in a new kernel, each within ``timeout`` seconds and all before ``deadline`` (monotonic
    time); how the run ended, what each cell run raised (``None``: nothing; the list stops where the run
    did), and the report's section on the kernel's sandbox (``None`` if the kernel never started)."""
    errors: list[dict | None] = []
    section = None
    worker = Worker(Streams(), cpu_seconds=cpu_limit(deadline - time.monotonic()), kernel=True)
    try:
        worker.start()
        section = worker.sandbox.to_json(worker.receive(worker.init_id, KERNEL_STARTUP_SECONDS).get("confinement"))
        for source in cells:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return "the notebook ran past its time limit", errors, section
            asked = worker.send({"kind": "cell", "needs": "shell", "source": source})
            reply = worker.receive(asked, min(timeout, remaining))
            error = reply.get("error")
            errors.append(error if isinstance(error, dict) else None)
    except WorkerLost as lost:
        if section is None:
            return f"the kernel could not be started ({lost.detail})", errors, section
        ended = "a cell ran past its time limit" if lost.reason == "timeout" else "the kernel died"
        return ended, errors, section
    finally:
        worker.close()
    return "completed", errors, section


def execute_notebook(path: Path, timeout: float) -> dict:
    """Run the notebook at ``path`` in a confined kernel; the cells that failed, by number and first line,
    and the sandbox it ran in, with warnings for each."""
    from grader.submission.notebook import first_line, student_cells

    if not available():
        raise InputError("--execute needs IPython: pip install 'micrograde[execute]'")
    prepare()
    notebook = json.loads(path.read_text(encoding="utf-8"))
    code = [(number, "".join(cell.get("source", "")) if isinstance(cell.get("source"), list)
             else str(cell.get("source", ""))) for number, cell in student_cells(notebook)
            if cell.get("cell_type") == "code"]
    own = {number for number, source in code if runs_the_grader(source)}
    run = [(number, source) for number, source in code if number not in own]
    status, errors, section = run_cells([source for _, source in run], timeout,
                                        time.monotonic() + timeout * 3 + STARTUP_SECONDS)
    failed = [{"cell": number, "first_line": first_line(source)[:80],
               "error": f"{error.get('type')}: {error.get('message')}"[:300]}
              for (number, source), error in zip(run, errors) if error is not None]
    warnings = [f"executed: cell {item['cell']} (`{item['first_line'][:60]}`) raised {item['error']}"
                for item in failed]
    if status != "completed":
        warnings.append(f"executed: {status}")
    if section is not None and (warning := sandbox.not_tamper_proof(section)) is not None:
        warnings.append(f"executed: {warning}")
    return {"status": status, "failed_cells": failed,
            "not_run": [{"cell": number, "first_line": first_line(source)[:80],
                         "why": "it runs micrograde itself, which the kernel cannot reach; the grade is its answer"}
                        for number, source in code if number in own],
            "sandbox": section, "warnings": warnings}
