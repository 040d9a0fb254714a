"""Attacks on the grader in every platform mode: with namespaces, in a Docker-like container, as a user.

Each grade batches attacks that do not interfere, written as a hostile student would write them
(``tests/attacks/``), and asserts four things whatever the mode: the deserved score (an engine that
read the grader's or the reference's files gets ``forbidden-import`` and 0, any other its own score);
the grader's venv, packages, ``HOME`` and replay cache, and a canary folder of the grader's user,
byte-identical afterwards; nothing new in ``/tmp`` from anyone but root; and the secret in the
grader's environment shown nowhere.

Without namespaces the audit hook judges paths, and a directory descriptor walks around it: these
tests fail in ``docker`` and ``user`` mode until the kernel closes the file system to the child
(Landlock, issue 21).
"""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import tempfile
from pathlib import Path

import pytest
from helpers import SOLUTION, processes_with
from test_platforms import BUGGY, deserved, verdict
from test_tensors import HOSTILE, hostile_verdict
from untouched import Watch

import reference.engine
from grader.child import sandbox

ATTACKS = Path(__file__).parents[1] / "attacks"
TRAIN_ONLY = "def train_step" + SOLUTION.split("def train_step")[1]  # no engine: only an honest train_step
OPS = ("add", "mul", "pow", "tanh", "backward")


def attack(*names: str) -> str:
    return "\n".join((ATTACKS / f"{name}.src").read_text() for name in names)


def isolated(*names: str) -> str:
    """Attacks that each wrap ``Value``'s methods with helpers of the same names, each run in its own copy
    of the submission's globals, so that they stack instead of calling one another's helpers."""
    return "".join(f"\nexec(compile({attack(*name.split('+'))!r}, {name!r}, 'exec'), dict(globals()))\n"
                   for name in names)


def layout(canary: Path, home: Path, mark: str) -> str:
    """What a student who guessed the grader's layout writes first: where its files are."""
    return f"CANARY = {str(canary)!r}\nHOME = {str(home)!r}\nMARK = {mark!r}\n"


@pytest.fixture
def canary(grading, workspace) -> Path:
    """A folder of the grader's user that no grade may touch: files to rewrite, rename and delete."""
    folder = workspace / "canary"
    (folder / "empty").mkdir(parents=True)
    for name in ("notes.txt", "victim.txt", "doomed.txt", "doomed-too.txt"):
        (folder / name).write_text(f"{name} of the grader's user\n")
    grading.hand_over(folder)
    return folder


def watch(grading, *folders: Path) -> Watch:
    return Watch([*grading.trees, *folders], grading.secret, grading.skipped)


def printed(result) -> dict[str, str]:
    """What the submission printed as ``name: value`` lines (the report carries its output)."""
    output = json.loads(result.stdout).get("output", "")
    return dict(line.split(": ", 1) for line in output.splitlines() if ": " in line)


def test_writing_past_the_working_directory(grading, workspace, canary):
    """Directory descriptors on site-packages, /, /tmp, HOME, the replay cache, the grader's folders
    and /proc/<pid>/cwd; renames, removals and chmod by descriptor; fchdir then relative opens; a .pth
    in the grader's venv that would run in the next grade."""
    submission = workspace / "submission"
    submission.mkdir()
    source = layout(canary, grading.home, f"mg-{grading.secret[-12:]}") + SOLUTION + attack(
        "escape_common", "escape_writes")
    (submission / "work.py").write_text(source)
    grading.hand_over(submission)
    watched = watch(grading, canary, submission)
    report, result = grading.grade(submission, None)
    following, after = grading.grade(workspace / "next", SOLUTION)  # a .pth planted in the venv runs here
    breaches = watched.breaches(result.stdout, result.stderr, after.stdout, after.stderr)
    pth_ran = (canary / "pth-ran").exists()
    watched.repair()
    breaches += ["a .pth planted in the grader's venv ran in the next grade"] if pth_ran else []
    breaches += [f"scored {report['score']}, not {deserved(SOLUTION)['score']}"] if verdict(report) != verdict(
        deserved(SOLUTION)) else []
    breaches += ["the next grade's score changed"] if verdict(following) != verdict(deserved(SOLUTION)) else []
    assert breaches == [], (breaches, printed(result))


