"""GitHub Actions: the report in the job summary, each diagnosis as an annotation on its line, and each part
no target covered as a notice on its own.

Workflow commands (``::error file=...,line=...::message``) are what GitHub reads
from a step's output to mark a line of the student's own code.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TextIO

from grader.report.markdown import render_markdown
from grader.report.model import Report, printable
from grader.submission.source import Submission


def _escape_data(text: str) -> str:
    return printable(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _where(file: str, line: int | None, cell: int | None, submission: Submission, workspace: Path) -> str:
    """The ``file=...,line=...`` of a place in the submission, as the workspace names it (a notebook's line
    is its cell's, which GitHub cannot show: only the file is named)."""
    path = submission.directory / file if submission.directory is not None else submission.path
    try:
        shown = os.path.relpath(path.resolve(), workspace.resolve())
    except ValueError:
        shown = str(path)
    where = f"file={_escape_property(shown)}"
    if line is not None and cell is None:
        where += f",line={line}"
    return where


def annotations(report: Report, submission: Submission, workspace: Path) -> list[str]:
    """One ``::error`` command per diagnosis that has a place in a file, and one ``::notice`` per part of the
    submission that no target covered."""
    commands = []
    for diagnosis in report.shown_diagnoses():
        if diagnosis.file is None:
            continue
        where = _where(diagnosis.file, diagnosis.line, diagnosis.cell, submission, workspace)
        title = _escape_property(f"micrograde {diagnosis.code} ({diagnosis.target})")
        commands.append(f"::error {where},title={title}::{_escape_data(diagnosis.message)}")
    for part in report.ungraded:
        where = _where(part.where.file, part.where.line, part.where.cell, submission, workspace)
        title = _escape_property(f"micrograde: {part.name} was not graded")
        commands.append(f"::notice {where},title={title}::{_escape_data(f'not graded: {part.describe()}')}")
    return commands


def report_to_github(report: Report, submission: Submission, stream: TextIO) -> None:
    """When running in GitHub Actions: annotations to ``stream``, the Markdown report to the job summary."""
    workspace = Path(os.environ.get("GITHUB_WORKSPACE") or os.getcwd())
    for command in annotations(report, submission, workspace):
        print(command, file=stream)
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        with open(summary, "a", encoding="utf-8") as fh:
            fh.write(render_markdown(report) + "\n")
