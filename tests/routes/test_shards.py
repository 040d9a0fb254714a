"""A class graded in shards, as separate processes, then merged: the same gradebook, byte for byte, class summary
and charts as one ``batch`` of it; on each engine the templates are written for (a Kubernetes Indexed Job, a
GitHub Actions matrix, a Slurm job array), their commands run as the engine runs them.

The 2,000-submission comparison is ``bench/bench_shards.py``'s, run here by a slow test too.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from helpers import ROOT, micrograde
from recipes import BIN

from grader.staff.shards import shard_of

sys.path.insert(0, str(ROOT / "bench"))
import bench_shards  # noqa: E402  (found through the path above)

COURSE = Path(__file__).parents[1] / "courses" / "route-matrix.toml"
CLASS_FILES = ("grades.csv", "gradebook.csv", "summary.md", "summary.html")
ENV = {**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}"}


@pytest.fixture(scope="module")
def klass(tmp_path_factory) -> Path:
    """A class of 30 students: right and buggy engines, a notebook, a folder, a file that cannot be read, names
    that sort differently from their shards."""
    folder = tmp_path_factory.mktemp("class") / "submissions"
    bench_shards.make_class(folder, 30)
    return folder


@pytest.fixture(scope="module")
def one_batch(klass, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("one") / "out"
    done = micrograde("batch", str(klass), "--out", str(out), "--jobs", "2", "--config", str(COURSE), timeout=600)
    assert done.returncode == 0, done.stderr
    return out


def graded(path: Path) -> dict:
    """A student's report but for where it was graded: the paths of the class and the course's file, and the
    HMAC that covers them."""
    report = json.loads(path.read_text())
    for key in ("submission", "batch_mac"):
        report.pop(key, None)
    report.get("config", {}).pop("source", None)
    return report


def same_class(merged: Path, one: Path) -> None:
    """The class's files byte for byte, and every student's report, as one batch wrote them."""
    for name in CLASS_FILES:
        assert (merged / name).read_bytes() == (one / name).read_bytes(), name
    assert sorted(p.name for p in (merged / "reports").iterdir()) == sorted(p.name for p in (one / "reports").iterdir())
    for path in (one / "reports").iterdir():
        assert graded(merged / "reports" / path.name) == graded(path), path.name


def test_a_students_shard_is_a_hash_of_their_name_alone():
    names = [f"student{i:04d}" for i in range(400)] + ["josé", "a\udcff", "bob.py"]
    shards = {name: shard_of(name, 4) for name in names}
    shuffled = random.Random(7).sample(names, len(names))
    assert {name: shard_of(name, 4) for name in shuffled} == shards
    assert set(shards.values()) == {1, 2, 3, 4}
    assert all(60 <= list(shards.values()).count(k) <= 140 for k in range(1, 5))  # spread over the shards
    assert {name: shard_of(name, 1) for name in names} == dict.fromkeys(names, 1)


def test_shards_run_apart_then_merged_are_one_batch(klass, one_batch, tmp_path):
    """Four shards, each a process of its own, into a folder each, merged in an order of their own."""
    for k in (3, 1, 4, 2):
        done = micrograde("batch", str(klass), "--out", str(tmp_path / f"shard-{k}"), "--shard", f"{k}/4",
                          "--jobs", "2", "--config", str(COURSE), timeout=600)
        assert done.returncode == 0, done.stderr
        manifest = json.loads((tmp_path / f"shard-{k}" / f"shard-{k}-of-4.json").read_text())
        assert manifest["class_count"] == 30 and all(shard_of(s, 4) == k for _, s, _ in manifest["students"])
        assert not (tmp_path / f"shard-{k}" / "grades.csv").exists()
    done = micrograde("batch-merge", *(str(tmp_path / f"shard-{k}") for k in (2, 4, 1, 3)), "--out",
                      str(tmp_path / "class"))
    assert done.returncode == 0, done.stderr
    same_class(tmp_path / "class", one_batch)


def test_shards_that_share_a_folder_merge_in_place(klass, one_batch, tmp_path):
    out = tmp_path / "out"
    for k in (1, 2):
        assert micrograde("batch", str(klass), "--out", str(out), "--shard", f"{k}/2", "--config", str(COURSE),
                          timeout=600).returncode == 0
    assert micrograde("batch-merge", str(out), "--out", str(out)).returncode == 0
    same_class(out, one_batch)


def test_a_merge_of_what_is_not_the_whole_class_is_refused_in_one_line(klass, tmp_path):
    shards = [tmp_path / f"s{k}" for k in (1, 2, 3)]
    for k, out in enumerate(shards, 1):
        assert micrograde("batch", str(klass), "--out", str(out), "--shard", f"{k}/3", "--config", str(COURSE),
                          timeout=600).returncode == 0

    def merged(*folders: Path) -> str:
        done = micrograde("batch-merge", *map(str, folders), "--out", str(tmp_path / "class"))
        assert done.returncode == 2 and done.stderr.count("\n") == 1 and not (tmp_path / "class").exists()
        return done.stderr

    assert "shard 2/3 is missing" in merged(shards[0], shards[2])
    assert "shard 1/3 is there twice" in merged(shards[0], shards[0], shards[1], shards[2])
    assert "no shard manifest" in merged(tmp_path)
    report = next((shards[1] / "reports").iterdir())
    report.write_text(report.read_text().replace('"score"', '"score" ', 1))
    assert f"{report}: not the report shard 2/3 wrote" in merged(*shards)
    again = tmp_path / "again"
    assert micrograde("batch", str(klass), "--out", str(again), "--shard", "2/3", "--timeout", "5", "--config",
                      str(COURSE), timeout=600).returncode == 0
    assert "different settings" in merged(shards[0], again, shards[2])
    for spec in ("0/3", "4/3", "2", "a/b", "1/0"):
        done = micrograde("batch", str(klass), "--out", str(tmp_path / "x"), "--shard", spec)
        assert done.returncode == 2 and "K/N" in done.stderr and done.stderr.count("\n") == 1, spec


def template(kind: str, tmp_path: Path) -> Path:
    folder = tmp_path / kind
    done = micrograde("template", kind, str(folder), "--shards", "3", "--config", str(COURSE), "--install",
                      "git+https://github.com/ORG/micrograde")
    assert done.returncode == 0, done.stderr
    return folder


def test_the_kubernetes_indexed_job_grades_the_class(klass, one_batch, tmp_path):
    """Each pod's command as the Job runs it, with its JOB_COMPLETION_INDEX, the ConfigMap mounted at /course
    and the class's volume at /class; then the merge Job's."""
    folder = template("kubernetes", tmp_path)
    config_map, job = yaml.safe_load_all((folder / "micrograde-batch.yaml").read_text())
    [merge] = yaml.safe_load_all((folder / "micrograde-merge.yaml").read_text())
    volume, course = tmp_path / "volume", tmp_path / "configmap"
    shutil.copytree(klass, volume / "submissions")
    course.mkdir()
    for name, text in config_map["data"].items():
        (course / name).write_text(text)
    assert job["spec"]["completionMode"] == "Indexed" and job["spec"]["completions"] == 3

    def pod(spec: dict, index: int | None) -> None:
        [container] = spec["spec"]["template"]["spec"]["containers"]
        mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
        command = container["args"][0]
        for name, where in (("class", volume), ("course", course)):  # each mount where the pod sees it
            if name in mounts:
                command = re.sub(rf"(?<![\w/]){re.escape(mounts[name])}(?=/|\b)", str(where), command)
        env = {**ENV, **({"JOB_COMPLETION_INDEX": str(index)} if index is not None else {})}
        done = subprocess.run([*container["command"], command], env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr

    for index in range(job["spec"]["completions"]):
        pod(job, index)
    pod(merge, None)
    same_class(volume / "results" / "class", one_batch)


def test_the_github_actions_matrix_grades_the_class(klass, one_batch, tmp_path):
    """Each matrix job's steps as Actions runs them (its shard in ``${{ matrix.shard }}``, the artefact it
    uploads kept by name), then the merge job's, the artefacts downloaded as download-artifact lays them out."""
    folder = template("github-matrix", tmp_path)
    workflow = yaml.safe_load((folder / ".github" / "workflows" / "micrograde-batch.yml").read_text())
    artefacts = tmp_path / "artefacts"

    def job(steps: list[dict], matrix: dict, workspace: Path) -> None:
        workspace.mkdir(parents=True, exist_ok=True)
        (workspace / "temp").mkdir(exist_ok=True)

        def expand(text: str) -> str:
            return re.sub(r"\$\{\{\s*matrix\.(\w+)\s*\}\}", lambda m: str(matrix[m.group(1)]), text)

        for step in steps:
            uses = step.get("uses", "")
            if step.get("name") == "Install micrograde":
                assert "pip install --quiet git+https://github.com/ORG/micrograde" in step["run"]
            elif "run" in step:
                done = subprocess.run(["bash", "-e", "-c", expand(step["run"])], cwd=workspace, capture_output=True,
                                      text=True, env={**ENV, "RUNNER_TEMP": str(workspace / "temp")}, timeout=600)
                assert done.returncode == 0, done.stderr
            elif uses.startswith("actions/upload-artifact@"):
                shutil.copytree(workspace / expand(step["with"]["path"]), artefacts / expand(step["with"]["name"]))
            elif uses.startswith("actions/download-artifact@"):
                prefix = step["with"]["pattern"].rstrip("*")
                for artefact in artefacts.iterdir():
                    if artefact.name.startswith(prefix):
                        shutil.copytree(artefact, workspace / step["with"]["path"] / artefact.name)
            elif uses.startswith("actions/checkout@"):
                shutil.copytree(klass, workspace / "submissions", dirs_exist_ok=True)
            else:
                assert uses.startswith("actions/setup-python@"), uses

    shards = workflow["jobs"]["grade"]["strategy"]["matrix"]["shard"]
    assert shards == [1, 2, 3]
    for shard in shards:  # a runner each
        job(workflow["jobs"]["grade"]["steps"], {"shard": shard}, tmp_path / f"runner-{shard}")
    assert workflow["jobs"]["merge"]["needs"] == "grade"
    job(workflow["jobs"]["merge"]["steps"], {}, tmp_path / "runner-merge")
    same_class(artefacts / "micrograde-class", one_batch)


