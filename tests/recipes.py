"""The README's copy-paste recipes, run as a course would paste them.

Each path a course can take (Classroom 50, Gradescope, pytest, GitHub Classroom,
batch) has one ``sh`` block in the README; the tests run that very block, so
the README cannot drift from what works.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from helpers import ROOT

BIN = str(Path(sys.executable).parent)


def run_recipe(heading: str, cwd: Path, block: int = 0) -> subprocess.CompletedProcess:
    """Run the ``block``-th ``sh`` block of the README section ``heading`` in ``cwd`` with bash, micrograde
    on the ``PATH`` as the README's setup leaves it."""
    readme = (ROOT / "README.md").read_text()
    section = readme.split(f"\n{heading}\n", 1)[1].split("\n## ", 1)[0]
    script = re.findall(r"```sh\n(.*?)```", section, re.S)[block]
    env = {**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}"}
    env.pop("MICROGRADE_DEBUG", None)
    return subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)
