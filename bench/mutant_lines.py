"""Do the diagnoses point at the line a person would? Measured on single-statement mutants.

    python bench/mutant_lines.py [--only SUBSTRING] [--show all|wrong|none] [--json FILE] [--solution FILE]

Makes every single-statement mutant of ``tests/corpus/solution.py`` mechanically
(a statement deleted or swapped with the next one; ``+=`` to ``=`` or ``-=``; a
binary operation with its operands swapped, one term dropped or another operator;
a constant changed; a comparison turned round; an argument of a call or an item
of a tuple dropped; ``reversed(x)`` to ``x``; one name read in place of another
of the same function), grades each in this process as ``micrograde grade`` does,
and reports, for each: whether the grade detects it (some target loses points),
whether its codes are right (``Result.right_code``: one misconception, of the target
that grades the mutated function), and whether every diagnosis points at the mutated statement. Where a
statement was deleted, that is the statement now standing where it belongs (the
next one of its block; any line of the one before it, if it was the last; the ``pass`` that
replaces a block's only statement); where two were swapped, either of them.

Beside the grade, the mutant's own ``Value`` and ``train_step`` (trusted here:
they are our own mutants) are run on a fixed set of expressions and training
steps against the reference engine (``train_step`` on the reference's model,
when the unmutated engine can train it), so a mutant that loses no point is told
apart as equivalent (still correct) or missed, and a correct one that loses
points is a false alarm. The rates printed at the end are the ones the project sets
bars for: right code and right line (of the detected mutants), and no false alarm.
"""

from __future__ import annotations

import argparse
import ast
import copy
import json
import math
import signal
import sys
import tempfile
import types
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import reference  # noqa: E402
from grader.exercise.expr import Sym, compile_sym, evaluate, leaf  # noqa: E402
from grader.grade import Options, grade  # noqa: E402

SOLUTION = ROOT / "tests" / "corpus" / "solution.py"
# The graded methods and what they lean on. The operators the scaffold gives (``-``, ``/``, unary minus)
# are graded by no default target, nor are relu and __repr__.
METHODS = {"__init__", "__add__", "__mul__", "__pow__", "tanh", "backward", "__radd__", "__rmul__", "train_step"}
# The target that grades each mutated function (``__init__`` is every target's).
TARGET_OF = {"__add__": "add", "__radd__": "add", "__mul__": "mul", "__rmul__": "mul", "__pow__": "pow",
             "tanh": "tanh", "backward": "backward", "train_step": "train_step"}
NAMES = ("self", "other", "out", "v", "child", "node", "t", "x", "p", "loss")


@dataclass
class Mutant:
    name: str
    source: str
    lines: set[int]  # the lines a diagnosis may point at
    function: str
    operator: str


@dataclass
class Result:
    mutant: Mutant
    buggy: bool  # by the comparison with the reference engine
    lost: list[str] = field(default_factory=list)  # targets that lost points
    diagnoses: list[tuple[str, str, int | None]] = field(default_factory=list)  # (target, code, line)

    @property
    def detected(self) -> bool:
        return bool(self.lost) or bool(self.diagnoses)

    @property
    def right_line(self) -> bool:
        return bool(self.diagnoses) and all(line in self.mutant.lines for _, _, line in self.diagnoses)

    @property
    def right_code(self) -> bool:
        """One statement changed is one misconception: every diagnosis is of the target that grades the
        mutated function (of any target, for ``__init__``, which they all share), one code per target, and
        none is ``interface``, which says no node of the class can be made (right only of ``__init__``)."""
        if not self.diagnoses:
            return False
        own = TARGET_OF.get(self.mutant.function)
        targets = [target for target, _, _ in self.diagnoses]
        codes = {(target, code) for target, code, _ in self.diagnoses}
        if own is not None and (set(targets) != {own} or any(code == "interface" for _, code in codes)):
            return False
        return len(codes) == len(set(targets))


# ---------------------------------------------------------------- making mutants


def functions(tree: ast.Module) -> Iterator[ast.FunctionDef]:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name in METHODS:
            yield node


def blocks(function: ast.FunctionDef) -> Iterator[list[ast.stmt]]:
    """Every statement list in the function (its body, loops' and ifs' bodies, nested functions')."""
    for node in ast.walk(function):
        for name in ("body", "orelse"):
            body = getattr(node, name, None)
            if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
                yield body


def header(stmt: ast.stmt) -> list[ast.AST]:
    """The expressions a statement holds itself (not those of the statements in its body)."""
    nested = {id(s) for name in ("body", "orelse", "handlers", "finalbody")
              for s in getattr(stmt, name, []) or []}
    return [child for child in ast.iter_child_nodes(stmt) if id(child) not in nested and not isinstance(
        child, (ast.stmt, ast.arguments))]