def test_reading_past_the_working_directory(grading, workspace, canary):
    """The reference engine taken from site-packages through a directory descriptor (its gradients
    returned as the student's), the grader's files, and the environment of every process above the
    child, through /proc and through a descriptor of /proc."""
    source = TRAIN_ONLY + layout(canary, grading.home, "unused") + attack("escape_common", "escape_reads")
    watched = watch(grading, canary)
    report, result = grading.grade(workspace / "submission", source)
    breaches = watched.breaches(result.stdout, result.stderr)
    seen = printed(result)
    scores = {t: s["score"] for t, s in report["targets"].items()}
    assert all(scores[t] == 0.0 for t in OPS), (scores, seen)
    if seen.get("stolen", "[]") != "[]":  # a file of the grader's read: the submission earns nothing
        codes = [d["code"] for d in report["diagnoses"] if d["target"] == "submission"]
        assert codes == ["forbidden-import"] and report["score"] == 0.0, (seen["stolen"], report["diagnoses"])
    assert breaches == [], breaches


def test_reading_the_reference_by_its_path_in_every_mode(grading, workspace):
    """The reference engine read by its path (the grader's, as a student who guessed the layout writes
    it) through the import system's loaders, ``io.open_code``, ``linecache``, ``zipimport``, ``mmap`` and
    ``/proc/self/root``: nothing read, or what was read is a forbidden import scoring 0."""
    source = TRAIN_ONLY + attack("escape_common") + f"REFERENCE = {str(reference.engine.__file__)!r}\n" + attack(
        "escape_loaders")
    watched = watch(grading)
    report, result = grading.grade(workspace / "submission", source)
    seen = printed(result)
    scores = {t: s["score"] for t, s in report["targets"].items()}
    assert all(scores[t] == 0.0 for t in OPS), (scores, seen)
    if seen.get("loaded", "[]") != "[]":
        codes = [d["code"] for d in report["diagnoses"] if d["target"] == "submission"]
        assert codes == ["forbidden-import"] and report["score"] == 0.0, (seen["loaded"], report["diagnoses"])
    assert watched.breaches(result.stdout, result.stderr) == []


def test_harness_attacks_in_every_mode(grading, workspace):
    """``tests/security/test_forgery.py``'s attacks on the harness, stacked in one grade: the buggy engine's
    verdict, no more."""
    source = BUGGY + isolated("main_module", "import_main", "settrace", "setprofile", "frames_common+frame_getframe",
                              "frames_common+frame_inspect", "frames_common+frame_traceback",
                              "frames_common+frame_generator", "frames_common+frame_gc")
    watched = watch(grading)
    report, result = grading.grade(workspace / "submission", source)
    assert verdict(report) == verdict(deserved(BUGGY)), report["diagnoses"]
    assert watched.breaches(result.stdout, result.stderr) == []


def test_switching_the_audit_hook_off_in_every_mode(grading, workspace):
    """The hook patched away three ways, a signal handler emptying its record, then the reference
    imported under a built name: forbidden, in every mode."""
    source = isolated("guard_class", "guard_gc", "guard_frames", "record_signal") + attack("borrow_module") + (
        "\n" + TRAIN_ONLY)
    watched = watch(grading)
    report, result = grading.grade(workspace / "submission", source)
    assert [d["code"] for d in report["diagnoses"] if d["target"] == "submission"] == ["forbidden-import"]
    assert report["score"] == 0.0
    assert watched.breaches(result.stdout, result.stderr) == []


@pytest.mark.parametrize("attack", sorted(HOSTILE))
def test_tensor_results_in_every_mode(grading, workspace, attack):
    """``tests/attacks/tensor_*.src`` under courses of tensor targets (of Values, and with their own gradient):
    results that offer forged entries and attack the reply pipe through numpy's ways of reading them, a
    million entries, a list holding itself, an endless iterator, graphs longer than the walk allows, closures
    that recurse forever. Each op gets what it earns, the honest ones their points, and nothing outside the
    child is touched."""
    source, course, deserved = HOSTILE[attack]
    submission = workspace / "submission"
    submission.mkdir()
    (submission / "engine.py").write_text(source)
    (workspace / "course.toml").write_text(course.read_text())
    grading.hand_over(workspace)
    watched = watch(grading)
    result = grading.run("grade", str(submission / "engine.py"), "--format", "json", "--config",
                         str(workspace / "course.toml"), "--timeout", "20", cwd=submission)
    assert result.returncode == 1, f"{grading.name}: exit {result.returncode}: {result.stderr[-2000:]}"
    assert hostile_verdict(json.loads(result.stdout), deserved) == []
    assert watched.breaches(result.stdout, result.stderr) == []


