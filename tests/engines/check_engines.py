"""The engine corpus is honest: every verdict of every family's ``expected.toml`` agrees with what the code does.

For every family (a folder with ``micrograde.toml`` and ``expected.toml``), every folder (``course``, ``blank``,
``learners/NAME``) is loaded file by file in a fresh Python process, beside the course's other files
(``probing/``), and each target is observed: an op against its formula and finite differences, the backward pass
against a right pass over the learner's own steps, the other kinds as their checks say. A target said full must
pass every check, a folder said full everywhere must also agree with central differences of its own forward pass,
and a diagnosed target must fail, showing the misconception it is charged with. The verdicts' own shape is checked
too: every target of the course's configuration judged once, every folder laid out as the course's, every
diagnosis at a line of code inside the target's own code (a stub's line for ``not-implemented``), at least two
right and six buggy learners a family.

    python tests/engines/check_engines.py [FAMILY ...]

prints one line per folder and exits 1 on any disagreement. No micrograde import: numpy only.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import tomllib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from probing.loading import course_files, neutralise  # noqa: E402  (found through the path above)

STUB_WORDS = ("NotImplementedError", "pass", "TODO")
LEARNERS_RIGHT, LEARNERS_BUGGY = 2, 6


def families(names: list[str]) -> list[Path]:
    found = sorted(p.parent for p in HERE.glob("*/expected.toml"))
    return [f for f in found if not names or f.name in names]


def entries(expected: dict) -> list[tuple[str, dict]]:
    listed = [("course", expected["course"]), ("blank", expected["blank"])]
    return listed + [(f"learners/{name}", verdict) for name, verdict in expected["learners"].items()]


# -- the verdicts' own shape ----------------------------------------------------------------------------------
def source_of(folder: Path, diagnosis: dict) -> str:
    path = folder / diagnosis["file"]
    if path.suffix != ".ipynb":
        return path.read_text(encoding="utf-8")
    cell = json.loads(path.read_text(encoding="utf-8"))["cells"][diagnosis["cell"] - 1]
    assert cell["cell_type"] == "code", f"cell {diagnosis['cell']} is not code"
    return neutralise("".join(cell["source"]))


def spans(source: str, names: list[str]) -> list[tuple[int, int]]:
    """The lines of each class, function or ``Class.method`` named, wherever it is defined."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)) and node.name in names:
            found.append((node.lineno, node.end_lineno))
        if isinstance(node, ast.ClassDef):
            found += [(c.lineno, c.end_lineno) for c in node.body
                      if isinstance(c, ast.FunctionDef) and f"{node.name}.{c.name}" in names]
    return found


def shape_problems(family: Path, config: dict, expected: dict) -> list[str]:
    problems = []
    targets = set(config["targets"])
    held = [t for ts in expected["files"].values() for t in ts]
    if sorted(held) != sorted(targets):
        problems.append(f"[files] holds {sorted(held)}, the configuration's targets are {sorted(targets)}")
    layout = course_files(family / "course")
    right = buggy = 0
    for name, verdict in entries(expected):
        folder = family / name
        where = f"{family.name}/{name}"
        if course_files(folder) != layout:
            problems.append(f"{where}: laid out {course_files(folder)}, not as the course's {layout}")
        diagnosed = [d["target"] for d in verdict.get("diagnoses", [])]
        judged = sorted(verdict.get("full", []) + sorted(set(diagnosed)))
        if judged != sorted(targets) or len(set(verdict.get("full", []))) != len(verdict.get("full", [])):
            problems.append(f"{where}: judges {judged}, not every target once")
        if set(verdict.get("full", [])) & set(diagnosed):
            problems.append(f"{where}: {set(verdict['full']) & set(diagnosed)} both full and diagnosed")
        if name.startswith("learners/"):
            right, buggy = right + (not diagnosed), buggy + bool(diagnosed)
        for d in verdict.get("diagnoses", []):
            problems += line_problems(folder, d, expected["locate"][d["target"]], where)
    blank = expected["blank"]
    given = sorted(t for t, table in config["targets"].items() if table.get("given"))
    if sorted(blank.get("full", [])) != given or any(d["code"] != "not-implemented" for d in blank["diagnoses"]):
        problems.append(f"{family.name}/blank: only the given targets {given} may keep their points, every other "
                        "target is not-implemented")
    if right < LEARNERS_RIGHT or buggy < LEARNERS_BUGGY:
        problems.append(f"{family.name}: {right} right and {buggy} buggy learners")
    return problems