def test_the_slurm_job_array_grades_the_class(klass, one_batch, tmp_path):
    """Each task of the array as Slurm runs the script (its SLURM_ARRAY_TASK_ID, the array's range read from its
    #SBATCH line), then the merge its header says to submit after them."""
    folder = template("slurm", tmp_path)
    script = (folder / "micrograde-batch.sh").read_text()
    first, last = map(int, re.search(r"^#SBATCH --array=(\d+)-(\d+)$", script, re.M).groups())
    work = tmp_path / "cluster"
    shutil.copytree(klass, work / "submissions")
    for task in range(first, last + 1):
        done = subprocess.run(["bash", str(folder / "micrograde-batch.sh")], cwd=work, capture_output=True, text=True,
                              env={**ENV, "SLURM_ARRAY_TASK_ID": str(task)}, timeout=600)
        assert done.returncode == 0, done.stderr
    [merge] = re.findall(r"--wrap '([^']+)'", script)
    done = subprocess.run(["bash", "-c", merge], cwd=work, capture_output=True, text=True, env=ENV, timeout=600)
    assert done.returncode == 0, done.stderr
    same_class(work / "results" / "class", one_batch)


def test_two_thousand_submissions_in_four_shards_are_one_batch(tmp_path):
    """The benchmark's comparison (``bench/bench_shards.py``): 2,000 submissions, one batch and four shards run
    as separate processes, then merged: the gradebook byte for byte, the class summary and its charts. Both
    grade with one ``--timeout`` of 60 s a target: on a machine the whole suite keeps busy, a mutant's search
    that outlives the course's 10 s in one run and not in another would differ between two single batches as
    much as between a batch and its shards (the benchmark, on a quieter machine, compares at the course's
    limits)."""
    found = bench_shards.compare(tmp_path, 2000, shards=4, jobs=2, timeout=60)
    assert found["same"] == list(CLASS_FILES) and found["students"] == 2000