def assert_capped(grading, workspace, source: str, counted: str) -> None:
    """Grade ``source``, which prints the bytes it got onto the disk as ``counted`` (its last such line
    counts) and ``stopped`` with the errno that stopped it: the working directory's cap holds in every mode."""
    watched = watch(grading)
    report, result = grading.grade(workspace / "submission", source)
    seen = printed(result)
    if grading.name == "namespaces":  # the tmpfs refuses the write or allocation that would pass the cap
        assert int(seen[counted]) <= sandbox.WORK_BYTES and seen.get("stopped") == "28", seen
    else:
        # The grading process measures the folder every 25 ms and ends the child once it is past the cap:
        # it may have written a few more files in between (docs/security.md), never the 2 GiB.
        assert int(seen[counted]) < 2 * sandbox.WORK_BYTES, seen
        assert any("working directory" in d["message"] for d in report["diagnoses"]), report["diagnoses"]
    assert watched.breaches(result.stdout, result.stderr) == []


def test_filling_the_disk(grading, workspace):
    """Two GiB written in the working directory, file by file (each under the file-size limit): the
    same cap as with namespaces, whether the submission then finishes or runs out of time."""
    source = SOLUTION + (
        "written = 0\n"
        "try:\n"
        "    for i in range(128):\n"
        "        with open(f'fill-{i}', 'wb') as out:\n"
        "            for _ in range(16):\n"
        "                written += out.write(b'\\0' * (1024 * 1024))\n"
        "        print(f'written: {written}', flush=True)\n"  # the last line counts, should time run out
        "except OSError as exc:\n"
        "    print(f'stopped: {exc.errno}')\n"
        "import os\n"
        "for i in range(128):\n"
        "    if os.path.exists(f'fill-{i}'):\n"
        "        os.remove(f'fill-{i}')\n"
    )
    assert_capped(grading, workspace, source, "written")


def test_holding_disk_the_working_directory_does_not_show(grading, workspace):
    """A GiB of disk held where a walk of the working directory does not see it: files allocated whole at
    once (``fallocate``, faster than the grading process measures), then unlinked and kept open or mapped.
    The same cap as with namespaces: the child is ended, and holds no more than twice the cap meanwhile."""
    source = SOLUTION + (
        "import mmap, os\n"
        "held, kept = 0, []\n"
        "def allocate(fd, size):\n"
        "    try:\n"
        "        os.posix_fallocate(fd, 0, size)\n"
        "    except OSError:\n"
        "        os.pwrite(fd, b'\\1' * size, 0)\n"
        "try:\n"
        "    for i in range(64):\n"
        "        name = f'held-{os.getpid()}-{i}'\n"
        "        fd = os.open(name, os.O_RDWR | os.O_CREAT, 0o600)\n"
        "        allocate(fd, 16 * 1024 * 1024 - 4096)\n"
        "        held += os.fstat(fd).st_blocks * 512\n"
        "        kept.append(mmap.mmap(fd, 4096) if i % 2 else os.fdopen(fd, 'rb'))\n"
        "        if i % 2:\n"
        "            os.close(fd)\n"
        "        os.unlink(name)\n"
        "        print(f'held: {held}', flush=True)\n"
        "except OSError as exc:\n"
        "    print(f'stopped: {exc.errno}')\n"
        "import time\n"
        "time.sleep(1)\n"  # the grading process has measured by now, whatever its pace
    )
    assert_capped(grading, workspace, source, "held")


def job_folders_with(mark: str) -> list[str]:
    """The working directories in the temporary directory that hold an entry named ``mark...``: each is in
    a grading process's folder of working directories (``workdirs.working_directories``), itself in the
    temporary directory. Another user's folders, which cannot be listed, are not this test's."""
    found = []
    for holder in Path(tempfile.gettempdir()).glob("micrograde-*"):
        try:
            folders = [holder, *(Path(e.path) for e in os.scandir(holder) if e.is_dir(follow_symlinks=False))]
        except OSError:
            continue
        for folder in folders:
            try:
                if any(entry.name.startswith(mark) for entry in os.scandir(folder)):
                    found.append(str(folder))
            except OSError:
                continue
    return found


