"""The corpora's reports: every corpus submission graded once a test session, and kept as golden JSON.

The corpora are the mutation corpus and the correct solutions (``tests/corpus/``), every
learner-style submission of ``tests/realstyle/`` (under the configurations its verdicts name),
the bundled exercise and the reference engine, and the corpus's solution under every course of
``tests/courses/``. ``report(name)`` grades one in this process, once a session, as
``micrograde grade --format json`` would: ``test_corpus.py``, ``test_realstyle.py`` and
``test_golden.py`` read the same reports.

``tests/golden/reports.jsonl`` keeps every report, less what depends on the machine (the sandbox
that held, what a submission printed with its own random numbers, the temporary folder a mutant
was written to). ``test_golden.py`` compares them all, so that a change to how a report is put
together (not to what it says) shows as no difference at all, and a change to what it says shows
as exactly the reports it changes:

    python tests/support/golden.py            # keep the reports as they are now, after a change meant to change them
    python tests/support/golden.py --diff     # show which reports differ from the kept ones, and how
"""

from __future__ import annotations

import atexit
import difflib
import functools
import json
import shutil
import sys
import tempfile
import tomllib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
KEPT = TESTS / "golden" / "reports.jsonl"
CORPUS = TESTS / "corpus"
REALSTYLE = TESTS / "realstyle"
SOLUTION = (CORPUS / "solution.py").read_text()
MUTANTS: list[dict] = tomllib.loads((CORPUS / "mutants.toml").read_text())["mutant"]
REALSTYLE_EXPECTED: dict[str, dict] = tomllib.loads((REALSTYLE / "expected.toml").read_text())
CORRECT = sorted((CORPUS / "correct").glob("*.py")) + [CORPUS / "solution.py", CORPUS / "correct_dir"]
MACHINE = ("sandbox", "output")  # what the machine (or a submission's own random numbers) decides: left out


@dataclass(frozen=True)
class Subject:
    """A corpus submission and how it is graded."""

    path: Path
    config: Path | None = None  # a course configuration; None: the classic exercise
    timeout: float | None = None  # seconds for loading and each target, as --timeout says


def mutate(source: str, replacements: list[list[str]]) -> str:
    """``source`` with each ``[old, new]`` replaced; each ``old`` must occur exactly once."""
    for old, new in replacements:
        assert source.count(old) == 1, f"{old!r} must occur exactly once in solution.py"
        source = source.replace(old, new)
    return source


@functools.cache
def scratch() -> Path:
    """Where the mutants are written, once a process, removed at its end."""
    folder = Path(tempfile.mkdtemp(prefix="micrograde-golden-"))
    atexit.register(shutil.rmtree, folder, True)
    return folder


def mutant_file(mutant: dict) -> Path:
    folder = scratch() / mutant["name"]
    folder.mkdir(exist_ok=True)
    path = folder / "submission.py"
    path.write_text(mutate(SOLUTION, mutant["replace"]))
    return path


@functools.cache
def subjects() -> dict[str, Subject]:
    """Every corpus submission, by name."""
    found = {f"mutant/{m['name']}": Subject(mutant_file(m), ROOT / m["config"] if "config" in m else None,
                                            m.get("timeout", 10.0)) for m in MUTANTS}
    found |= {f"correct/{path.name}": Subject(path, timeout=10.0) for path in CORRECT}
    for name, entry in REALSTYLE_EXPECTED.items():
        args = entry.get("args", [])
        config = ROOT / args[args.index("--config") + 1] if "--config" in args else None
        path = (REALSTYLE / entry["path"]).resolve()  # some are the assignments' corpus's files
        found[f"realstyle/{name}"] = Subject(path, config)
        if "relu_course" in entry:
            found[f"realstyle/{name}@relu"] = Subject(path, REALSTYLE / "relu-course.toml")
        if "ops_course" in entry:
            found[f"realstyle/{name}@ops"] = Subject(path, REALSTYLE / "ops-course.toml")
    found["bundled/exercises"] = Subject(ROOT / "exercises")
    found["bundled/reference"] = Subject(ROOT / "reference")
    for course in sorted((TESTS / "courses").glob("*.toml")):
        found[f"course/{course.stem}"] = Subject(CORPUS / "solution.py", course)
    return found


@functools.cache
def report(name: str) -> str:
    """The JSON report of the corpus submission ``name``, graded once a process."""
    from grader.exercise.config import load
    from grader.grade import Options, grade

    subject = subjects()[name]
    graded = grade(subject.path, Options(config=load(subject.config), timeout=subject.timeout))
    return json.dumps(graded.to_json())


def report_of(name: str) -> dict:
    """``report(name)`` parsed: a copy of its own for every reader."""
    return json.loads(report(name))


def normalised(data: dict) -> dict:
    """A report without what depends on the machine, paths made relative to the checkout."""
    text = json.dumps({k: v for k, v in data.items() if k not in MACHINE})
    text = text.replace(str(scratch()), "<scratch>").replace(str(ROOT), "<checkout>")
    return json.loads(text)


def graded_all() -> dict[str, dict]:
    """Every corpus submission's normalised report, by name."""
    return {name: normalised(report_of(name)) for name in subjects()}


def kept() -> dict[str, dict]:
    lines = KEPT.read_text(encoding="utf-8").splitlines()
    return {entry["name"]: entry["report"] for entry in map(json.loads, lines)}


def differences(old: dict[str, dict], new: dict[str, dict]) -> list[str]:
    """A unified diff of every report that differs (or is only on one side), report by report."""
    out = []
    for name in sorted(set(old) | set(new)):
        if old.get(name) != new.get(name):
            before = json.dumps(old.get(name), indent=1, sort_keys=True).splitlines()
            after = json.dumps(new.get(name), indent=1, sort_keys=True).splitlines()
            out += difflib.unified_diff(before, after, f"kept {name}", f"now {name}", lineterm="", n=2)
    return out


def write(reports: dict[str, dict]) -> None:
    KEPT.parent.mkdir(exist_ok=True)
    KEPT.write_text("".join(json.dumps({"name": name, "report": report}, sort_keys=True) + "\n"
                            for name, report in sorted(reports.items())), encoding="utf-8")


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    now = graded_all()
    if "--diff" in sys.argv[1:]:
        found = differences(kept(), now)
        print("\n".join(found) if found else f"all {len(now)} reports are as kept")
        sys.exit(1 if found else 0)
    write(now)
    print(f"{len(now)} reports written to {KEPT.relative_to(ROOT)}")