def line_problems(folder: Path, d: dict, locate: list[str], where: str) -> list[str]:
    source = source_of(folder, d)
    lines = source.splitlines()
    text = lines[d["line"] - 1].strip() if 0 < d["line"] <= len(lines) else ""
    cell = f" cell {d['cell']}" if "cell" in d else ""
    at = f"{where}: {d['target']} {d['code']} at {d['file']}{cell}:{d['line']}"
    marker = text.startswith("#") and any(w in text.upper() for w in ("TODO", "YOUR CODE")) and any(
        w in later for later in lines[d["line"]:d["line"] + 3] for w in STUB_WORDS)
    if not text or (text.startswith("#") and not marker):  # a placeholder comment over its stub stands for it
        return [f"{at} is no statement ({text!r})"]
    if d["code"] == "not-implemented" and not marker and not any(w in text for w in STUB_WORDS):
        return [f"{at} is no stub ({text!r})"]
    if not any(start <= d["line"] <= end for start, end in spans(source, locate)):
        return [f"{at} lies outside {locate}"]
    return []


# -- what the code does ---------------------------------------------------------------------------------------
def probe(family: Path, name: str, file: str) -> dict:
    done = subprocess.run([sys.executable, "-m", "probing.run", str(family), str(family / name), file],
                          cwd=HERE, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(HERE), "PYTHONDONTWRITEBYTECODE": "1"})
    if done.returncode != 0:
        raise RuntimeError(f"{family.name}/{name} {file}: the probe failed\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])["targets"]


def disagreements(verdict: dict, seen: dict) -> list[str]:
    found = []
    everything_full = not verdict.get("diagnoses")
    for target in verdict.get("full", []):
        if seen[target]["status"] != "ok":
            found.append(f"{target}: said full, but {seen[target]['code']} ({seen[target]['why']})")
        elif everything_full and seen[target].get("fd") is False:
            found.append(f"{target}: its gradients disagree with central differences of its own values")
    for d in verdict.get("diagnoses", []):
        observed = seen[d["target"]]
        codes = set(observed.get("code", "").split("/"))
        if observed["status"] == "ok":
            found.append(f"{d['target']}: said {d['code']}, but every check passes")
        elif d["code"] not in codes:
            found.append(f"{d['target']}: said {d['code']}, but seen {observed['code']} ({observed['why']})")
    return found


def check_family(family: Path, pool: ThreadPoolExecutor) -> bool:
    config = tomllib.loads((family / "micrograde.toml").read_text(encoding="utf-8"))
    expected = tomllib.loads((family / "expected.toml").read_text(encoding="utf-8"))
    problems = shape_problems(family, config, expected)
    for problem in problems:
        print(f"{family.name}: SHAPE: {problem}")
    jobs = {(name, file): pool.submit(probe, family, name, file)
            for name, _ in entries(expected) for file in expected["files"]}
    honest = not problems
    for name, verdict in entries(expected):
        seen = {t: o for file in expected["files"] for t, o in jobs[(name, file)].result().items()}
        wrong = disagreements(verdict, seen)
        honest &= not wrong
        said = ", ".join(f"{d['target']} {d['code']}" + ("" if seen[d["target"]].get("code") == d["code"] else
                                                          f" (seen as {seen[d['target']].get('code')})")
                         for d in verdict.get("diagnoses", [])) or "full marks"
        if name == "blank":
            said = f"not-implemented on {len(verdict['diagnoses'])} targets, {len(verdict.get('full', []))} given"
        print(f"{family.name}/{name}: " + (f"agrees ({said})" if not wrong else "DISAGREES: " + "; ".join(wrong)))
    return honest


def main(argv: list[str]) -> int:
    chosen = families(argv)
    if not chosen:
        print(f"no family named {argv}", file=sys.stderr)
        return 2
    with ThreadPoolExecutor(max_workers=max(1, min(4, len(os.sched_getaffinity(0))))) as pool:
        honest = all([check_family(family, pool) for family in chosen])
    print("every verdict agrees with what the code does" if honest else "some verdicts disagree with the code")
    return 0 if honest else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
