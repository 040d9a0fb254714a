"""Check that every submission of the real-assignment corpus behaves as its verdict says.

    python tests/assignments/check_corpus.py [assignment ...]

For each assignment folder (``karpathy_exercises``, ``dl_course_hw1``, ``tutorial_deep``, ``fairness``)
it reads ``verdicts.toml``, checks the table itself (points add up to 100, codes are micrograde's or
proposed in ``proposed_codes.toml``, each submission's score follows from its parts), then runs each
submission in a fresh Python process (numpy, no PyTorch, no network) and compares what its code does,
against ``reference/engine.py`` and finite differences, with the verdict of every part: a part said
``right`` is right, a bug said to be there gives the wrong value or gradient it is said to give, a part
said to inherit another's bug is right once that other part is replaced by a right one, and the line
blamed lies in the part's own code. Exit 0 when everything agrees, 1 otherwise.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
ASSIGNMENTS = ("karpathy_exercises", "dl_course_hw1", "tutorial_deep", "fairness")
DEFAULT_TARGETS = ("add", "mul", "pow", "tanh", "backward", "train_step")
OPS_TARGETS = ("add", "mul", "pow", "tanh", "neg", "sub", "truediv", "backward", "train_step")


def known_codes() -> set[str]:
    sys.path.insert(0, str(ROOT))
    from grader.diagnosis.codes import CODES

    proposed = tomllib.loads((HERE / "proposed_codes.toml").read_text())
    return set(CODES) | set(proposed["code"])


def observe(assignment: str, name: str) -> dict:
    """Run in the child: what the submission's code does, part by part, as JSON-ready values."""
    sys.path.insert(0, str(HERE))
    from checking import dl_course, fairness, karpathy, running, tutorial

    running.prepare()
    table = tomllib.loads((HERE / assignment / "verdicts.toml").read_text())
    if assignment == "fairness":
        verdict = table[name]
        seen = fairness.check(HERE / assignment / verdict["path"], verdict)
        seen["errors"] = [{"line": e.lineno, "msg": e.msg, "type": type(e).__name__} for e in seen["errors"]]
        notebook = seen.pop("notebook")
        seen["cells"] = [[c.number, c.status, c.source] for c in notebook.cells] if notebook else []
        return seen
    verdict = table["submissions"][name]
    module = {"karpathy_exercises": karpathy, "dl_course_hw1": dl_course, "tutorial_deep": tutorial}[assignment]
    return {part: list(found) for part, found in module.check(HERE / assignment / verdict["path"],
                                                                verdict["parts"]).items()}


def observed(assignment: str, name: str) -> dict:
    """``observe`` in a fresh interpreter, in an empty working directory (notebooks make folders)."""
    with tempfile.TemporaryDirectory() as cwd:
        done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--observe", assignment, name],
                              capture_output=True, text=True, cwd=cwd, timeout=300)
    if done.returncode != 0:
        return {"__error__": done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "no output"}
    return json.loads(done.stdout.strip().splitlines()[-1])


# ------------------------------------------------------------------ where a part's code is

def source_of(folder: Path, verdict: dict, where: dict) -> str:
    path = folder / verdict["path"]
    if "file" in where:
        path = path / where["file"] if path.is_dir() else path.parent / where["file"]
    if path.suffix == ".ipynb":
        cells = json.loads(path.read_text())["cells"]
        return "".join(cells[where["cell"] - 1]["source"])
    return path.read_text()


