"""GitHub Actions: the report in the job summary, and each diagnosis as an annotation on its line.

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


def annotations(report: Report, submission: Submission, workspace: Path) -> list[str]:
    """One ``::error`` command per diagnosis that has a place in a file."""
    commands = []
    for diagnosis in report.shown_diagnoses():
        if diagnosis.file is None:
            continue
        path = submission.directory / diagnosis.file if submission.directory is not None else submission.path
        try:
            shown = os.path.relpath(path.resolve(), workspace.resolve())
        except ValueError:
            shown = str(path)
        where = f"file={_escape_property(shown)}"
        if diagnosis.line is not None and diagnosis.cell is None:
            where += f",line={diagnosis.line}"
        title = _escape_property(f"micrograde {diagnosis.code} ({diagnosis.target})")
        commands.append(f"::error {where},title={title}::{_escape_data(diagnosis.message)}")
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
