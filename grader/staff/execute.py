"""``--execute``: run the notebook top to bottom in a real kernel, as Jupyter would.

This is what a TA wants when a student says "it worked on my machine": every
cell runs in order, in a fresh kernel, and the cells that fail are listed.
It runs in a child process with the same resource limits, scrubbed
environment and fresh working directory as grading, and under a time limit;
the kernel runs the notebook as submitted (magics and shell escapes
included), so it is only done when asked for. Grading never depends on it.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

from grader.child import sandbox
from grader.errors import InputError

CHILD = r"""
import json, sys
import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellTimeoutError, DeadKernelError
notebook = nbformat.read(sys.argv[1], as_version=4)
client = NotebookClient(notebook, timeout=float(sys.argv[2]), allow_errors=True, kernel_name="python3",
                        resources={"metadata": {"path": "."}})
status = "completed"
try:
    client.execute()
except CellTimeoutError:
    status = "a cell ran past its time limit"
except DeadKernelError:
    status = "the kernel died"
failed = []
for index, cell in enumerate(notebook.cells):
    for output in cell.get("outputs", []) if cell.cell_type == "code" else []:
        if output.get("output_type") == "error":
            failed.append({"index": index, "error": f"{output.get('ename')}: {output.get('evalue')}"[:300]})
print(json.dumps({"status": status, "failed": failed}))
"""


def available() -> bool:
    return importlib.util.find_spec("ipykernel") is not None and importlib.util.find_spec("nbclient") is not None


def execute_notebook(path: Path, timeout: float) -> dict:
    """Run ``path`` in a kernel; the cells that failed, by number and first line, as warnings."""
    from grader.submission.notebook import first_line, student_cells

    if not available():
        raise InputError("--execute needs a Jupyter kernel: pip install 'micrograde[execute]'")
    notebook = json.loads(path.read_text(encoding="utf-8"))
    numbers = {id(cell): n for n, cell in student_cells(notebook)}
    order = [numbers.get(id(cell)) for cell in notebook.get("cells", [])]
    with sandbox.job_folder("micrograde-execute-") as tmp:
        copy = Path(tmp) / "notebook.ipynb"
        copy.write_bytes(path.read_bytes())
        try:
            result = subprocess.run(
                [sys.executable, "-c", CHILD, str(copy), str(timeout)], capture_output=True, cwd=tmp,
                env=sandbox.environment(tmp), timeout=timeout * 3 + 30, stdin=subprocess.DEVNULL,
                start_new_session=True, preexec_fn=sandbox.limiter(int(timeout * 3) + 30))
            outcome = json.loads(result.stdout.decode("utf-8", "replace").strip().splitlines()[-1])
        except subprocess.TimeoutExpired:
            outcome = {"status": "the notebook ran past its time limit", "failed": []}
        except (ValueError, IndexError):
            outcome = {"status": "the kernel could not be started", "failed": []}
    warnings = []
    failed = []
    for item in outcome.get("failed", []):
        number = order[item["index"]] if item["index"] < len(order) else None
        cell = notebook["cells"][item["index"]]
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else source
        first = first_line(source)
        failed.append({"cell": number, "first_line": first[:80], "error": item["error"]})
        warnings.append(f"executed: cell {number} (`{first[:60]}`) raised {item['error']}")
    if outcome.get("status") != "completed":
        warnings.append(f"executed: {outcome.get('status')}")
    return {"status": outcome.get("status"), "failed_cells": failed, "warnings": warnings}