def test_a_tree_too_deep_to_delete_by_recursion(grading, workspace):
    """1100 folders nested in one another in the working directory (each wrapped in a new one, so that
    no path is long), deeper than a recursive delete of the job folder can go: the grade still gives its
    report, and the job folder is gone afterwards."""
    mark = f"deep-{grading.secret[-12:]}"
    source = SOLUTION + (
        "import os\n"
        f"top = {mark!r} + str(os.getpid())\n"
        "try:\n"
        "    os.mkdir(top)\n"
        "    for _ in range(1100):\n"
        "        os.mkdir(top + '-wrap')\n"
        "        os.rename(top, top + '-wrap/' + top)\n"
        "        os.rename(top + '-wrap', top)\n"
        "    print('nested: 1100')\n"
        "except OSError as exc:\n"
        "    print(f'stopped: {exc.errno}')\n"
    )
    watched = watch(grading)
    report, result = grading.grade(workspace / "submission", source)
    assert verdict(report) == verdict(deserved(SOLUTION)), (report["diagnoses"], printed(result))
    assert job_folders_with(mark) == [], "a job folder was left behind"
    assert watched.breaches(result.stdout, result.stderr) == []


def test_rewriting_classmates_reports_in_a_batch(grading, workspace):
    """A student graded after alice and bob rewrites their reports and the gradebook to 0 (by path and
    through a descriptor of the reports folder); the batch resumed afterwards keeps the deserved grades."""
    submissions, out = workspace / "submissions", workspace / "out"
    submissions.mkdir()
    (submissions / "alice.py").write_text(SOLUTION)
    (submissions / "bob.py").write_text(BUGGY)
    grading.hand_over(workspace)
    first = grading.run("batch", str(submissions), "--out", str(out), "--jobs", "1", cwd=workspace)
    assert first.returncode == 0, first.stderr
    forger = SOLUTION + attack("escape_common") + (
        f"\nOUT = {str(out)!r}\n"
        "import json\n"
        "def _zero(name):\n"
        "    data = json.loads(read_at(OUT + '/reports', name))\n"
        "    data.update(score=0.0, targets={t: dict(s, score=0.0) for t, s in data.get('targets', {}).items()})\n"
        "    return plant(OUT + '/reports', name, json.dumps(data).encode())\n"
        "for _name in ('alice.json', 'bob.json'):\n"
        "    attempt(f'by descriptor {_name}', lambda: _zero(_name))\n"
        "    attempt(f'by path {_name}', lambda: open(OUT + '/reports/' + _name, 'a').write(' '))\n"
        "attempt('gradebook', lambda: plant(OUT, 'grades.csv', b'id,score\\nalice,0\\nbob,0\\n'))\n"
    )
    (submissions / "zed.py").write_text(forger)
    grading.hand_over(submissions)
    breaches = []
    for _ in range(2):  # zed graded; then everyone kept from the reports folder
        again = grading.run("batch", str(submissions), "--out", str(out), "--jobs", "1", cwd=workspace)
        assert again.returncode == 0, again.stderr
        breaches += [f"the secret shown by batch: {again.stderr[-500:]}"] if grading.secret in again.stderr else []
    rows = {row["id"]: float(row["score"]) for row in csv.DictReader(io.StringIO((out / "grades.csv").read_text()))}
    assert rows == {"alice": deserved(SOLUTION)["score"], "bob": deserved(BUGGY)["score"],
                    "zed": deserved(SOLUTION)["score"]}, rows
    for name, source in (("alice", SOLUTION), ("bob", BUGGY)):
        assert json.loads((out / "reports" / f"{name}.json").read_text())["score"] == deserved(source)["score"]
    assert breaches == []


def test_the_report_calls_the_score_tamper_proof(grading, workspace):
    """Where the kernel closes the machine to the submission (namespaces, or Landlock with seccomp) the
    report says tamper-proof; this machine offers both, so every mode must."""
    report, _ = grading.grade(workspace / "submission", SOLUTION)
    assert report["sandbox"]["tamper_proof"] is True, report["sandbox"]


