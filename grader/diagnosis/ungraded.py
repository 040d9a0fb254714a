"""What of a submission no target graded: said in every report, so that full marks never hide it.

A course grades what its targets name; a learner's notebook holds more (section 1's
hand-derived gradient where the course configured only section 2, a ``softmax``, a
PyTorch comparison, an unfinished ``Tensor``). Passing every check says nothing of those,
and a report that said only "All checks passed" would let a learner believe they were
checked. So the report lists them, read from the source alone (nothing here runs):

- every top-level function and class of the graded code that no target reads (the
  definition a target reads is the last one of its part's name in the code that target
  is graded on: an earlier step's ``Value`` in a step-by-step notebook is not read), and
  a function attached to a graded class (``Value.exp = exp``) is read with it;
- every cell (or file) that binds only variables (``numerical_grad = [...]``), none of
  them read, and that uses no graded part: work of its own, not a use of what is graded;
- every class and function of a ``.py`` file that does not compile, left out of what ran;
- the notebook cells the course's ``skip_cells`` left out (its solutions), as one entry;
- the files of a folder the reader passes over (``test_*.py``, ``setup.py``).

The course's own code that no target grades (``[submission] given``) is not listed, nor a second copy of a
graded part still as the course handed it out (``untouched``: the bundled notebook's stubs beside the ``.py``
files a learner filled in): nothing of the learner's is in it.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from grader.diagnosis.methods import covered, stub, unread
from grader.exercise.targets import Exercise
from grader.submission.source import Location, SourceFile, Submission, Unit
from grader.submission.tree import walk


@dataclass(frozen=True)
class Ungraded:
    """A part of the submission no target covered: a function, a class, a cell (or file) of variables, or a
    cell the course's ``skip_cells`` left out."""

    what: str  # "function", "class", "method", "variables", "skipped" or "file"
    name: str  # the function's or class's name; the variables; the skipped cell's first line
    where: Location

    def describe(self) -> str:
        """``softmax (a function, blank.ipynb, cell 12, line 1)``."""
        if self.what == "skipped":
            return f"{self.name} (the course's own cells, not run: {self.where.file})"
        if self.what == "file":
            return f"{self.name} (a file of tests or setup, not read)"
        kind = {"function": "a function", "class": "a class", "method": "a method",
                "variables": "variables"}[self.what]
        return f"{self.name} ({kind}, {self.where.describe()})"


@dataclass(frozen=True)
class Read:
    """What the targets graded on one submission (or one stage's cut of it) read: the definitions, by place,
    and every name they look up."""

    places: frozenset[Location]
    names: frozenset[str]
    methods: frozenset[tuple[str, str]] = frozenset()  # (class, method): the methods a target grades directly


def read_by(submission: Submission, exercise: Exercise) -> Read:
    """The definitions ``exercise``'s targets read in ``submission``: the last top-level binding of each
    part's name in the file that provides it, and the functions attached to a graded class by assignment."""
    places, names = set(), set()
    parts = [r for r in submission.names if r.what == "part"]
    for role in (*exercise.roles, *parts):
        name, source = submission.names.get(role), submission.providers.get(role)
        if name is None or source is None:
            continue
        names.add(name)
        where = source.defines(name)
        if where is not None:
            places.add(where)
            if role in parts:  # the engine's own parts: the helpers they call are read through them
                places |= called_helpers(submission, name)
        for unit in source.units:
            for node in unit.tree.body if unit.tree else ():
                attached = attached_function(node, name)
                if attached is not None and (found := source_definition(source, attached)) is not None:
                    places.add(found)
    read = frozenset((cls, m) for cls, names in covered(submission, exercise).items() for m in names)
    return Read(frozenset(places), frozenset(names), read)


def called_helpers(submission: Submission, name: str) -> set[Location]:
    """Where the top-level functions that the function or class ``name`` calls (and those they call) are
    defined, in any file of the submission (``topological_sort``, called by ``backpropagate``)."""
    tops = {node.name: (node, Location(source.display, node.lineno, unit.cell))
            for source in submission.files for unit in source.units for node in (unit.tree.body if unit.tree else ())
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    found: set[Location] = set()
    stack, seen = [name], {name}
    while stack:
        node = tops.get(stack.pop(), (None,))[0]
        for call in walk(node) if node is not None else ():
            callee = call.func.id if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) else None
            if callee in tops and callee not in seen and not isinstance(tops[callee][0], ast.ClassDef):
                seen.add(callee)
                found.add(tops[callee][1])
                stack.append(callee)
    return found