def expression_variants(stmt: ast.stmt, names: set[str]) -> Iterator[tuple[str, ast.stmt]]:
    """Copies of ``stmt`` with one expression inside its header changed, with what was changed."""
    count = sum(1 for part in header(stmt) for _ in ast.walk(part))
    for k in range(count):
        for label, change in CHANGES:
            mutated = copy.deepcopy(stmt)
            nodes = [n for part in header(mutated) for n in ast.walk(part)]
            for made in change(nodes[k], names):
                if made is not None:
                    yield label, replace_node(mutated, nodes[k], made)


def replace_node(stmt: ast.stmt, old: ast.AST, new: ast.AST) -> ast.stmt:
    result = copy.deepcopy(stmt)
    path = []

    def find(node: ast.AST, target: ast.AST, into: ast.AST) -> bool:
        for (field_name, value), (_, mirror) in zip(ast.iter_fields(node), ast.iter_fields(into)):
            items = value if isinstance(value, list) else [value]
            mirrors = mirror if isinstance(mirror, list) else [mirror]
            for i, (item, twin) in enumerate(zip(items, mirrors)):
                if item is target:
                    path.append((into, field_name, i if isinstance(value, list) else None))
                    return True
                if isinstance(item, ast.AST) and find(item, target, twin):
                    return True
        return False

    if not find(stmt, old, result):
        return result
    parent, field_name, index = path[0]
    if index is None:
        setattr(parent, field_name, new)
    else:
        getattr(parent, field_name)[index] = new
    return result


def binop_changes(node: ast.AST, names: set[str]) -> Iterator[ast.AST | None]:
    if not isinstance(node, ast.BinOp):
        return
    yield ast.BinOp(node.right, node.op, node.left)
    yield node.left
    yield node.right
    other = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Add, ast.Div: ast.Mult, ast.Pow: ast.Mult}
    if type(node.op) in other:
        yield ast.BinOp(node.left, other[type(node.op)](), node.right)


def constant_changes(node: ast.AST, names: set[str]) -> Iterator[ast.AST | None]:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        yield ast.Constant(node.value + 1)


def compare_changes(node: ast.AST, names: set[str]) -> Iterator[ast.AST | None]:
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        turned = {ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Lt: ast.GtE, ast.Gt: ast.LtE, ast.Is: ast.IsNot}
        if type(node.ops[0]) in turned:
            yield ast.Compare(node.left, [turned[type(node.ops[0])]()], node.comparators)


def call_changes(node: ast.AST, names: set[str]) -> Iterator[ast.AST | None]:
    if isinstance(node, ast.Call):
        if isinstance(node.func, ast.Name) and node.func.id == "reversed" and len(node.args) == 1:
            yield node.args[0]
        for i in range(1, len(node.args)):
            yield ast.Call(node.func, node.args[:i] + node.args[i + 1:], node.keywords)
    if isinstance(node, ast.Tuple) and len(node.elts) > 1 and isinstance(node.ctx, ast.Load):
        for i in range(len(node.elts)):
            yield ast.Tuple(node.elts[:i] + node.elts[i + 1:], ast.Load())


def name_changes(node: ast.AST, names: set[str]) -> Iterator[ast.AST | None]:
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in names:
        for other in sorted(names - {node.id}):
            yield ast.Name(other, ast.Load())


CHANGES = [("binop", binop_changes), ("constant", constant_changes), ("compare", compare_changes),
           ("call", call_changes), ("name", name_changes)]


def names_of(function: ast.FunctionDef) -> set[str]:
    """The variables of ``function`` that another could be read in place of."""
    found = {n.id for n in ast.walk(function) if isinstance(n, ast.Name)} | {
        a.arg for n in ast.walk(function) if isinstance(n, ast.FunctionDef) for a in n.args.args}
    return found & set(NAMES)


def indent(text: str, column: int) -> list[str]:
    return [" " * column + line for line in text.splitlines()]


def replaced(lines: list[str], start: int, end: int, new: list[str]) -> str:
    """``lines`` (0-based list) with lines ``start..end`` (1-based, inclusive) replaced by ``new``."""
    return "\n".join(lines[:start - 1] + new + lines[end:]) + "\n"


