"""The golden reports: every submission of the test corpora, graded, kept as JSON to compare against.

``tests/golden/reports.jsonl`` holds one line per submission: its name and its report as
``micrograde grade --format json`` writes it, less what depends on the machine (the sandbox that
held, the temporary folder a mutant was written to). ``tests/test_golden.py`` grades them all
again and compares, so that a change to how a report is put together (not to what it says) shows
as no difference at all, and a change to what it says shows as exactly the reports it changes.

    python tests/golden.py            # write the reports again, after a change that means to change them
    python tests/golden.py --diff     # show which reports differ from the kept ones, and how

The corpora: the mutation corpus and the correct solutions (``tests/corpus/``), every learner-style
submission of ``tests/realstyle/`` (under the configurations its verdicts name), the bundled
exercise and the reference engine, and the corpus's solution under every course of ``tests/courses/``.
"""

from __future__ import annotations

import difflib
import json
import sys
import tempfile
import tomllib
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"
KEPT = TESTS / "golden" / "reports.jsonl"
REALSTYLE = TESTS / "realstyle"
MACHINE = ("sandbox", "output")  # what the machine (or a submission's own random numbers) decides: left out


def submissions(scratch: Path) -> Iterator[tuple[str, Path, Path | None]]:
    """Every corpus submission as (name, path, course configuration or None), mutants written into ``scratch``."""
    sys.path.insert(0, str(TESTS))
    from test_corpus import CORRECT, MUTANTS, SOLUTION, mutate

    for mutant in MUTANTS:
        folder = scratch / mutant["name"]
        folder.mkdir()
        path = folder / "submission.py"
        path.write_text(mutate(SOLUTION, mutant["replace"]))
        yield f"mutant/{mutant['name']}", path, ROOT / mutant["config"] if "config" in mutant else None
    for path in CORRECT:
        yield f"correct/{path.name}", path, None
    expected = tomllib.loads((REALSTYLE / "expected.toml").read_text())
    for name, entry in sorted(expected.items()):
        args = entry.get("args", [])
        config = ROOT / args[args.index("--config") + 1] if "--config" in args else None
        yield f"realstyle/{name}", REALSTYLE / entry["path"], config
        if "relu_course" in entry:
            yield f"realstyle/{name}@relu", REALSTYLE / entry["path"], REALSTYLE / "relu-course.toml"
    yield "bundled/exercises", ROOT / "exercises", None
    yield "bundled/reference", ROOT / "reference", None
    for course in sorted((TESTS / "courses").glob("*.toml")):
        yield f"course/{course.stem}", TESTS / "corpus" / "solution.py", course


def normalised(report: dict, scratch: Path) -> dict:
    """``report`` without what depends on the machine, paths made relative to the checkout."""
    text = json.dumps({k: v for k, v in report.items() if k not in MACHINE})
    text = text.replace(str(scratch), "<scratch>").replace(str(ROOT), "<checkout>")
    return json.loads(text)


def graded_all() -> dict[str, dict]:
    """Every corpus submission's normalised report, by name, graded in this process."""
    from grader.exercise.config import load
    from grader.grade import Options, grade

    reports = {}
    with tempfile.TemporaryDirectory(prefix="micrograde-golden-") as scratch:
        for name, path, config in submissions(Path(scratch)):
            options = Options(config=load(config) if config else None)
            reports[name] = normalised(grade(path, options).to_json(), Path(scratch))
    return reports


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
