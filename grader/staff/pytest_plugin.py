"""The report as pytest test items: ``pytest --micrograde PATH``.

Registered as a ``pytest11`` entry point, so a course whose autograder already
runs ``pytest`` (GitHub Classroom's Python grader, most CI templates) needs
nothing else. The submission is graded once, as ``micrograde grade`` grades
it, and each check becomes one item named ``target::check`` that fails with
the diagnosis and the smallest counterexample as its message; each item's
points are in its ``user_properties`` (``points``, ``max_points``), which
``--junitxml`` and other reporting plugins pick up. Submission-wide problems
(a load error, a forbidden import) are items of their own, ``submission::CODE``.

Nothing of micrograde is imported until ``--micrograde`` is given: pytest
loads this module in every run.
"""

from __future__ import annotations

from pathlib import Path

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("micrograde", "grading a build-micrograd-yourself submission")
    group.addoption("--micrograde", metavar="PATH", type=Path,
                    help="grade PATH (a .py file, a notebook or a directory): one test per check")
    group.addoption("--micrograde-timeout", metavar="SECONDS", type=float,
                    help="seconds each target (and loading) may take (default: the course configuration's)")
    group.addoption("--micrograde-config", metavar="FILE", type=Path,
                    help="the course configuration (micrograde.toml, or a pyproject.toml with [tool.micrograde])")


class CheckFailed(Exception):
    """A check that did not pass; its message is what the student reads."""


class CheckItem(pytest.Item):
    """One check of the graded submission; its verdict is already known when it runs."""

    def __init__(self, *, passed: bool, details: str, points: float, max_points: float, **kwargs):
        super().__init__(**kwargs)
        self.passed, self.details = passed, details
        self.user_properties += [("points", points), ("max_points", max_points)]

    def runtest(self) -> None:
        if not self.passed:
            raise CheckFailed(self.details)

    def repr_failure(self, excinfo, style=None) -> str:
        if isinstance(excinfo.value, CheckFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style)

    def reportinfo(self):
        return self.path, None, self.name


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list) -> None:
    path = config.getoption("micrograde")
    if path is None:
        return
    from grader.exercise.config import load
    from grader.grade import Options, grade
    from grader.submission.errors import InputError

    try:
        options = Options(load(config.getoption("micrograde_config")), config.getoption("micrograde_timeout"))
        report = grade(path, options)
    except InputError as exc:
        raise pytest.UsageError(f"micrograde: {exc}") from None
    for diagnosis in report.shown_diagnoses():
        if diagnosis.target == "submission":
            name = f"submission::{diagnosis.code}"
            items.append(CheckItem.from_parent(session, name=name, nodeid=name, passed=False,
                                               details=f"{diagnosis.heading()}\n{diagnosis.message}",
                                               points=0.0, max_points=0.0))
    for check in report.shown_checks():
        passed = check.status == "passed" and not report.forbidden
        name = f"{check.target}::{check.id.split('.', 1)[-1]}"
        items.append(CheckItem.from_parent(
            session, name=name, nodeid=name, passed=passed,
            details=report.details(check), points=check.max_score if passed else 0.0, max_points=check.max_score))