def mutants(source: str) -> Iterator[Mutant]:
    tree = ast.parse(source)
    lines = source.splitlines()
    for function in functions(tree):
        names = names_of(function)
        for block in blocks(function):
            for k, stmt in enumerate(block):
                where = f"{function.name}:{stmt.lineno}"
                # Deleted: the statement now in its place is the next of the block, else the one before.
                span = stmt.end_lineno - stmt.lineno + 1
                if len(block) == 1:
                    text = replaced(lines, stmt.lineno, stmt.end_lineno, indent("pass", stmt.col_offset))
                    yield Mutant(f"{where} deleted", text, {stmt.lineno}, function.name, "delete")
                else:
                    text = replaced(lines, stmt.lineno, stmt.end_lineno, [])
                    if k + 1 < len(block):
                        at = {block[k + 1].lineno - span}
                    else:  # the last of its block: it belongs right after the one before (any line of it)
                        at = set(range(block[k - 1].lineno, block[k - 1].end_lineno + 1))
                    yield Mutant(f"{where} deleted", text, at, function.name, "delete")
                if k + 1 < len(block):
                    nxt = block[k + 1]
                    first = lines[stmt.lineno - 1:stmt.end_lineno]
                    second = lines[nxt.lineno - 1:nxt.end_lineno]
                    between = lines[stmt.end_lineno:nxt.lineno - 1]
                    text = replaced(lines, stmt.lineno, nxt.end_lineno, second + between + first)
                    moved = stmt.lineno + len(second) + len(between)
                    yield Mutant(f"{where} swapped with the next", text, {stmt.lineno, moved}, function.name,
                                 "swap")
                if isinstance(stmt, ast.AugAssign) and isinstance(stmt.op, ast.Add):
                    for label, op in (("=", None), ("-=", ast.Sub())):
                        made = ast.Assign([stmt.target], stmt.value) if op is None else ast.AugAssign(
                            stmt.target, op, stmt.value)
                        made.lineno = stmt.lineno
                        text = replaced(lines, stmt.lineno, stmt.end_lineno, indent(ast.unparse(made),
                                                                                     stmt.col_offset))
                        yield Mutant(f"{where} += to {label}", text, {stmt.lineno}, function.name, "augassign")
                if isinstance(stmt, (ast.FunctionDef, ast.ClassDef)):
                    continue
                for label, made in expression_variants(stmt, names):
                    new = indent(ast.unparse(made), stmt.col_offset)
                    new_header = new[0]
                    old_header = lines[stmt.lineno - 1]
                    body = getattr(stmt, "body", None)
                    if body:  # a compound statement: only its header line changes
                        new = [new_header] + lines[stmt.lineno:stmt.end_lineno]
                    if new_header.strip() == old_header.strip() and len(new) == span:
                        continue
                    text = replaced(lines, stmt.lineno, stmt.end_lineno, new)
                    yield Mutant(f"{where} {label}: {new_header.strip()}", text, {stmt.lineno}, function.name,
                                 label)


def unique(found: Iterator[Mutant], original: str) -> list[Mutant]:
    seen = {original}
    kept = []
    for mutant in found:
        if mutant.source in seen:
            continue
        seen.add(mutant.source)
        try:
            compile(mutant.source, "mutant.py", "exec")
        except SyntaxError:
            continue
        kept.append(mutant)
    return kept


# ---------------------------------------------------------------- is it still correct?


def expressions() -> list[tuple]:
    a, b, c = leaf("a"), leaf("b"), leaf("c")
    ab = a * b
    u, w = ab.tanh(), a.tanh().tanh()  # shared nodes whose operands are not leaves
    # The graded ops only (the scaffold's -, / and unary minus are not the student's to write).
    roots = [a + b, a * b, a ** 3, (a * b).tanh(), 2 + a, 3 * a, a + 2, a * 3, a + a, a * a, ab + ab * c,
             (a + b) * (a + c * 2) + (a * b) ** 2, ((a * b + c).tanh() * a) ** 2 + b, (ab.tanh() + ab) * (ab + c),
             a + 1.5 * a * b, a ** 2 + a, a.tanh() * a, (a + b) ** 2 * b, (u + u) * u, w * w]
    return [compile_sym(r) for r in roots if isinstance(r, Sym)]


class Hung(Exception):
    """The mutant ran past its time (a loop that never ends)."""


def hung(signum: int, frame: object) -> None:
    raise Hung


def still_correct(source: str, train: bool = True) -> bool:
    """Whether the mutant computes what the reference does (one that raises, or runs past
    five seconds, does not)."""
    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(5)
    try:
        return compares_right(source, train)
    except Hung:
        return False
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def compares_right(source: str, train: bool) -> bool:
    module = types.ModuleType("mutant")
    try:
        exec(compile(source, "mutant.py", "exec"), module.__dict__)  # noqa: S102 - our own mutant
        value = module.Value
        for expr in expressions():
            for inputs in ({"a": 0.7, "b": -1.3, "c": 0.4}, {"a": -0.6, "b": 0.9, "c": 1.7}):
                for got, want in zip(zip(*evaluate(expr, inputs, value)), zip(*evaluate(expr, inputs,
                                                                                        reference.Value))):
                    if any(w is not None and not (isinstance(g, float | int) and math.isclose(
                            g, w, rel_tol=1e-9, abs_tol=1e-12)) for g, w in zip(got, want)):
                        return False
        return train_correct(module.train_step) if train else True
    except Exception:  # noqa: BLE001 - a mutant may raise anything: then it is not correct
        return False


