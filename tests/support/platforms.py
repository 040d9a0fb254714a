"""micrograde run the way the platforms run it, by the real ``micrograde`` command.

- ``namespaces``: as on this machine (root, namespaces available);
- ``docker``: started under the seccomp refusals of Docker's default profile (``nonamespaces.py``), so
  that micrograde finds no namespaces by itself, as root;
- ``docker-old``: the same, with the Landlock calls answered ENOSYS too (an old engine, or a kernel
  without Landlock);
- ``user``: an ordinary user (``mgrader``) whose user namespaces are refused, as on Ubuntu since 23.10
  and GitHub's ubuntu-24.04 runners, with its own ``HOME`` and its own venv (micrograde with its
  ``execute`` extra), installed offline from a wheelhouse (``MICROGRADE_WHEELHOUSE``; see ``tests/README.md``).

Every mode gets a ``HOME`` of its own (the replay cache lives under it) and a secret in its
environment (``MICROGRADE_TEST_SECRET``), and knows the trees that must stay byte-identical whatever a
submission does: the grader's site-packages, its own packages and its ``HOME``.
"""

from __future__ import annotations

import hashlib
import json
import os
import pwd
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from helpers import OWN_COURSE, ROOT

import grader
import reference
from grader.child import launcher

MODES = ("namespaces", "docker", "docker-old", "user")
USER = "mgrader"
USER_PYTHON = "/usr/bin/python3.11"  # Debian's: readable by any user (pyenv's, under /root, is not)
WHEELHOUSE = "MICROGRADE_WHEELHOUSE"
SECRET = "MICROGRADE_TEST_SECRET"
WRAPPER = Path(__file__).with_name("nonamespaces.py")
SOURCES = ("pyproject.toml", "README.md", "grader", "reference")  # what a venv's micrograde is built from
EXTRAS = "execute,tensor"  # the user's venv's extras: IPython for --execute, numpy for tensor courses
WHEELHOUSE_EXTRAS = f"{EXTRAS},html"  # and the page's, which bench/bench_install.py installs too


class Unavailable(Exception):
    """This machine cannot run the mode (the reason is the message)."""


