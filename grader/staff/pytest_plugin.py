"""The report as pytest test items: ``pytest --micrograde PATH``.

Registered as a ``pytest11`` entry point, so a course whose autograder already
runs ``pytest`` (GitHub Classroom's Python grader, most CI templates) needs
nothing else. The submission is graded once, as ``micrograde grade`` grades
it, and each check becomes one item named ``target::check`` that fails with
the diagnosis and the smallest counterexample as its message; each item's
points are in its ``user_properties`` (``points``, ``max_points``), which
``--junitxml`` and other reporting plugins pick up. Submission-wide problems
(a load error, a forbidden import) are items of their own, ``submission::CODE``, and each part of the
submission no target covers is a skipped item, ``not-graded::NAME@WHERE``, so no run reads as all passed
over it.

Nothing of micrograde is imported until ``--micrograde`` is given: pytest
loads this module in every run. The course is chosen as every route chooses it
(``grader.course``): ``--micrograde-config``, else the course file where pytest
runs (a course repository's ``micrograde.toml``, as ``micrograde grade`` reads it
there), else the classic exercise, unless the submission was made for a course.

pytest itself runs in the grading process, unconfined, so nothing from the
graded tree (the directory pytest runs in, and the submission's) may load into
it, nor change how it grades but the course file where it runs (data,
validated, read as ``micrograde grade`` reads it; a course's autograder names
its own copy). ``pytest --micrograde PATH``, as people type it, grades wherever
nothing of the tree would really load: with ``--micrograde`` the plugin
collects no file at all, and it refuses to grade, with a one-line error naming
what and before any ``conftest.py`` loads, only when something would: a
``conftest.py`` pytest is about to import (those of the directories it starts
from and their ``test*`` folders, and of their parents: ``--noconftest`` keeps
them out), an ini file of the tree that sets ``addopts`` or ``pythonpath``
(which can load plugins, add paths, or change the grading's own options: ``-c
/dev/null`` keeps it out), a module of the tree on ``sys.path`` under a name
that is imported (``python -m pytest`` puts the current directory first, where
a student's ``pytest.py`` or ``grader/`` would be imported instead of the real
ones: the ``pytest`` command does not), or a module already loaded from it. The
environment pytest runs from is not the student's, even where it lies inside
the tree (the README's ``.venv``). Some code may have run by then (an ini
file's ``-p`` plugins load before any plugin of an installed package): the
refusal makes sure such a run never produces a grade.
"""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path

import pytest

SETTINGS = ("addopts", "pythonpath")  # what an ini file sets that loads code or changes the grading's options


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("micrograde", "grading a build-micrograd-yourself submission")
    group.addoption("--micrograde", metavar="PATH", type=Path,
                    help="grade PATH (a .py file, a notebook or a directory): one test per check")
    group.addoption("--micrograde-timeout", metavar="SECONDS", type=float,
                    help="seconds each target (and loading) may take (default: the course configuration's)")
    group.addoption("--micrograde-config", metavar="FILE", type=Path,
                    help="the course configuration (micrograde.toml, or a pyproject.toml with [tool.micrograde]; "
                         "default: the one where pytest runs, as micrograde grade finds it)")


def graded_tree(config: pytest.Config, path: Path) -> list[Path]:
    """The directories a submission controls: where pytest runs, and the submission's own."""
    path = (config.invocation_params.dir / path).resolve()
    return [config.invocation_params.dir.resolve(), path if path.is_dir() else path.parent]


def _inside(location: str | os.PathLike, tree: list[Path]) -> bool:
    where = Path(os.path.realpath(location))
    return any(where == root or where.is_relative_to(root) for root in tree)


def environment() -> list[Path]:
    """The folders of the Python environment pytest runs from (a venv's, even one inside the graded tree:
    it is the course's, not the student's)."""
    return [Path(os.path.realpath(p)) for p in {sys.prefix, sys.exec_prefix, sys.base_prefix}]