def region(source: str, locate: str) -> tuple[int, int] | None:
    """First and last line of ``locate`` (``Class.method``, a function, or a top-level name) in ``source``."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    *outer, name = locate.split(".")
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and outer and node.name == outer[-1]:
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == name:
                    return item.lineno, item.end_lineno
        if not outer and isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name == name:
            return node.lineno, node.end_lineno
    if not outer:
        lines = [n for n in tree.body if isinstance(n, ast.Assign) and any(getattr(t, "id", None) == name
                                                                          for t in n.targets)]
        if lines:
            return lines[0].lineno, lines[-1].end_lineno
    return None


def check_place(folder: Path, verdict: dict, where: dict, locate: str) -> str | None:
    """Why the blamed line is not the part's own (None when it is)."""
    if "line" not in where:
        return "no line given"
    source = source_of(folder, verdict, where)
    if where.get("code") == "load-error":
        try:
            compile(source, "<source>", "exec")
        except SyntaxError as exc:
            return None if exc.lineno == where["line"] else f"the syntax error is at line {exc.lineno}"
        return "it compiles"
    found = region(source, where.get("at", locate))
    if found is None:
        return None if where.get("code") == "not-implemented" and where["line"] <= len(source.split("\n")) else \
            f"{where.get('at', locate)} is not in that cell or file"
    first, last = found
    return None if first <= where["line"] <= last else f"line {where['line']} is outside {locate} ({first}-{last})"


# ------------------------------------------------------------------ the three assignments

def check_table(table: dict, codes: set[str]) -> list[str]:
    problems = []
    parts = table["parts"]
    if sum(p["points"] for p in parts.values()) != 100:
        problems.append(f"the points add up to {sum(p['points'] for p in parts.values())}")
    problems += [f"{n}: a given part has points" for n, p in parts.items() if p.get("given") and p["points"]]
    for name, submission in table["submissions"].items():
        if set(submission["parts"]) != set(parts):
            problems.append(f"{name}: parts {sorted(set(parts) ^ set(submission['parts']))} missing or unknown")
            continue
        kept = sum(parts[p]["points"] for p, v in submission["parts"].items() if v == "right" or "inherits" in v)
        if kept != submission["score"]:
            problems.append(f"{name}: score {submission['score']}, but its parts give {kept}")
        for part, v in submission["parts"].items():
            if isinstance(v, dict) and "code" in v and v["code"] not in codes:
                problems.append(f"{name}.{part}: unknown code {v['code']}")
    return problems


def compare_part(folder: Path, submission: dict, part: str, spec: dict, v: object, seen: list) -> str | None:
    status = seen[0]
    if v == "right":
        return None if status == "right" else f"said right, but {status}: {seen[1]}"
    if "inherits" in v:
        return None if status == "inherits" else f"said to inherit {v['inherits']}, but {status}: {seen[1]}"
    if status != v["code"]:
        return f"said {v['code']}, but {status}: {seen[1]}"
    if len(seen) > 2 and v.get("cell") != seen[2]:
        return f"the exercise is cell {seen[2]}, not {v.get('cell')}"
    return check_place(folder, submission, v, spec["locate"])


def check_assignment(assignment: str) -> list[str]:
    folder = HERE / assignment
    table = tomllib.loads((folder / "verdicts.toml").read_text())
    problems = [f"{assignment}: {p}" for p in check_table(table, known_codes())]
    for name, submission in table["submissions"].items():
        seen = observed(assignment, name)
        if "__error__" in seen:
            problems.append(f"{assignment}/{name}: the check failed: {seen['__error__']}")
            continue
        for part, v in submission["parts"].items():
            if part not in seen:
                problems.append(f"{assignment}/{name}.{part}: not observed")
                continue
            why = compare_part(folder, submission, part, table["parts"][part], v, seen[part])
            if why:
                problems.append(f"{assignment}/{name}.{part}: {why}")
        print(f"  {assignment}/{name}: {len(submission['parts'])} parts checked", file=sys.stderr)
    return problems


# ------------------------------------------------------------------ single submissions, default exercise

def expected_codes(v: object) -> object:
    if v in ("full", "lost"):
        return "right" if v == "full" else "lost"
    tables = v if isinstance(v, list) else [v]
    return sorted(code for t in tables for code in t["codes"])


