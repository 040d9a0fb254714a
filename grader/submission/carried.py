"""The course a notebook carries: its configuration, embedded when the course's scaffold wrote the notebook.

``micrograde scaffold`` and ``scaffold --adopt`` write the course's configuration into the notebook's
metadata (``metadata.micrograde.course``: the exact text of the ``micrograde.toml`` written beside it, and
the hash of what it means, ``Config.sha256``), and its grading cell names the course by that hash
(``check(..., course="sha256:...")``). So a notebook opened where its ``micrograde.toml`` is not (Colab, a
JupyterHub upload, a download of the ``.ipynb`` alone) still says which course it was made for: ``check()``
grades that course by the text it carries, and a route that cannot read it (the metadata stripped) refuses
rather than grade another exercise. A notebook carries a course; it never configures a staff grade
(``grader.course``).

Read from the file alone, within the notebook size limit; nothing here runs.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from grader.errors import ConfigError, InputError

KEY = "micrograde"  # the notebook metadata's key
MARK = re.compile(r"""\bcourse\s*=\s*["']sha256:([0-9a-f]{64})["']""")  # how a grading cell names its course
MAX_NOTEBOOKS = 200  # notebooks a folder is searched in for the course they carry


@dataclass(frozen=True)
class Carried:
    """The course one notebook was made for: the hash of its configuration, and the configuration's text where
    the metadata still holds it (``None`` when only the grading cell names it)."""

    notebook: Path
    sha256: str
    text: str | None

    def config(self):
        """The configuration the notebook carries (``ConfigError`` if it is not valid, or not what its hash says)."""
        import tomllib

        from grader.exercise.config import parse

        where = f"the course configuration {self.notebook.name} carries"
        if self.text is None:
            raise ConfigError(f"{where}: its text is not in the notebook's metadata")
        try:
            config = parse(tomllib.loads(self.text), where)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{where}: not valid TOML ({exc})") from None
        if config.sha256 != self.sha256:
            raise ConfigError(f"{where}: changed since the course wrote it (its hash is no longer sha256 "
                              f"{short(self.sha256)})")
        return config


def short(sha256: str) -> str:
    """A configuration's hash as messages name it."""
    return sha256[:12]


def mark(sha256: str) -> str:
    """The argument a grading cell names its course with."""
    return f'course="sha256:{sha256}"'


def embed(notebook: dict, text: str, sha256: str) -> dict:
    """``notebook`` (nbformat 4 JSON) carrying the course whose ``micrograde.toml`` is ``text``."""
    metadata = notebook.setdefault("metadata", {})
    metadata[KEY] = {**metadata.get(KEY, {}), "course": {"sha256": sha256, "toml": text}}
    return notebook


def of_notebook(notebook: object, path: Path) -> Carried | None:
    """The course a parsed notebook carries: its metadata's, else the one its grading cell names."""
    if not isinstance(notebook, dict):
        return None
    metadata = notebook.get("metadata")
    course = metadata.get(KEY, {}).get("course") if isinstance(metadata, dict) and isinstance(
        metadata.get(KEY), dict) else None
    if isinstance(course, dict) and isinstance(course.get("sha256"), str) and re.fullmatch("[0-9a-f]{64}",
                                                                                           course["sha256"]):
        return Carried(path, course["sha256"], course["toml"] if isinstance(course.get("toml"), str) else None)
    cells = notebook.get("cells")
    for cell in cells if isinstance(cells, list) else []:
        source = cell.get("source", "") if isinstance(cell, dict) and cell.get("cell_type") == "code" else ""
        source = "".join(s for s in source if isinstance(s, str)) if isinstance(source, list) else source
        found = MARK.search(source) if isinstance(source, str) else None
        if found:
            return Carried(path, found.group(1), None)
    return None


def of_file(path: Path) -> Carried | None:
    """The course the notebook at ``path`` carries (``None``: none, or not a notebook that can be read)."""
    from grader.submission.source import MAX_NOTEBOOK_BYTES

    try:
        if not path.is_file() or path.stat().st_size > MAX_NOTEBOOK_BYTES:
            return None
        return of_notebook(json.loads(path.read_bytes()), path)
    except (OSError, ValueError, RecursionError):
        return None


def notebooks(path: Path) -> list[Path]:
    """The notebooks of a submission: the file itself, or a folder's (as a folder is read)."""
    if path.is_symlink():  # graded only where it stays in its folder, which reading it checks
        return []
    if path.is_file():
        return [path] if path.suffix == ".ipynb" else []
    if not path.is_dir():
        return []
    from grader.submission.folder import candidate_files

    try:
        return [p for p in candidate_files(path, [], []) if p.suffix == ".ipynb"][:MAX_NOTEBOOKS]
    except (OSError, InputError):  # a folder that cannot be read: reading the submission says why
        return []


def carried_by(paths: list[Path]) -> list[Carried]:
    """The courses the notebooks of ``paths`` (submissions, files or folders) carry."""
    return [c for path in paths for notebook in notebooks(path) if (c := of_file(notebook)) is not None]