def conftests(config: pytest.Config) -> list[Path]:
    """The ``conftest.py`` files pytest's own ``pytest_load_initial_conftests`` is about to import: those of
    the directories it starts from (its arguments, else ``testpaths``, else where it runs) and their
    ``test*`` folders, and of every parent not above ``--confcutdir`` (as ``_set_initial_conftests`` finds
    them). With ``--micrograde`` nothing is collected, so no other one is ever imported."""
    known, invocation = config.known_args_namespace, config.invocation_params.dir
    try:
        args, _ = config._decide_args(args=known.file_or_dir, pyargs=known.pyargs, testpaths=config.getini("testpaths"),
                                      invocation_dir=invocation, rootpath=config.rootpath, warn=False)
    except (AttributeError, TypeError):  # a pytest without it: its arguments, else where it runs
        args = known.file_or_dir or [str(invocation)]
    anchors = [invocation / str(arg).split("::")[0] for arg in args]
    anchors = [a for a in anchors if os.path.exists(a)] or [invocation]
    anchors += [t for a in list(anchors) if a.is_dir() for t in a.glob("test*") if t.is_dir()]
    cut = Path(os.path.abspath(invocation / known.confcutdir)) if getattr(known, "confcutdir", None) else None
    found: dict[Path, None] = {}
    for anchor in anchors:
        directory = Path(os.path.abspath(anchor if anchor.is_dir() else anchor.parent))
        for parent in (directory, *directory.parents):
            if (cut is None or parent not in cut.parents) and (parent / "conftest.py").is_file():
                found[parent / "conftest.py"] = None
    return list(found)


def shadowing(entry: Path) -> str | None:
    """A module in ``entry`` (a ``sys.path`` folder) under a name that is imported: one already loaded, of
    the standard library, or of an installed distribution (``grader``, ``pytest``, ``hypothesis``...)."""
    from importlib.metadata import packages_distributions

    names = {n.partition(".")[0] for n in sys.modules} | set(sys.stdlib_module_names) | set(packages_distributions())
    try:
        entries = list(entry.iterdir())
    except OSError:
        return None
    for item in entries:
        name = item.name.split(".")[0] if item.is_file() and item.suffix in (".py", ".pyc", ".so", ".pth") else (
            item.name if item.is_dir() else None)
        if name in names:
            return item.name
    return None


def before_loading(config: pytest.Config, noconftest: bool, path: Path) -> str | None:
    """What of the graded tree pytest, as invoked, would load or let change the grading, as a one-line
    refusal naming it and what keeps it out (``None``: nothing would)."""
    tree, own = graded_tree(config, path), environment()
    if not noconftest:
        loading = [c for c in conftests(config) if _inside(c, tree)]
        if loading:
            return f"refusing to grade: pytest would import {loading[0]} from the graded tree; pass --noconftest"
    if config.inipath is not None and _inside(config.inipath, tree):
        setting = next((s for s in SETTINGS if config.getini(s)), None)
        if setting is not None:
            return (f"refusing to grade: {config.inipath} in the graded tree sets {setting}, which could load its "
                    f"code or change the grading; pass -c /dev/null")
    loaded = next((name for name, module in list(sys.modules.items())
                   if isinstance(getattr(module, "__file__", None), str) and _inside(module.__file__, tree)
                   and not _inside(module.__file__, own)), None)
    if loaded is not None:
        return f"refusing to grade: module {loaded!r} was loaded from the graded tree into pytest"
    for entry in sys.path:
        where = Path(os.path.abspath(entry or "."))
        if where.is_dir() and _inside(where, tree) and not _inside(where, own):
            module = shadowing(where)
            if module is not None:
                return (f"refusing to grade: {where / module} would be imported instead of the installed one "
                        f"({where} is on sys.path, as python -m pytest puts it); run the pytest command")
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

    def __init__(self, *, passed: bool, details: str, points: float, max_points: float, skipped: bool = False,
                 **kwargs):
        super().__init__(**kwargs)
        self.passed, self.details, self.skipped = passed, details, skipped
        self.user_properties += [("points", points), ("max_points", max_points)]

    def runtest(self) -> None:
        if self.skipped:  # a part of the submission no target covers: said, never passed
            pytest.skip(self.details)
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
    from grader.course import course_for
    from grader.errors import InputError
    from grader.grade import Options, grade

    here = config.invocation_params.dir
    try:  # the course as ``micrograde grade`` run here chooses it (``grader.course``)
        chosen = course_for(config.getoption("micrograde_config"), [here], [here / path], flag="--micrograde-config")
        report = grade(path, Options(chosen.config, config.getoption("micrograde_timeout"), around=(here,)))
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
    for part in report.ungraded:
        name = f"not-graded::{part.name}@{part.where.describe()}"
        items.append(CheckItem.from_parent(session, name=name, nodeid=name, passed=False, skipped=True,
                                           details=f"not graded: {part.describe()}", points=0.0, max_points=0.0))