def check_fairness_one(name: str, verdict: dict, seen: dict) -> list[str]:
    problems = []
    folder = HERE / "fairness"
    for course, targets in (("default", DEFAULT_TARGETS), ("ops_course", OPS_TARGETS)):
        expect = verdict if course == "default" else verdict.get("ops_course")
        if expect is None:
            continue
        for target in targets:
            key = f"ops:{target}" if course == "ops_course" and f"ops:{target}" in seen else target
            want, got = expected_codes(expect[target]), seen[key]
            got = sorted(got) if isinstance(got, list) else got
            if want != got:
                problems.append(f"fairness/{name} ({course}).{target}: said {want}, but {got}")
                continue
            for where in (expect[target] if isinstance(expect[target], list) else [expect[target]]):
                if isinstance(where, dict):
                    spot = dict(where, code=where["codes"][0])
                    why = check_place(folder, verdict, spot, where.get("at", target_method(target)))
                    if why:
                        problems.append(f"fairness/{name}.{target}: {why}")
    problems += check_fairness_notes(name, verdict, seen)
    return problems


def target_method(target: str) -> str:
    names = {"add": "__add__", "mul": "__mul__", "pow": "__pow__", "neg": "__neg__", "sub": "__sub__",
             "truediv": "__truediv__", "tanh": "tanh", "backward": "backward"}
    return f"Value.{names[target]}" if target in names else target


def check_fairness_notes(name: str, verdict: dict, seen: dict) -> list[str]:
    """The submission-level verdict and the warnings a human would write, against what loading did."""
    problems = []
    submission = verdict.get("submission")
    errors = seen["errors"]
    if submission:
        if not errors or errors[0]["line"] != submission["line"]:
            problems.append(f"fairness/{name}: said load-error at line {submission['line']}, but {errors}")
        if "cell" in submission and not any(c[0] == submission["cell"] and c[1] == "syntax-error"
                                             for c in seen["cells"]):
            problems.append(f"fairness/{name}: cell {submission['cell']} compiles")
    elif errors and not any("IndentationError" in w or "SyntaxError" in w for ws in verdict.get("warnings", [])
                            for w in ws):
        problems.append(f"fairness/{name}: units do not compile ({errors}) and no warning says so")
    path = HERE / "fairness" / verdict["path"]
    for words in verdict.get("warnings", []):
        text = warning_evidence(path, errors, seen["cells"])
        missing = [w for w in words if w not in text]
        if missing:
            problems.append(f"fairness/{name}: the warning {words} has no ground for {missing}")
    return problems


def warning_evidence(path: Path, errors: list[dict], cells: list) -> str:
    """What a warning about this submission can rest on: failed units, imports, committed folders."""
    parts = [f"{e['type']} line {e['line']}" for e in errors]
    if path.suffix == ".py":
        lines = path.read_text().split("\n")
        parts += [lines[e["line"] - 1] for e in errors]
        parts += [line for line in lines if line.startswith("class ")]
    parts += [f"cell {number}: {source}" for number, _, source in cells if "import micrograd" in source]
    if path.is_dir():
        parts += [p.name for p in path.iterdir()]
    return "\n".join(parts)


def check_fairness() -> list[str]:
    table = tomllib.loads((HERE / "fairness" / "verdicts.toml").read_text())
    problems = []
    codes = known_codes()
    for name, verdict in table.items():
        used = str(verdict)
        problems += [f"fairness/{name}: unknown code {c}" for c in codes_in(verdict) if c not in codes]
        seen = observed("fairness", name)
        if "__error__" in seen:
            problems.append(f"fairness/{name}: the check failed: {seen['__error__']}")
            continue
        problems += check_fairness_one(name, verdict, seen)
        print(f"  fairness/{name}: {used.count('codes') + 6} verdicts checked", file=sys.stderr)
    return problems


def codes_in(node: object) -> list[str]:
    if isinstance(node, dict):
        return [*node.get("codes", []), *(c for v in node.values() for c in codes_in(v))]
    if isinstance(node, list):
        return [c for v in node for c in codes_in(v)]
    return []


def main(argv: list[str]) -> int:
    if argv[:1] == ["--observe"]:
        print(json.dumps(observe(argv[1], argv[2]), default=str))
        return 0
    problems = []
    for assignment in argv or ASSIGNMENTS:
        problems += check_fairness() if assignment == "fairness" else check_assignment(assignment)
    for problem in problems:
        print(problem)
    print(f"{len(problems)} disagreements" if problems else "every verdict agrees with what the code does")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