@dataclass
class Platform:
    name: str
    prefix: list[str]  # what runs the command: nothing, or the wrapper and its options
    bin: Path  # the grader's venv's bin directory, with its ``micrograde``
    home: Path
    uid: int
    trees: list[Path]  # byte-identical after every grade
    skipped: list[Path] = field(default_factory=list)  # folders within the trees that are not this test's
    secret: str = field(default_factory=lambda: f"secret-{uuid.uuid4().hex}")

    def environment(self) -> dict[str, str]:
        """The grader's whole environment: nothing of the test process's, a secret it must keep."""
        return {"PATH": f"{self.bin}:/usr/local/bin:/usr/bin:/bin", "HOME": str(self.home), "LANG": "C.UTF-8",
                SECRET: self.secret}

    def run(self, *args: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess:
        """``micrograde ARGS`` as this platform runs it, in ``cwd``."""
        return subprocess.run([*self.prefix, str(self.bin / "micrograde"), *args], cwd=cwd, capture_output=True,
                              text=True, env=self.environment(), timeout=timeout)

    def grade(self, folder: Path, source: str | None, name: str = "work.py",
              own_course: bool = False) -> tuple[dict, subprocess.CompletedProcess]:
        """The JSON report of ``source``, written as ``folder/name`` (unless None: written already) and
        graded by this platform, and the finished command (a grade that gives no report fails the test).
        ``own_course``: graded in a course of its own (``helpers.OWN_COURSE``), whose openings the replay
        cache keeps, where the default course's ship with micrograde."""
        if source is not None:
            folder.mkdir(exist_ok=True)
            (folder / name).write_text(source)
        course = []
        if own_course:
            (folder / "course.toml").write_text(OWN_COURSE)
            course = ["--config", str(folder / "course.toml")]
        self.hand_over(folder)
        result = self.run("grade", str(folder / name), "--format", "json", *course, cwd=folder)
        assert result.returncode in (0, 1), f"{self.name}: exit {result.returncode}: {result.stderr[-2000:]}"
        return json.loads(result.stdout), result

    def hand_over(self, path: Path) -> None:
        """Make ``path`` (a tree the test wrote) the grader's, as a course's files are the grading user's."""
        for item in (path, *path.rglob("*")):
            if item.lstat().st_uid != self.uid:  # a chown changes a file's ctime even to the same owner
                os.lchown(item, self.uid, self.uid)


def platform(name: str, workspace: Path) -> Platform:
    """The ``name`` mode, its ``HOME`` made under ``workspace`` (the user's own home in user mode), after
    a first grade in the default course and one in a course of its own: the grader's own first writes (the
    replay cache and its secret under ``HOME``) come before any test's."""
    made = user_platform() if name == "user" else root_platform(name, workspace)
    with tempfile.TemporaryDirectory() as folder:
        Path(folder).chmod(0o755)
        made.grade(Path(folder) / "first", (ROOT / "tests" / "corpus" / "solution.py").read_text())
        made.grade(Path(folder) / "first", None, own_course=True)
    return made


def root_platform(name: str, workspace: Path) -> Platform:
    if name == "namespaces" and not launcher.detect().isolated:
        raise Unavailable(f"no namespaces on this machine: {launcher.detect().detail}")
    home = workspace / f"home-{name}"
    home.mkdir(mode=0o700)
    prefix = [] if name == "namespaces" else [sys.executable, str(WRAPPER),
                                              *(["--no-landlock"] if name == "docker-old" else []), "--"]
    site = {Path(sysconfig.get_paths()[key]) for key in ("purelib", "platlib")}
    packages = {Path(module.__file__).resolve().parent for module in (grader, reference)}  # editable: elsewhere
    packages = {p for p in packages if not any(p.is_relative_to(s) for s in site)}
    return Platform(name, prefix, Path(sys.executable).parent, home, os.getuid(), sorted(site | packages | {home}))


def user_platform() -> Platform:
    """The user's mode. Its ``HOME`` (and venv) is one of the user's per checkout, so that tests of two
    checkouts on one machine keep out of each other's way; the user's own home is watched too, but for
    the other checkouts' homes."""
    if os.getuid() != 0:
        raise Unavailable("user mode needs root, to make its user")
    entry = ensure_user()
    checkouts = Path(entry.pw_dir) / "checkouts"
    home = checkouts / hashlib.sha256(str(ROOT).encode()).hexdigest()[:12]
    home.mkdir(parents=True, exist_ok=True)
    for folder in (checkouts, home):
        os.chown(folder, entry.pw_uid, entry.pw_gid)
    ensure_venv(home / "venv", entry.pw_uid)
    return Platform("user", [sys.executable, str(WRAPPER), "--user", USER, "--"], home / "venv" / "bin", home,
                    entry.pw_uid, [Path(entry.pw_dir), home], skipped=[checkouts])


def ensure_user() -> pwd.struct_passwd:
    """The grader's user, made once (``.ci/run`` makes it too)."""
    try:
        return pwd.getpwnam(USER)
    except KeyError:
        pass
    made = subprocess.run(["useradd", "--create-home", "--shell", "/usr/sbin/nologin", USER], capture_output=True,
                          text=True)
    if made.returncode != 0:
        raise Unavailable(f"cannot make user {USER}: {made.stderr.strip()}")
    return pwd.getpwnam(USER)


def checkout_key() -> str:
    """A hash of what the user's micrograde is built from: a venv made from another checkout is made again."""
    digest = hashlib.sha256(Path(USER_PYTHON).resolve().name.encode())
    for name in SOURCES:
        path = ROOT / name
        for item in sorted([path] if path.is_file() else path.rglob("*")):
            if item.is_file() and "__pycache__" not in item.parts and ".egg-info" not in str(item):
                digest.update(str(item.relative_to(ROOT)).encode() + b"\0" + item.read_bytes() + b"\0")
    return digest.hexdigest()


def ensure_venv(venv: Path, uid: int) -> None:
    """The user's venv with micrograde from this checkout, installed offline from the wheelhouse; kept
    while the checkout is the same. Made by root from Debian's Python and then handed to the user."""
    key = checkout_key()
    marker = venv / "micrograde-checkout"
    if marker.is_file() and marker.read_text() == key:
        return
    wheelhouse = os.environ.get(WHEELHOUSE, "")
    if not wheelhouse or not Path(wheelhouse).is_dir():
        raise Unavailable(f"no wheelhouse: set {WHEELHOUSE} to a folder built as tests/README.md says")
    if not Path(USER_PYTHON).is_file():
        raise Unavailable(f"{USER_PYTHON} is missing (Debian's python3.11 and python3.11-venv)")
    shutil.rmtree(venv, ignore_errors=True)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(venv.parent), "PIP_CONFIG_FILE": os.devnull, "LANG": "C.UTF-8"}
    with tempfile.TemporaryDirectory() as build:
        copy_sources(Path(build))
        for command in ([USER_PYTHON, "-m", "venv", str(venv)],
                        [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--no-index",
                         "--no-cache-dir", "--find-links", wheelhouse, f"{build}[{EXTRAS}]"]):
            done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=build)
            if done.returncode != 0:
                raise Unavailable(f"cannot make the user's venv ({' '.join(command[:4])}...): "
                                  f"{(done.stderr.strip().splitlines() or ['?'])[-1]} (a wheelhouse built before a "
                                  "dependency was added? build it again as tests/README.md says)")
    marker.write_text(key)
    for item in (venv, *venv.rglob("*")):
        os.lchown(item, uid, uid)


def copy_sources(folder: Path) -> None:
    """What micrograde is built from, copied into ``folder``: a build writes into its source tree."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, folder / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            shutil.copy2(ROOT / name, folder / name)


def build_wheelhouse(folder: Path) -> None:
    """Download what the user's venv needs into ``folder``, resolved for the user's Python (whose
    patch version some packages care about), while a package index is reachable."""
    with tempfile.TemporaryDirectory() as scratch:
        venv, source = Path(scratch, "venv"), Path(scratch, "source")
        copy_sources(source)
        for command in ([USER_PYTHON, "-m", "venv", str(venv)],
                        [str(venv / "bin" / "python"), "-m", "pip", "wheel", "--quiet", "--wheel-dir", str(folder),
                         f"{source}[{WHEELHOUSE_EXTRAS}]", "setuptools>=77"]):
            subprocess.run(command, check=True, cwd=scratch)


if __name__ == "__main__":  # what CI does while an index is reachable, and a machine once before a local run
    if len(sys.argv) != 2:
        raise SystemExit(f"usage: python tests/support/platforms.py WHEELHOUSE   (then export {WHEELHOUSE}=WHEELHOUSE)")
    build_wheelhouse(Path(sys.argv[1]).absolute())
    if os.getuid() == 0:
        ensure_user()
