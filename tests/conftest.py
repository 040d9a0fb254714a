import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

from grader.child import launcher

sys.path.insert(0, str(Path(__file__).parent))

import platforms  # noqa: E402  (found through the path above)

# The slow files of the suite: every platform mode, real kernels, browsers and batch processes, the whole
# corpora, the attacks. ``python -m pytest -m "not slow"`` leaves them out (and samples the parametrized tests of
# the rest, ``FAST_SAMPLE``): the fast loop (tests/README.md), which runs every module a grade runs, every kind of
# target and every report format; the staff routes that start batches, kernels and browsers are the whole
# suite's, ``python -m pytest``.
SLOW = {
    "test_assignments.py", "test_batch.py", "test_batch_names.py", "test_classroom.py", "test_course_config.py",
    "test_coursework.py", "test_drawing.py", "test_execute_attacks.py", "test_forgery.py", "test_golden.py",
    "test_hostile.py", "test_html.py", "test_installs.py", "test_kind_attacks.py", "test_notebook.py",
    "test_op_mutants.py",
    "test_page_attacks.py", "test_pages.py", "test_platform_attacks.py", "test_platform_trust.py",
    "test_platforms.py", "test_pytest_plugin.py", "test_realstyle.py", "test_refused.py", "test_replay.py",
    "test_replay_trust.py", "test_report_escaping.py", "test_routes.py", "test_course_notebook.py",
}

# The fast loop runs one in every FAST_SAMPLE cases of a parametrized test of the other files (the first, the
# ninth...): every rule and module still runs, and a change that breaks a whole table shows at once; the rest
# are slow, run by the whole suite.
FAST_SAMPLE = 8


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    cases: dict[tuple[str, str], int] = {}
    for item in items:
        if item.path.name in SLOW:
            item.add_marker(pytest.mark.slow)
        elif hasattr(item, "callspec"):
            key = (item.path.name, item.originalname)
            cases[key] = cases.get(key, -1) + 1
            if cases[key] % FAST_SAMPLE:
                item.add_marker(pytest.mark.slow)


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
    """A folder in ``/tmp`` any user may enter (``tmp_path`` is root's alone): the submissions, the
    canaries and the batch folders of a test run in every mode."""
    path = Path(tempfile.mkdtemp(prefix="micrograde-platform-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)
