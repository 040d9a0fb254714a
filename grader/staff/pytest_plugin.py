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

pytest itself runs in the grading process, unconfined, so nothing from the
graded tree (the directory pytest runs in, and the submission's) may load into
it: no ``conftest.py``, no ini file (``pytest.ini``, ``pyproject.toml``,
``tox.ini``, ``setup.cfg``: their ``addopts`` can load plugins), no plugin
module and no test file. The course runs::

    pytest --noconftest -c /dev/null -p no:cacheprovider --micrograde PATH

(the ``pytest`` command, not ``python -m pytest``, which puts the current
directory first on ``sys.path``, where a student's ``pytest.py`` or
``grader/`` would be imported instead of the real ones). With ``--micrograde``
the plugin collects no file at all, and it refuses to grade, with a one-line
error and before any ``conftest.py`` loads, when pytest would read an ini file
or ``conftest.py`` from the graded tree, or when the tree is on ``sys.path`` or
a module was already loaded from it (a ``-p`` plugin, a shadowing module).
Some of that code may have run by then (an ini file's ``-p`` plugins load
before any plugin of an installed package): the refusal makes sure such a run
never produces a grade, and the command above makes sure it never happens.
"""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path

import pytest

COMMAND = "pytest --noconftest -c /dev/null --micrograde PATH"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("micrograde", "grading a build-micrograd-yourself submission")
    group.addoption("--micrograde", metavar="PATH", type=Path,
                    help="grade PATH (a .py file, a notebook or a directory): one test per check")
    group.addoption("--micrograde-timeout", metavar="SECONDS", type=float,
                    help="seconds each target (and loading) may take (default: the course configuration's)")
    group.addoption("--micrograde-config", metavar="FILE", type=Path,
                    help="the course configuration (micrograde.toml, or a pyproject.toml with [tool.micrograde])")


def graded_tree(config: pytest.Config, path: Path) -> list[Path]:
    """The directories a submission controls: where pytest runs, and the submission's own."""
    path = (config.invocation_params.dir / path).resolve()
    return [config.invocation_params.dir.resolve(), path if path.is_dir() else path.parent]


def _inside(location: str | os.PathLike, tree: list[Path]) -> bool:
    where = Path(os.path.realpath(location))
    return any(where == root or where.is_relative_to(root) for root in tree)


def before_loading(config: pytest.Config, noconftest: bool, path: Path) -> str | None:
    """Why pytest, as invoked, would load something of the graded tree (``None``: it would not)."""
    tree = graded_tree(config, path)
    if not noconftest:
        return f"refusing to grade: pass --noconftest, or a conftest.py of the graded tree would run ({COMMAND})"
    if config.inipath is not None and _inside(config.inipath, tree):
        return (f"refusing to grade: pytest read {config.inipath.name} from the graded tree; "
                f"pass -c /dev/null ({COMMAND})")
    if any(_inside(entry or ".", tree) for entry in sys.path if not entry or os.path.isdir(entry)):
        return (f"refusing to grade: the graded tree is on sys.path (python -m pytest puts it there); "
                f"run the pytest command ({COMMAND})")
    loaded = next((name for name, module in list(sys.modules.items())
                   if isinstance(getattr(module, "__file__", None), str) and _inside(module.__file__, tree)), None)
    if loaded is not None:
        return f"refusing to grade: module {loaded!r} was loaded from the graded tree into pytest ({COMMAND})"
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config, parser: pytest.Parser, args: list[str]) -> None:
    """The check, before any ``conftest.py`` is imported."""
    known = early_config.known_args_namespace
    if getattr(known, "micrograde", None) is not None:
        problem = before_loading(early_config, known.noconftest, Path(known.micrograde))
        if problem is not None:
            raise pytest.UsageError(f"micrograde: {problem}")


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """With ``--micrograde`` no file is collected: the checks are the only tests, and no test file of
    the graded tree is imported."""
    return True if config.getoption("micrograde") is not None else None


class CheckItem(pytest.Item):
    """One check of the graded submission; its verdict is already known when it runs."""

    def __init__(self, *, passed: bool, details: str, points: float, max_points: float, **kwargs):
        super().__init__(**kwargs)
        self.passed, self.details = passed, details
        self.user_properties += [("points", points), ("max_points", max_points)]

    def runtest(self) -> None:
        if not self.passed:
            from grader.errors import CheckFailed

            raise CheckFailed(self.details)

    def repr_failure(self, excinfo, style=None) -> str:
        from grader.errors import CheckFailed

        if isinstance(excinfo.value, CheckFailed):  # its message is what the student reads
            return str(excinfo.value)
        return super().repr_failure(excinfo, style)

    def reportinfo(self):
        return self.path, None, self.name


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list) -> None:
    path = config.getoption("micrograde")
    if path is None:
        return
    from grader.errors import InputError
    from grader.exercise.config import load
    from grader.grade import Options, grade

    try:
        options = Options(load(config.getoption("micrograde_config")), config.getoption("micrograde_timeout"),
                          around=(config.invocation_params.dir,))
        report = grade(path, options)
    except InputError as exc:
        raise pytest.UsageError(f"micrograde: {exc}") from None
    for warning in report.warnings:  # such as a configuration of the submission's, ignored
        warnings.warn(pytest.PytestWarning(f"micrograde: {warning}"), stacklevel=1)
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
