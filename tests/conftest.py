import compileall
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

from grader.child import launcher

TESTS = Path(__file__).parent
# The suite's folders say what a test costs and what it is about (tests/README.md): ``unit/`` is the fast loop
# (``python -m pytest tests/unit``, under a minute on 2 cores: every rule, kind and module a grade runs, in this
# process or in one child a test); ``grading/``, ``corpora/``, ``security/`` and ``routes/`` are the rest of the
# whole suite (``python -m pytest``): tables of courses and kinds, whole corpora, attacks in every platform mode,
# every route through its consumer; ``support/`` holds what the tests share.
FOLDERS = ("unit", "grading", "corpora", "security", "routes")
# What the tests share, and the folders' own modules: a test may use another's builders (``from test_classroom
# import run_workflow``) whichever folder either is in.
sys.path[:0] = [str(TESTS / "support"), *(str(TESTS / folder) for folder in FOLDERS)]

import platforms  # noqa: E402  (found through the path above)

# The suite runs in parallel (pytest-xdist, ``-n auto`` in pyproject.toml), a file at a time per worker, but for
# the files of the platform modes: one worker runs them all, in turn. A mode is made once a process (the user's
# venv and HOME are one per checkout), and their tests watch its trees byte for byte while a grade runs.
PLATFORM_FIXTURES = {"grading", "any_platform"}
PLATFORM_FILES = {"test_execute_attacks.py", "test_platform_attacks.py", "test_platform_trust.py",
                  "test_platforms.py"}
PLATFORM_UNIT = "the platform modes"
MAX_WORKERS = 4  # beyond it, the platform files alone set the suite's time


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    return max(1, min(len(os.sched_getaffinity(0)), MAX_WORKERS))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """A file's tests go to one worker (its module fixtures are made once), the platform files' to one worker
    between them, first; then the files with the most tests."""
    from xdist.scheduler import LoadScopeScheduling

    class ByFile(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            file = nodeid.split("::", 1)[0]
            return PLATFORM_UNIT if Path(file).name in PLATFORM_FILES else file

        def _assign_work_unit(self, node) -> None:
            if PLATFORM_UNIT in self.workqueue:  # the longest by far (kernels, venvs, four modes)
                self.workqueue.move_to_end(PLATFORM_UNIT, last=False)
            super()._assign_work_unit(node)

    return ByFile(config, log)


def pytest_configure(config: pytest.Config) -> None:
    """Before the workers start: the byte code of micrograde's own packages, which the platform tests watch
    (a first import in one worker would otherwise write it while another worker's grade is watched).

    In each worker: a temporary folder of its own (``TMPDIR``), where its tests and what they start make
    their temporary files. A platform test watching ``/tmp`` tells a grade's leftovers by their owner, and
    run by an ordinary user, the other workers' files in ``/tmp`` are that user's too."""
    if hasattr(config, "workerinput"):
        folder = tempfile.mkdtemp(prefix=f"micrograde-tests-{config.workerinput['workerid']}-")
        os.chmod(folder, 0o755)  # the platforms' users enter the workspaces made in it
        os.environ["TMPDIR"] = tempfile.tempdir = folder
        config.add_cleanup(lambda: shutil.rmtree(folder, ignore_errors=True))
    elif not sys.dont_write_bytecode:
        for package in ("grader", "reference"):
            compileall.compile_dir(TESTS.parent / package, quiet=1)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.parent.name not in FOLDERS and item.path.is_relative_to(TESTS):
            raise pytest.UsageError(f"{item.nodeid}: a test lives in one of tests/{{{','.join(FOLDERS)}}}/ "
                                    "(tests/README.md says which)")
        if PLATFORM_FIXTURES & set(getattr(item, "fixturenames", ())) and item.path.name not in PLATFORM_FILES:
            raise pytest.UsageError(f"{item.nodeid} runs a platform mode: add its file to PLATFORM_FILES "
                                    "(tests/conftest.py), so that one worker runs them all")


@pytest.fixture(params=["auto", "none"])
def mode(request, monkeypatch):
    """Each test twice: in the strongest sandbox this machine offers, and with namespaces
    turned off (``MICROGRADE_SANDBOX=none``), which is what a machine without them gets."""
    monkeypatch.setenv("MICROGRADE_SANDBOX", request.param)
    launcher.detect.cache_clear()
    if request.param == "auto" and not launcher.detect().isolated:
        pytest.skip(f"no namespaces on this machine: {launcher.detect().detail}")
    yield request.param
    launcher.detect.cache_clear()


_platforms: dict[str, "platforms.Platform | platforms.Unavailable"] = {}


def _platform(name: str, tmp_path_factory) -> "platforms.Platform":
    """The ``name`` mode, made once a session; a machine that cannot run it fails the test under CI
    (the CI machine must run every mode) and skips it, saying why, elsewhere."""
    if name not in _platforms:
        try:
            _platforms[name] = platforms.platform(name, tmp_path_factory.mktemp("platforms"))
        except platforms.Unavailable as exc:
            _platforms[name] = exc
    made = _platforms[name]
    if isinstance(made, platforms.Unavailable):
        if os.environ.get("CI") == "true":
            pytest.fail(f"{name} mode: {made}")
        pytest.skip(f"{name} mode: {made}")
    return made


@pytest.fixture(scope="session", params=["namespaces", "docker", "user"])
def grading(request, tmp_path_factory) -> "platforms.Platform":
    """micrograde as three platforms run it: with namespaces, in a Docker-like container, as an ordinary user."""
    return _platform(request.param, tmp_path_factory)


@pytest.fixture(scope="session", params=platforms.MODES)
def any_platform(request, tmp_path_factory) -> "platforms.Platform":
    """``grading``'s three modes, and Docker without Landlock (an old engine or kernel)."""
    return _platform(request.param, tmp_path_factory)


@pytest.fixture
def workspace() -> Path:
    """A temporary folder any user may enter (``tmp_path`` is root's alone): the submissions, the
    canaries and the batch folders of a test run in every mode."""
    path = Path(tempfile.mkdtemp(prefix="micrograde-platform-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)
