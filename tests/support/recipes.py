"""The docs' copy-paste recipes, run as a course would paste them.

Each path a course can take (Classroom 50, Gradescope, pytest, GitHub Classroom,
batch) has one ``sh`` block in the docs; the tests run that very block, so the
docs cannot drift from what works (``test_docs.py`` checks that every block is run
or checked somewhere).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from helpers import ROOT

BIN = str(Path(sys.executable).parent)


def section(page: str, heading: str) -> str:
    """The text under ``heading`` (``## Name``) of ``page`` (``docs/ci.md``), up to the next heading of
    the same or a higher level."""
    text = "\n" + (ROOT / page).read_text(encoding="utf-8")
    level = heading.split(" ")[0]
    body = text.split(f"\n{heading}\n", 1)[1]
    return re.split(rf"\n#{{1,{len(level)}}} ", body, maxsplit=1)[0]


def sh_blocks(text: str) -> list[str]:
    return re.findall(r"```sh\n(.*?)```", text, re.S)


def run_recipe(page: str, heading: str, cwd: Path, block: int = 0) -> subprocess.CompletedProcess:
    """Run the ``block``-th ``sh`` block of section ``heading`` of ``page`` in ``cwd`` with bash,
    micrograde on the ``PATH`` as the README's setup leaves it."""
    script = sh_blocks(section(page, heading))[block]
    env = {**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}"}
    env.pop("MICROGRADE_DEBUG", None)
    return subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)
