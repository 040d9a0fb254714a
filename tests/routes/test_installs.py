"""What a grading route installs, installed for real: offline, from the wheelhouse (tests/README.md), into
fresh venvs of Debian's own Python, which refuses any install into itself (PEP 668).

Grading needs only ``micrograde``; the ``--html`` page says in one line which extra it needs. The Classroom 50
autograder and the GitHub Classroom workflow install micrograde into a venv of their own, never into the
Python that runs them, and leave nothing behind.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml
from helpers import CORPUS, ROOT, SOLUTION, micrograde
from platforms import USER_PYTHON, WHEELHOUSE, copy_sources
from test_classroom import RUNNER_ENV, checkout, run_workflow

PAGE_ONLY = ("nbconvert", "bleach", "nh3", "grandalf")


@pytest.fixture(scope="module")
def offline(tmp_path_factory) -> dict[str, str]:
    """pip's settings for an offline install from the wheelhouse, and micrograde's wheel (``wheel``), built
    from this checkout."""
    house = os.environ.get(WHEELHOUSE, "")
    if not house or not Path(house).is_dir() or not Path(USER_PYTHON).is_file():
        reason = f"needs {USER_PYTHON} and a wheelhouse in {WHEELHOUSE} (tests/README.md)"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    work = tmp_path_factory.mktemp("wheel")
    copy_sources(work / "source")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(work), "PIP_CONFIG_FILE": os.devnull, "PIP_NO_INDEX": "1",
           "PIP_FIND_LINKS": house, "PIP_DISABLE_PIP_VERSION_CHECK": "1", "LANG": "C.UTF-8"}
    subprocess.run([USER_PYTHON, "-m", "venv", str(work / "venv")], check=True, env=env)
    subprocess.run([str(work / "venv" / "bin" / "python"), "-m", "pip", "wheel", "--quiet", "--no-deps",
                    "--wheel-dir", str(work / "dist"), str(work / "source")], check=True, env=env, cwd=work)
    return {**env, "wheel": str(next((work / "dist").glob("micrograde-*.whl")))}


def pip_env(offline: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in offline.items() if k != "wheel"}


def test_grading_installs_without_the_pages_libraries_and_the_page_names_its_extra(offline, tmp_path):
    venv = tmp_path / "venv"
    env = pip_env(offline)
    subprocess.run([USER_PYTHON, "-m", "venv", str(venv)], check=True, env=env)
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", offline["wheel"]], check=True,
                   env=env)
    installed = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "list", "--format", "json"], env=env,
                               capture_output=True, text=True, check=True).stdout
    assert not {p["name"].lower() for p in json.loads(installed)} & set(PAGE_ONLY)
    grading = subprocess.run([str(venv / "bin" / "micrograde"), "grade", str(CORPUS / "solution.py")], env=env,
                             capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert grading.returncode == 0, grading.stderr
    page = subprocess.run([str(venv / "bin" / "micrograde"), "grade", str(CORPUS / "solution.py"), "--html",
                           str(tmp_path / "page.html")], env=env, capture_output=True, text=True, timeout=300,
                          cwd=tmp_path)
    assert page.returncode == 2 and page.stdout == "" and page.stderr.count("\n") == 1, page.stderr
    assert "pip install 'micrograde[html]'" in page.stderr and not (tmp_path / "page.html").exists()


def test_classroom50_installs_into_a_venv_of_its_own_never_into_a_system_python(offline, tmp_path):
    """Run by Debian's Python, which has no micrograde and refuses pip installs into itself (PEP 668)."""
    assert (Path("/usr/lib/python3.11/EXTERNALLY-MANAGED")).is_file()
    assert micrograde("template", "classroom50", str(tmp_path / "c50"), "--install", offline["wheel"]).returncode == 0
    repo = checkout(tmp_path, SOLUTION)
    temp = tmp_path / "runner-temp"
    temp.mkdir()
    env = {**pip_env(offline), **RUNNER_ENV, "RUNNER_TEMP": str(temp)}
    done = subprocess.run([USER_PYTHON, str(tmp_path / "c50" / "autograder.py")], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    result = json.loads((repo / "result.json").read_text())
    assert result["score"] == result["max-score"] == 100
    assert list(temp.iterdir()) == []  # its venv went with it
    assert subprocess.run([USER_PYTHON, "-I", "-c", "import grader"], capture_output=True).returncode != 0


def test_github_classroom_installs_into_a_venv_of_its_own(offline, tmp_path):
    """The workflow's install step run as written (setup-python's ``python`` being Debian's here)."""
    template = tmp_path / "template"
    assert micrograde("template", "github-classroom", str(template), "--install", offline["wheel"]).returncode == 0
    workflow = yaml.safe_load((template / ".github" / "workflows" / "classroom.yml").read_text())
    runner = tmp_path / "runner"
    (runner / "bin").mkdir(parents=True)
    (runner / "bin" / "python").symlink_to(USER_PYTHON)
    repo = checkout(tmp_path, SOLUTION)
    saved = dict(os.environ)
    os.environ.update({**pip_env(offline), "PATH": f"{runner / 'bin'}:/usr/bin:/bin"})
    try:
        total, maximum = run_workflow(workflow, repo, offline["wheel"], runner, really_install=True)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    assert (total, maximum) == (100, 100)
    assert (runner / "temp" / "micrograde-venv" / "bin" / "micrograde").is_file()
    assert list((runner / "tmp").iterdir()) == []
    assert ROOT.is_dir()