def train_correct(train_step) -> bool:
    xs, ys = [[2.0, 3.0, -1.0], [3.0, -1.0, 0.5]], [1.0, -1.0]
    models = []
    for _ in range(2):
        model = reference.MLP(3, [4, 1])
        for i, p in enumerate(model.parameters()):
            p.data = math.sin(i + 1)
        models.append(model)
    for _ in range(3):
        got, want = train_step(models[0], xs, ys, 0.05), reference.train_step(models[1], xs, ys, 0.05)
        if not isinstance(got, float | int) or not math.isclose(got, want, rel_tol=1e-9):
            return False
    return all(math.isclose(p.data, q.data, rel_tol=1e-9)
               for p, q in zip(models[0].parameters(), models[1].parameters()))


# ---------------------------------------------------------------- grading


def measure(mutant: Mutant, folder: Path, train: bool) -> Result:
    path = folder / "submission.py"
    path.write_text(mutant.source)
    report = grade(path, Options(timeout=5.0)).to_json()
    result = Result(mutant, not still_correct(mutant.source, train))
    result.lost = [t for t, p in report["targets"].items() if p["score"] < p["max_score"]]
    result.diagnoses = [(d["target"], d["code"], d.get("line")) for d in report["diagnoses"]]
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="grade only the mutants whose name contains this")
    parser.add_argument("--show", choices=("all", "wrong", "none"), default="wrong")
    parser.add_argument("--json", type=Path, help="write every result to this file")
    parser.add_argument("--solution", type=Path, default=SOLUTION,
                        help="mutate this correct engine instead (one file, the scaffold's names)")
    args = parser.parse_args()
    original = args.solution.read_text()
    found = [m for m in unique(mutants(original), original) if args.only in m.name]
    results = []
    # A train_step that trains the reference's own model only where the engine mixes with it.
    train = still_correct(original)
    if not still_correct(original, train=False):
        sys.exit(f"{args.solution} is not correct: there is nothing to mutate")
    if not train:
        found = [m for m in found if m.function != "train_step"]
        print(f"{args.solution.name}'s train_step cannot train the reference's model: its mutants are left out")
    with tempfile.TemporaryDirectory() as tmp:
        for mutant in found:
            result = measure(mutant, Path(tmp), train)
            results.append(result)
            wrong = (result.detected and not (result.right_line and result.right_code)
                     or (not result.buggy and result.detected))
            if args.show == "all" or (args.show == "wrong" and wrong):
                codes = ", ".join(f"{t}:{c}@{line}" for t, c, line in result.diagnoses) or "-"
                print(f"{'ok ' if not wrong else 'BAD'} {mutant.name} | want {sorted(mutant.lines)} | {codes}"
                      + ("" if result.buggy else " | still correct"))
    buggy = [r for r in results if r.buggy]
    correct = [r for r in results if not r.buggy]
    detected = [r for r in buggy if r.detected]
    right = [r for r in detected if r.right_line]
    coded = [r for r in detected if r.right_code]
    false = [r for r in correct if r.detected]
    print(f"\n{len(results)} mutants: {len(buggy)} wrong, {len(correct)} still correct")
    print(f"detected: {len(detected)}/{len(buggy)} wrong mutants ({100 * len(detected) / max(1, len(buggy)):.1f}%)")
    print(f"right code: {len(coded)}/{len(detected)} detected ({100 * len(coded) / max(1, len(detected)):.1f}%)")
    print(f"right line: {len(right)}/{len(detected)} detected ({100 * len(right) / max(1, len(detected)):.1f}%)")
    print(f"full marks: {len(correct) - len(false)}/{len(correct)} still-correct mutants")
    missed = [r.mutant.name for r in buggy if not r.detected]
    if missed:
        print("missed (no point lost):\n  " + "\n  ".join(missed))
    if args.json:
        args.json.write_text(json.dumps([{
            "name": r.mutant.name, "function": r.mutant.function, "operator": r.mutant.operator,
            "lines": sorted(r.mutant.lines), "buggy": r.buggy, "lost": r.lost,
            "diagnoses": r.diagnoses, "right_line": r.right_line,
            "right_code": r.right_code} for r in results], indent=1))


if __name__ == "__main__":
    main()
