"""``micrograde template``: ready files a course copies, for Classroom 50, GitHub Classroom and Gradescope.

Every template carries the course's configuration (``pinned``: the file given
with ``--config``, else ``./micrograde.toml``, else the default's text) and
grades with ``--config`` pointing at its own copy, so a ``micrograde.toml`` or
``[tool.micrograde]`` a student commits is never read (the report says it was
ignored).
"""

from __future__ import annotations

import base64
import json
import re
import shlex
import shutil
import stat
import string
import zipfile
from pathlib import Path

from grader.exercise.config import DEFAULT
from grader.exercise.targets import Exercise
from grader.report.identifiers import Identifiers
from grader.report.whole import exact, half_up, increments, reachable

HERE = Path(__file__).resolve().parent
PROJECT_FILES = ("pyproject.toml", "README.md")
PACKAGES = ("grader", "reference")


def pinned(path: Path | None) -> tuple[str, str]:
    """The course configuration a template carries: its file's name and text (the default's without one)."""
    return ("micrograde.toml", DEFAULT) if path is None else (path.name, path.read_text(encoding="utf-8"))


def github_classroom(directory: Path, install: str, submission: str, exercise: Exercise,
                     config: tuple[str, str]) -> list[Path]:
    """``.github/workflows/classroom.yml``: grade on every push, with points for GitHub Classroom.

    One command-grader step per check, each worth that check's points, so the
    Classroom score is micrograde's score (hidden checks too: the student's
    report counts them); the report goes to the job summary and each diagnosis
    becomes an annotation on the student's line. Every check step runs whatever
    happened before it (``if: always()``), so one failed check costs only its
    own points. The command grader reads points with ``parseInt``: a target
    whose checks are not worth whole points gets one step per check it may pass
    instead, the m-th passing when at least m of its checks pass and worth what
    the m-th adds to its rounded score (``grader.report.whole``).
    """
    steps = []
    runners = []
    for step_id, name, command, points in grading_steps(exercise):
        runners.append(step_id)
        steps.append(
            f"      - name: {json.dumps(name)}\n"
            f"        id: {step_id}\n"
            f"        if: always()\n"
            f"        uses: classroom-resources/autograding-command-grader@v1\n"
            f"        with:\n"
            f"          test-name: {json.dumps(name)}\n"
            f"          command: {json.dumps(f'micrograde result micrograde.json {command}')}\n"
            f"          timeout: 1\n"
            f"          max-score: {points}\n")
    # The reporter reads process.env[`${runner.toUpperCase()}_RESULTS`]: hyphens stay.
    results = "".join(f"          {r.upper()}_RESULTS: \"${{{{steps.{r}.outputs.result}}}}\"\n" for r in runners)
    name, text = config
    workflow = (HERE / "templates" / "classroom.yml").read_text().format(
        install=install, submission=submission, steps="".join(steps), results=results, runners=",".join(runners),
        config_name=shlex.quote(name), config=embedded(text, name, "          "))
    path = directory / ".github" / "workflows" / "classroom.yml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(workflow)
    return [path]


DELIMITER = "MICROGRADE_COURSE_CONFIGURATION"
# What a YAML literal block carries as it is: printable text, tabs and line feeds (no other line break, no BOM).
PLAIN = re.compile(r"[\t\n\x20-\x7e\xa0-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]*")


def embedded(text: str, name: str, indent: str) -> str:
    """The shell lines of the workflow's ``run`` block (the first unindented) that write the course file ``name``
    holding ``text`` exactly: a here-document, line by line and trailing spaces kept, where YAML carries the text
    as it is and no line of it is the delimiter; else its base64, decoded. Either way the workflow grades with
    the very configuration the course gave (the same ``sha256`` on every route)."""
    lines = text.split("\n")
    if PLAIN.fullmatch(text) and DELIMITER not in (line.strip() for line in lines):
        command = "cat"
        body = "".join(f"{indent}{line}\n" if line else "\n" for line in (lines[:-1] if text.endswith("\n") else lines))
    else:
        command = "base64 -d"
        body = f"{indent}{base64.b64encode(text.encode('utf-8')).decode('ascii')}\n"
    return f"""{command} > "$course"/{shlex.quote(name)} <<'{DELIMITER}'\n{body}{indent}{DELIMITER}"""


def grading_steps(exercise: Exercise) -> list[tuple[str, str, str, int]]:
    """(step id, name, ``micrograde result`` arguments, whole points) of each grading step: one per check
    where a target's checks are worth whole points, else one per number of its checks that may pass.
    The arguments are quoted for the shell, the ids made of what Actions allows (``grader.report.identifiers``)."""
    steps = []
    ids = Identifiers()
    for target in exercise.targets:
        stepped = increments(target.points, len(target.checks))
        name = shlex.quote(target.name)
        if all(step == target.points_of(check) for step, check in zip(stepped, target.checks)):
            steps += [(ids(check.id), check.id, shlex.quote(check.id), step)
                      for check, step in zip(target.checks, stepped)]
            continue
        if target.knobs.weights:  # checks worth unequal parts: steps by the target's own rounded score
            most = half_up(exact(target.points))
            thresholds = reachable([target.points_of(c) for c in target.checks])
            steps += [(ids(f"{target.name}-scored-{t}"), f"{target.name} (at least {t} of {most} points)",
                       f"{name} --scored {t}", t - before) for before, t in zip([0, *thresholds], thresholds)]
            continue
        n = len(target.checks)
        steps += [(ids(f"{target.name}-passed-{m}"), f"{target.name} (at least {m} of {n} checks pass)",
                   f"{name} --passed {m}", step) for m, step in enumerate(stepped, 1) if step > 0]
    return steps