def test_no_way_out_to_the_host_in_every_mode(grading, workspace, canary):
    """``test_confinement.py``'s and ``test_hostile.py``'s ways out, in one grade: signals to
    the grader and to everyone, a process left behind, the network, a socket, the canary's mode, owner,
    attributes and a node beside it, a classmate's file; and the files an honest submission writes still
    work. Full marks, and nothing reached."""
    classmate = workspace / "submissions" / "alice.py"
    classmate.parent.mkdir()
    classmate.write_text(f"# alice's work {grading.secret[-12:]}\n")
    grading.hand_over(classmate.parent)
    sleeper = f"micrograde-platform-sleeper-{grading.secret[-12:]}"
    source = SOLUTION + attack("escape_common") + (
        "import signal, socket, subprocess\n"
        "parent = _os.getppid()\n"
        "attempt('kill', lambda: _os.kill(parent, signal.SIGKILL))\n"
        "attempt('kill all', lambda: _os.kill(-1, signal.SIGKILL))\n"
        "attempt('renice the grader', lambda: _os.setpriority(_os.PRIO_PROCESS, parent, 19))\n"
        "attempt('renice its user', lambda: _os.setpriority(_os.PRIO_USER, _os.getuid(), 19))\n"
        "import fcntl\n"
        "def owned_pipe():\n"  # the kernel sends the reader's owner SIGKILL once the pipe holds data
        "    reader, writer = _os.pipe()\n"
        "    fcntl.fcntl(reader, fcntl.F_SETOWN, parent)\n"
        "    fcntl.fcntl(reader, 10, signal.SIGKILL)\n"  # F_SETSIG
        "    fcntl.fcntl(reader, fcntl.F_SETFL, fcntl.fcntl(reader, fcntl.F_GETFL) | _os.O_ASYNC)\n"
        "    return _os.write(writer, b'x')\n"
        "attempt('kill as a file owner', owned_pipe)\n"
        f"attempt('sleeper', lambda: subprocess.Popen(['sleep', '600', {sleeper!r}], start_new_session=True))\n"
        "attempt('fork', lambda: _os.fork() or _os._exit(0))\n"
        "attempt('network', lambda: socket.create_connection(('127.0.0.1', 9), timeout=1))\n"
        f"attempt('chmod', lambda: _os.chmod({str(canary / 'notes.txt')!r}, 0o777))\n"
        f"attempt('chown', lambda: _os.chown({str(canary / 'notes.txt')!r}, 0, 0))\n"
        f"attempt('setxattr', lambda: _os.setxattr({str(canary / 'notes.txt')!r}, 'user.x', b'1'))\n"
        f"attempt('mkfifo', lambda: _os.mkfifo('fifo', dir_fd=directory({str(canary)!r})))\n"
        f"attempt('classmate', lambda: open({str(classmate)!r}).read())\n"
        "with open('figures.svg', 'w') as out:\n"
        "    out.write('<svg/>')\n"
        "import tempfile\n"
        "with tempfile.NamedTemporaryFile('w', suffix='.png') as tmp:\n"
        "    tmp.write('png')\n"
        "assert open(_os.path.join(_os.path.expanduser('~'), 'figures.svg')).read() == '<svg/>'\n"
    )
    watched = watch(grading, canary, classmate.parent)
    report, result = grading.grade(workspace / "submission", source)
    breaches = watched.breaches(result.stdout, result.stderr)
    left = processes_with(sleeper.encode())
    for pid in left:
        os.kill(int(pid), signal.SIGKILL)
    seen = printed(result)
    assert verdict(report) == verdict(deserved(SOLUTION)), (report["diagnoses"], seen)
    # Another process's priority (the grader's, a classmate's child with the same uid) is not the child's to lower,
    # nor its file's I/O signals to send it (with namespaces the child is PID 1 of its own, whose parent is 0: itself)
    renices = ("renice its user", "kill as a file owner") + (
        ("renice the grader",) if grading.name != "namespaces" else ())
    assert {name: seen[name].split()[0] for name in renices} == dict.fromkeys(renices, "refused"), seen
    assert left == [], "a process the submission started outlived its grade"
    assert grading.secret[-12:] not in report.get("output", ""), "a classmate's file was read"
    assert breaches == [], (breaches, seen)


NUMERICAL = '''
def f(a, b, c):
    return a * a * c + b / c


h = 1e-6
numerical_grad = [(f(2 + h, 3, 4) - f(2, 3, 4)) / h, (f(2, 3 + h, 4) - f(2, 3, 4)) / h,
                  (f(2, 3, 4 + h) - f(2, 3, 4)) / h]
'''
NUMERICAL_COURSE = '''[targets.numerical_grad]
kind = "numerical-gradient"
value = "numerical_grad"
calls = "f"
inputs = ["a", "b", "c"]
of = "a * a * c + b / c"
at = [2, 3, 4]
points = 10
'''


