"""The course a grade is graded by: chosen in one place, the same way on every route.

``micrograde grade``, ``batch``, ``template`` and ``scaffold``, the pytest plugin and ``check()`` all call
``course_for``, which takes, in order:

1. the configuration the route is given (``--config``, ``--micrograde-config``, ``check(config=...)``);
2. else the course's file where the route runs (``COURSE_FILES``: a ``micrograde.toml``, or a
   ``pyproject.toml`` with a ``[tool.micrograde]`` table, in the current folder; for ``check()``, in the
   folder of the script's files too), as a course repository or the scaffold's folder carries it;
3. else, when the submission says it was made for a course (a course file in its own folder, a notebook
   that carries one: ``grader.submission.carried``), the route cannot know which course grades it: it
   refuses, in one line naming its flag, rather than grade another exercise; ``check()`` alone, the
   learner's own check, grades by the configuration its notebook carries;
4. else the classic exercise.

A submission never configures a staff grade: a course file in its folder, or a course its notebook carries,
other than the one that grades it, is said in the report (``said``), naming the folder or notebook it means.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from grader.errors import ConfigError, UsageError
from grader.submission.carried import Carried, carried_by, short

TYPE_CHECKING = False  # as in grader/__init__.py
if TYPE_CHECKING:
    from grader.exercise.config import Config

COURSE_FILES = ("micrograde.toml", "pyproject.toml")  # where a route runs; a pyproject.toml only with the table


@dataclass(frozen=True)
class Course:
    """The configuration a grade is graded by, and the file it was read from (``None``: the classic exercise,
    or the configuration a notebook carries)."""

    config: Config
    path: Path | None = None


def might_configure(directory: Path) -> bool:
    """Whether ``directory`` may hold a course file, told without parsing one (``grader.cli`` asks it before
    anything is imported): a ``micrograde.toml``, or a ``pyproject.toml`` that names micrograde at all."""
    if (directory / COURSE_FILES[0]).is_file():
        return True
    try:
        with open(directory / COURSE_FILES[1], "rb") as pyproject:
            return b"micrograde" in pyproject.read(1 << 20)
    except OSError:
        return False


def shown(path: Path) -> Path:
    """A course file as reports name it: from the current folder when it lies in it."""
    here = Path.cwd()
    return path.relative_to(here) if path.is_relative_to(here) else path


def folder_of(path: Path) -> Path:
    """The folder a submission's own course file would lie in: a folder's own, or a file's."""
    return path if path.is_dir() else path.parent


def course_for(named: Path | None, where: Sequence[Path], submissions: Sequence[Path] = (), *, flag: str,
               learner: bool = False, made_for: str | None = None) -> Course:
    """The course a route grades ``submissions`` by (see the module): ``named`` if given, else the course file
    in one of the folders ``where`` the route runs, else the classic exercise, unless a submission was made for
    a course, which ``UsageError`` then says naming ``flag``. ``learner`` (``check()``) grades by the
    configuration its notebook carries; ``made_for`` is the hash of the course its grading cell names."""
    from grader.exercise.config import default, found_in, load

    if named is not None:
        return Course(load(named), named)
    for directory in dict.fromkeys(Path(d).resolve() for d in where):
        found = found_in(directory)
        if found:
            return Course(load(shown(found[0])), found[0])
    carried = carried_by(list(submissions))
    if learner and carried:
        return Course(carried_config(carried, flag))
    for path in submissions:
        own = found_in(folder_of(path))
        if own:
            raise UsageError(f"{own[0]} configures a course, and this grade has no course configuration of its own: "
                             f"pass {flag} FILE (the course's micrograde.toml), or grade where it lies")
    if carried:
        raise UsageError(f"{carried[0].notebook} was made for a course (its configuration's sha256 "
                         f"{short(carried[0].sha256)}), and this grade has no course configuration of its own: "
                         f"pass {flag} FILE (the course's micrograde.toml)")
    if made_for is not None and made_for != default().sha256:
        raise UsageError(f"this notebook was made for a course (its configuration's sha256 {short(made_for)}) "
                         f"whose configuration is not here: put the course's micrograde.toml beside the notebook, "
                         f"or pass {flag}")
    return Course(default())


def carried_config(carried: list[Carried], flag: str) -> Config:
    """The one configuration the notebooks carry (``UsageError`` when they disagree or hold only its hash)."""
    courses = {c.sha256: c for c in carried}
    if len(courses) > 1:
        raise UsageError(f"{', '.join(c.notebook.name for c in courses.values())} were made for different courses: "
                         f"pass {flag}")
    [found] = courses.values()
    if found.text is None:
        raise UsageError(f"{found.notebook.name} was made for a course (its configuration's sha256 "
                         f"{short(found.sha256)}) whose configuration is not here: put the course's micrograde.toml "
                         f"beside the notebook, or pass {flag}")
    try:
        return found.config()
    except ConfigError as exc:
        raise UsageError(f"{exc}: put the course's micrograde.toml beside the notebook, or pass {flag}") from None


def described(config: Config) -> str:
    """Where a configuration came from, as a warning names it."""
    return "the classic exercise" if config.source == "default" else config.source


def said(submission: Path, config: Config, around: Sequence[Path] = ()) -> list[str]:
    """Warnings for what the submission holds of a course other than ``config``, the one that grades it: every
    course file in its own folder and in the folders ``around`` it (where the route runs), and every course
    a notebook of it carries."""
    from grader.exercise.config import found_in

    in_use = Path(config.source).resolve() if config.source != "default" else None
    own = folder_of(submission).resolve()
    warnings = []
    folders = dict.fromkeys([own, *(Path(d).resolve() for d in around)])
    for folder in folders:
        for path in found_in(folder):
            if path.resolve() == in_use:
                continue
            place = "the submission's folder" if folder == own else "the current folder"
            table = "'s [tool.micrograde] table" if path.name == "pyproject.toml" else ""
            warnings.append(f"{path.name}{table} in {place} ({folder}) was ignored: the course's own configuration "
                            f"grades it ({described(config)})")
    for carried in carried_by([submission]):
        if carried.sha256 != config.sha256:
            warnings.append(f"{carried.notebook.name} was made for another course configuration (sha256 "
                            f"{short(carried.sha256)}) than the one that grades it ({described(config)}, sha256 "
                            f"{short(config.sha256)}): graded by the latter")
    return warnings