def test_the_docs_shard_a_class_and_write_each_engines_files(klass, tmp_path):
    """docs/staff.md's two blocks: four shards in turn then merged (the class as one batch grades it), and the
    three engines' files."""
    from recipes import run_recipe

    shutil.copytree(klass, tmp_path / "submissions")
    done = run_recipe("docs/staff.md", "### In shards, on an engine a course already has", tmp_path)
    assert done.returncode == 0, done.stderr
    assert micrograde("batch", str(klass), "--out", str(tmp_path / "one")).returncode == 0
    for name in CLASS_FILES:
        assert (tmp_path / "results" / "class" / name).read_bytes() == (tmp_path / "one" / name).read_bytes(), name
    done = run_recipe("docs/staff.md", "### In shards, on an engine a course already has", tmp_path, block=1)
    assert done.returncode == 0, done.stderr
    [_, job] = yaml.safe_load_all((tmp_path / "k8s" / "micrograde-batch.yaml").read_text())
    assert job["spec"]["completions"] == 8
    workflow = yaml.safe_load((tmp_path / ".github" / "workflows" / "micrograde-batch.yml").read_text())
    assert workflow["jobs"]["grade"]["strategy"]["matrix"]["shard"] == list(range(1, 9))
    assert "#SBATCH --array=1-8\n" in (tmp_path / "slurm" / "micrograde-batch.sh").read_text()