def test_code_a_numerical_gradient_runs_again_is_as_confined_as_at_load(grading, workspace, canary):
    """A numerical gradient's code runs again in the child, once for the course's function and once for another:
    the writes past the working directory that every mode refuses at load, tried again in each run, are
    refused the same way, and the score is the one the code deserves."""
    submission = workspace / "submission"
    submission.mkdir()
    source = layout(canary, grading.home, f"mg-{grading.secret[-12:]}") + SOLUTION + attack(
        "escape_common", "escape_writes") + NUMERICAL
    (submission / "work.py").write_text(source)
    (submission / "course.toml").write_text(NUMERICAL_COURSE)
    grading.hand_over(submission)
    watched = watch(grading, canary, submission)
    result = grading.run("grade", str(submission / "work.py"), "--format", "json", "--config",
                         str(submission / "course.toml"), cwd=submission)
    breaches = watched.breaches(result.stdout, result.stderr)
    pth_ran = (canary / "pth-ran").exists()
    watched.repair()
    assert result.returncode == 0, result.stderr[-2000:]
    report = json.loads(result.stdout)
    scores = {t: s["score"] for t, s in report["targets"].items()}
    assert (scores, breaches, pth_ran) == ({"numerical_grad": 10.0}, [], False), printed(result)
COURSEWORK = Path(__file__).parents[1] / "coursework"
COURSES = Path(__file__).parents[1] / "courses"


def test_modules_and_optimizers_reach_no_grader_code_in_every_mode(grading, workspace):
    """The child that grades modules and optimizers holds no loss, neuron, layer or optimizer of the grader's, in
    every platform mode: a cross-entropy that sums where it should average and an SGD that updates the gradients,
    each looking through the harness's frames for the grader's own to use instead, are graded as what they
    compute; the grader's files stay as they were."""
    homework = (COURSEWORK / "hw_lists.py").read_text()  # no numpy: not every platform's grader has it
    source = homework.replace("        return total / len(target)\n", "        return total\n").replace(
        "            p.data = p.data - self.lr * p.grad\n",
        "            p.grad = p.grad - self.lr * p.grad\n") + attack("borrow_grader_modules") + (
        "\n_MINE = (CrossEntropyLoss, SGD, Linear, ReLU)\n"
        "_own_forward, _own_step = CrossEntropyLoss.forward, SGD.step\n"
        "def _forward(self, logits, target):\n"
        "    found = _grader_class('Loss', 'CrossEntropyLoss')\n"
        "    return found('cross-entropy')(logits, target) if found else _own_forward(self, logits, target)\n"
        "def _step(self):\n"
        "    found = _grader_class('SGD')\n"
        "    return found.step(self) if found else _own_step(self)\n"
        "CrossEntropyLoss.forward, SGD.step = _forward, _step\n")
    folder = workspace / "modules"
    folder.mkdir()
    (folder / "work.py").write_text(source)
    (folder / "course.toml").write_text((COURSES / "dl-course-nn.toml").read_text())
    grading.hand_over(folder)
    watched = watch(grading)
    result = grading.run("grade", str(folder / "work.py"), "--format", "json", "--config", str(folder / "course.toml"),
                         cwd=folder)
    assert result.returncode == 1, result.stderr[-2000:]
    report = json.loads(result.stdout)
    found = {(d["target"], d["code"]) for d in report["diagnoses"]}
    assert found == {("CrossEntropyLoss", "wrong-output"), ("SGD.step", "wrong-update")}, report["diagnoses"]
    assert watched.breaches(result.stdout, result.stderr) == []


def test_children_of_one_grade_hand_nothing_to_each_other_in_every_mode(grading, workspace):
    """``attacks/handoff_engine.src``: the child that grades train_step hands the grader's training engine to the one
    that grades the ops, through the working directory, its parent, HOME, TMPDIR, /tmp, /dev/shm and file locks;
    each child works in a folder of its own, so nothing gets across: the score of the same engine with its handoff
    switched off, and nothing outside the children touched."""
    attack_source = (ATTACKS / "handoff_engine.src").read_text()
    train = "def train_step" + SOLUTION.split("def train_step")[1]
    watched = watch(grading)
    report, result = grading.grade(workspace / "submission", "HANDOFF = True\n" + attack_source + "\n" + train)
    said = [line for line in json.loads(result.stdout).get("output", "").splitlines() if line.startswith("handoff:")]
    assert said and not any("found" in line for line in said), said
    assert verdict(report) == verdict(deserved("HANDOFF = False\n" + attack_source + "\n" + train)), said
    assert watched.breaches(result.stdout, result.stderr) == []