def classroom50(directory: Path, install: str, submission: str, config: tuple[str, str]) -> list[Path]:
    """``autograder.py`` for a course's ``autograders/ASSIGNMENT/`` folder in its Classroom 50 repository."""
    text = string.Template((HERE / "templates" / "classroom50_autograder.py.in").read_text()).substitute(
        install=json.dumps(install), submission=json.dumps(submission), config_name=json.dumps(config[0]),
        config=json.dumps(config[1]))
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "autograder.py"
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return [path]


def installed_project_file(name: str) -> str:
    """``pyproject.toml`` or ``README.md`` for the bundle, from the installed package's metadata."""
    from importlib.metadata import requires, version

    text = (HERE / "templates" / f"{name}.in").read_text()
    if name != "pyproject.toml":
        return text
    dependencies = [r for r in requires("micrograde") or [] if "extra ==" not in r]
    return text.format(version=version("micrograde"), dependencies=json.dumps(dependencies))


def copy_source(directory: Path) -> Path:
    """``directory/micrograde``: this micrograde's source, which a platform's image installs from."""
    source = directory / "micrograde"
    if source.exists():
        shutil.rmtree(source)
    root = HERE.parent.parent
    for package in PACKAGES:
        shutil.copytree(root / package, source / package, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for name in PROJECT_FILES:
        if (root / name).is_file():
            shutil.copyfile(root / name, source / name)
        else:  # installed from a wheel: write the little that installing needs
            (source / name).write_text(installed_project_file(name))
    return source


PRAIRIELEARN_TIMEOUT = 600  # the longest an external grading job may run on PrairieLearn


def prairielearn(directory: Path, exercise: Exercise, config: tuple[str, str]) -> list[Path]:
    """A PrairieLearn external grader: the image's ``Dockerfile``, its entrypoint ``run_grader``, the
    course's ``micrograde.toml`` and this micrograde's source (both built into the image), and the
    ``externalGradingOptions`` of the question's ``info.json``, its timeout the grade's own time budget."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name in ("Dockerfile", "run_grader"):
        path = directory / name
        shutil.copyfile(HERE / "templates" / "prairielearn" / name, path)
        written.append(path)
    (directory / "run_grader").chmod(0o755)
    (directory / "micrograde.toml").write_text(config[1], encoding="utf-8")
    written += [directory / "micrograde.toml", copy_source(directory)]
    timeout = min(PRAIRIELEARN_TIMEOUT, int(exercise.time_budget()) + 30)
    options = {"externalGradingOptions": {"enabled": True, "image": "ORG/micrograde-grader",
                                          "entrypoint": "/opt/micrograde/run_grader", "timeout": timeout}}
    (directory / "info.json").write_text(json.dumps(options, indent=2) + "\n")
    return [*written, directory / "info.json"]


def gradescope(directory: Path, config: tuple[str, str]) -> list[Path]:
    """``setup.sh``, ``run_autograder`` and this micrograde's source, zipped as Gradescope wants them."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name in ("setup.sh", "run_autograder"):
        path = directory / name
        text = (HERE / "templates" / name).read_text()
        path.write_text(string.Template(text).substitute(config_name=json.dumps(config[0]),
                                                         config=json.dumps(config[1])) if name == "run_autograder"
                        else text)
        path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        written.append(path)
    source = copy_source(directory)
    written.append(source)
    archive = directory / "autograder.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in [directory / "setup.sh", directory / "run_autograder", *sorted(source.rglob("*"))]:
            if path.is_file():
                info = zipfile.ZipInfo(str(path.relative_to(directory)))
                info.external_attr = (path.stat().st_mode & 0o777) << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                info.date_time = (2020, 1, 1, 0, 0, 0)  # the same bytes every time
                zf.writestr(info, path.read_bytes())
    written.append(archive)
    return written


SHARDED = {"kubernetes": ("kubernetes.yaml", "kubernetes-merge.yaml"), "github-matrix": ("github-matrix.yml",),
           "slurm": ("slurm.sh",)}  # a class graded in shards on an engine a course has (``grader.staff.shards``)
SHARDED_NAMES = {"kubernetes.yaml": "micrograde-batch.yaml", "kubernetes-merge.yaml": "micrograde-merge.yaml",
                 "github-matrix.yml": ".github/workflows/micrograde-batch.yml", "slurm.sh": "micrograde-batch.sh"}
INDENT = {"kubernetes.yaml": 4, "github-matrix.yml": 10, "slurm.sh": 0}  # of the configuration's lines in each


def sharded(kind: str, directory: Path, shards: int, install: str | None, config: tuple[str, str]) -> list[Path]:
    """The files that grade a class in ``shards`` shards on Kubernetes (an Indexed Job, and the Job that merges
    it), GitHub Actions (a matrix, and a job that merges it) or Slurm (a job array), each carrying the
    course's configuration (``config``) and installing micrograde from ``install`` where it installs it."""
    written = []
    for name in SHARDED[kind]:
        text = (HERE / "templates" / "shards" / name).read_text()
        pad = " " * INDENT.get(name, 0)
        path = directory / SHARDED_NAMES[name]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(string.Template(text).substitute(
            shards=shards, shard_list=", ".join(str(k) for k in range(1, shards + 1)), install=install or "",
            config_name=config[0], config="\n".join(f"{pad}{line}".rstrip() for line in config[1].splitlines())))
        if name.endswith(".sh"):
            path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        written.append(path)
    return written
