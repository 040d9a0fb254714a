"""The graphs of a saved ``check()`` output, drawn for the ``--html`` page.

``check()`` in Jupyter shows its report as Markdown, each counterexample's graph in a Mermaid block
(``grader.report.graph``), which Jupyter draws with Mermaid's script. The page runs no script, so such a block
would show as its text: the page reads the graph back from the Mermaid micrograde wrote (a ``v`` node per
value, an ``op`` node per operation, the edges between them) and draws it as every graph of the page is drawn
(``grader.report.drawing``). The text is the notebook's, so it is read, never trusted: only micrograde's own
form is drawn, within ``MAX_NODES``, every label escaped by the drawing; any other Mermaid stays as it was.
"""

from __future__ import annotations

import re

from grader.report.graph import Box

MAX_NODES = 200  # values of one graph: a counterexample has a few
FENCE = re.compile(r"^```mermaid[ \t]*\n(.*?)^```[ \t]*$", re.M | re.S)
VALUE = re.compile(r'v(\d+)\["([^"\n]*)"\](:::wrong)?')
OPERATION = re.compile(r'op(\d+)\(\("([^"\n]*)"\)\) --> v(\d+)')
EDGE = re.compile(r"v(\d+) --> op(\d+)")


def boxes(text: str) -> list[Box] | None:
    """The values of a graph micrograde wrote as Mermaid (``grader.report.graph.mermaid``), or ``None`` for
    text of any other form."""
    lines = [line.strip() for line in text.strip().splitlines()]
    if not lines or lines[0] != "flowchart LR":
        return None
    values: dict[int, list] = {}
    for line in lines[1:]:
        if (found := VALUE.fullmatch(line)) is not None:
            values[int(found.group(1))] = [found.group(2).split("<br/>"), bool(found.group(3)), None, []]
        elif (found := OPERATION.fullmatch(line)) is not None and int(found.group(1)) == int(found.group(3)) \
                in values:
            values[int(found.group(1))][2] = found.group(2)
        elif (found := EDGE.fullmatch(line)) is not None and int(found.group(2)) in values \
                and int(found.group(1)) in values:
            values[int(found.group(2))][3].append(int(found.group(1)))
        elif not line.startswith("classDef ") and line:
            return None
        if len(values) > MAX_NODES:
            return None
    if sorted(values) != list(range(len(values))) or not values:
        return None
    drawn = [Box(lines, wrong, op, tuple(inputs)) for lines, wrong, op, inputs in map(values.get, range(len(values)))]
    if any((box.op is None) != (not box.inputs) or any(j >= i for j in box.inputs) for i, box in enumerate(drawn)):
        return None  # an operation without operands, or an edge from a later value: no graph of micrograde's
    return drawn


def with_slots(markdown: str, slot) -> tuple[str, dict[str, str]]:
    """``markdown`` with each Mermaid block of micrograde's graphs replaced by a slot (``slot()`` makes one),
    and the drawing that goes in each."""
    from grader.report.drawing import draw

    drawings: dict[str, str] = {}

    def replaced(found: re.Match) -> str:
        drawn = boxes(found.group(1))
        if drawn is None:
            return found.group(0)
        name = slot()
        drawings[name] = f'<figure class="micrograde-graph">{draw(drawn)}</figure>'
        return f"\n{name}\n"

    return FENCE.sub(replaced, markdown), drawings
