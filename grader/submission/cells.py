"""Which cells of a notebook a target grades, as the course says (``[submission] skip_cells``, a target's ``cell``).

Courses hand out notebooks shaped for reading, not for a grader: every exercise cell
followed by a cell with the course's solution, ``Value`` redefined step by step, the
complete engine given to read after the steps. Run top to bottom, such a notebook's
last ``Value`` is the course's, never the learner's. So a course names cells by a
*selector*: a cell's tag (``solution``), or how its first line starts (``# Solution``,
matched as whole words: ``grader.submission.notebook.selects``).

- Cells that ``skip_cells`` selects are the course's: they are never run or graded
  (``grader.submission.source.leave_out``), and the report says so.
- A target with a ``cell`` grades its part as the notebook has it once the cell so selected
  has run, with what follows it under the same Markdown heading: the notebook is *cut* at the
  end of that section for that target (``cut``, ``place``), so a later redefinition (the next
  step, under its own heading; the given engine) is not what it grades. One selector serves
  both layouts a course has: the handed-out blank, where the learner writes in the exercise
  cell itself, and a notebook where the work follows that cell under the same heading (the
  published one with its ``# Solution N`` cell, which ``skip_cells`` leaves out as the course's,
  or a learner who kept the exercise cell as given and wrote below it). A selector that no
  cell's first line or tag matches names the Markdown heading whose words it starts with
  (``# Exercise 4`` is ``## Exercise 4: backpropagation``): a learner who rewrote the
  exercise cell's first line is graded under its heading. Above a notebook's first heading
  a cut is the selected cell alone. The course's
  notebook has one such cell; where the learner's has more (a cell added with the same
  first line, after the course's finished engine, say), the first is the course's place
  and is where the target is graded: what follows it, the course's own code further down
  included, is never credited to the learner, and the others are reported (``others``).

Nothing here runs any code; a cut is a ``Submission`` of its own, with fewer units.
"""

from __future__ import annotations

from dataclasses import replace

from grader.submission.notebook import heads, selects
from grader.submission.source import SourceFile, Submission


def cut(submission: Submission, selector: str) -> Submission | None:
    """The submission as it stands once the first notebook cell ``selector`` selects has run: every notebook
    that has such a cell ends with it. ``None`` when the submission has notebooks and none of their cells is
    selected; a submission without notebooks (``.py`` files: no cells) is graded whole."""
    notebooks = [s for s in submission.files if s.kind == "ipynb"]
    if not notebooks:
        return submission
    copies: dict[int, SourceFile] = {}
    for source in notebooks:
        last = place(source.units, selector)
        if last is not None:
            copies[id(source)] = replace(source, units=source.units[:last + 1], notes=list(source.notes),
                                         skipped=list(source.skipped))
    if not copies:
        return None

    def mapped(source: SourceFile) -> SourceFile:
        return copies.get(id(source), source)

    return replace(submission, files=[mapped(s) for s in submission.files],
                   providers={role: mapped(s) for role, s in submission.providers.items()},
                   names=dict(submission.names))


def place(units: list, selector: str) -> int | None:
    """The index of the last of ``units`` (a notebook's code cells) where the part ``selector`` names stands: the
    first cell it selects, or else the first under the Markdown heading it names (``heads``); then every cell
    after it under the same heading. ``None`` when it selects nothing."""
    first = next((i for i, u in enumerate(units) if selects(selector, u.tags, u.source)), None)
    if first is None:
        first = next((i for i, u in enumerate(units) if u.section[0] and heads(selector, u.section[1])), None)
    if first is None:
        return None
    last, section = first, units[first].section
    while section[0] and last + 1 < len(units) and units[last + 1].section == section:
        last += 1
    return last


def others(submission: Submission, selector: str, targets: list[str]) -> list[str]:
    """A warning for each notebook with more than one cell ``selector`` selects: ``targets`` are graded at the
    first (the course's place), never at a cell added after it with the same first line or tag."""
    found = []
    for source in (s for s in submission.files if s.kind == "ipynb"):
        cells = [u.cell for u in source.units if selects(selector, u.tags, u.source)]
        if len(cells) > 1:
            found.append(f"{source.display}: cells {', '.join(map(str, cells))} all start with (or are tagged) "
                         f"{selector!r}; {', '.join(targets)} {'is' if len(targets) == 1 else 'are'} graded at the "
                         f"first, cell {cells[0]}, where the course's notebook has it: write your work there (what "
                         f"the other cells hold is not graded as it)")
    return found