def attached_function(node: ast.stmt, cls: str) -> str | None:
    """The function ``node`` attaches to the class ``cls`` (``Value.exp = exp``), if it does."""
    if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) and any(
            isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == cls
            for t in node.targets):
        return node.value.id
    return None


def source_definition(source: SourceFile, name: str) -> Location | None:
    """Where ``source`` last defines the function or class ``name`` at its top level."""
    found = None
    for unit in source.units:
        for node in unit.tree.body if unit.tree else ():
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
                found = Location(source.display, node.lineno, unit.cell)
    return found


def untouched(node: ast.stmt, graded: set[str]) -> bool:
    """A definition of a graded part still as the course handed it out: a function that is a stub, or a class
    whose methods the learner writes (``graded``: ``__add__``, ``backward``, the given ones left out) are all
    stubs."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return stub(node)
    methods = [n for n in getattr(node, "body", []) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
               and n.name in graded]
    return bool(methods) and all(stub(m) for m in methods)


def unit_parts(source: SourceFile, unit: Unit, read: Read, given: set[str], graded: set[str]) -> list[Ungraded]:
    """What of one unit no target read: its functions and classes (but an untouched copy of a graded part),
    else its variables (if it uses nothing graded)."""
    body = unit.tree.body if unit.tree else []
    found, variables, reads_any = [], [], False
    for node in body:
        here = Location(source.display, node.lineno, unit.cell)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if here in read.places:
                reads_any = True
                if isinstance(node, ast.ClassDef) and node.name not in given:
                    targets = {m for cls, m in read.methods if cls == node.name}
                    found += [Ungraded("method", f"{node.name}.{m.name}", Location(source.display, m.lineno, unit.cell))
                              for m in (unread(node, targets, given) if targets else ())]
            elif node.name in read.names and untouched(node, graded):
                continue  # the course's stub, beside the learner's own copy that was graded
            elif node.name not in given:
                found.append(Ungraded("class" if isinstance(node, ast.ClassDef) else "function", node.name, here))
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            if here in read.places:
                reads_any = True
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            variables += [n.id for t in targets for n in walk(t) if isinstance(n, ast.Name)
                          and n.id not in given and n.id not in read.names]
    # A class or function that does not compile was left out of what ran (``grader.submission.salvage``; the
    # warnings say why): one a target grades is charged to it, any other is not graded.
    found += [Ungraded(p.kind, p.defines, Location(source.display, p.first, unit.cell)) for p in unit.left_out
              if p.defines is not None and p.kind in ("class", "function") and p.defines not in given
              and p.defines not in read.names]
    if found or reads_any or not variables:
        return found
    uses = {n.id for n in walk(unit.tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    if uses & read.names:
        return []  # a use of what is graded (a demo, the course's check): no work of its own
    shown = ", ".join(dict.fromkeys(variables[:4])) + (", ..." if len(set(variables)) > 4 else "")
    return [Ungraded("variables", shown, Location(source.display, body[0].lineno if body else None, unit.cell))]


def ungraded(submission: Submission, exercise: Exercise, read: list[Read]) -> tuple[Ungraded, ...]:
    """Every part of ``submission`` that no target read (``read``: what each stage's targets read), in the
    order of the files and cells."""
    together = Read(frozenset().union(*(r.places for r in read)), frozenset().union(*(r.names for r in read)),
                    frozenset().union(*(r.methods for r in read)))
    given = set(exercise.config.given)
    graded = {exercise.method(t.name).rpartition(".")[2] for t in exercise.targets if not t.given}
    found = [Ungraded("file", name, Location(name)) for name in submission.unread if name not in given]
    for source in submission.files:
        if source.skipped:
            cells = [cell for cell, _ in source.skipped]
            lines = list(dict.fromkeys(line[:40] for _, line in source.skipped))
            found.append(Ungraded("skipped", f"cell{'s' if len(cells) > 1 else ''} {', '.join(map(str, cells))} "
                                             f"({'; '.join(lines[:3])}{'; ...' if len(lines) > 3 else ''})",
                                  Location(source.display, None, cells[0])))
        found += [p for unit in source.units for p in unit_parts(source, unit, together, given, graded)]
    return tuple(found)
