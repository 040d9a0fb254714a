"""The class at a glance for staff: ``summary.md`` and ``summary.html`` from every student's report.

What a TA looks at first: how the scores are spread, which targets the class
gets right, which misconceptions each target shows and the smallest
counterexamples that show them most often, and who could not be graded, and
why (and whose report flags something for a human). A submission that could not be
graded counts in neither the mean nor the histogram: it is a blank, as in the
gradebooks. The page draws its charts as inline SVG: it opens offline, with nothing
to load, and every student-controlled string in it is escaped.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from html import escape

from grader.report.model import printable
from grader.staff.gradebook import class_max_score, reason, score_of, targets_of
from grader.submission.comparison import REVIEW

# What a TA should look at by hand: the submission did not load (or loaded forbidden code), or the grader
# could not finish a target (a crash or a timeout of the checks), besides the unreadable and the grader-failed.
PROBLEM_CODES = ("load-error", "load-timeout", "forbidden-import", "crash", "timeout")
BINS = 10


@dataclass
class ClassSummary:
    """The figures both summaries show. A submission that could not be graded counts in none of the scores
    (its gradebook cell is blank): it is a blank for a human, never a 0."""

    count: int
    graded: int  # submissions with a score; the rest are listed for a human
    mean: float | None  # of the graded submissions' scores
    full_marks: int
    max_score: float | None
    distribution: list[tuple[str, int]]  # score range, students
    pass_rates: list[tuple[str, float]]  # target, share of graded students with all its points
    misconceptions: dict[str, list[tuple[str, int]]]  # target -> (code, students), most common first
    counterexamples: list[tuple[str, str, str, int]]  # target, code, expression, students
    problems: list[tuple[str, str, str]]  # student, what happened, why
    diagnoses: list[tuple[str, int]]  # "target:code", students
    who: dict[str, list[str]]  # "target:code" -> the students who have it, in the batch's order


def summarise(rows: list[tuple[str, dict]]) -> ClassSummary:
    reports = [report for _, report in rows]
    graded = [r for r in reports if r.get("status", "graded") == "graded"]
    maximum = class_max_score(reports)
    scores = [score for r in reports if (score := score_of(r)) is not None]
    distribution = []
    if maximum:
        width = maximum / BINS
        counts = Counter(min(BINS - 1, int(s / width)) for s in scores)
        distribution = [(f"{i * width:g}–{(i + 1) * width:g}", counts.get(i, 0)) for i in range(BINS)]
    pass_rates = []
    for target in targets_of(graded):
        full = sum(1 for r in graded if target in r["targets"]
                   and r["targets"][target]["score"] >= r["targets"][target]["max_score"])
        pass_rates.append((target, full / len(graded)))
    per_target: dict[str, Counter] = {}
    examples: Counter = Counter()
    everything: Counter = Counter()
    problems = []
    who: dict[str, list[str]] = {}
    for student, report in rows:
        status = report.get("status", "graded")
        seen = dict.fromkeys((d["target"], d["code"]) for d in report.get("diagnoses", []))
        for target, code in seen:
            per_target.setdefault(target, Counter())[code] += 1
            everything[f"{target}:{code}"] += 1
            who.setdefault(f"{target}:{code}", []).append(student)
        if status != "graded":
            everything[f"submission:{status}"] += 1
            who.setdefault(f"submission:{status}", []).append(student)
            problems.append((student, status, reason(report)))
        for d in report.get("diagnoses", []):
            example = d.get("counterexample")
            if example:
                examples[(d["target"], d["code"], example["expression"])] += 1
            if d["code"] in PROBLEM_CODES:
                problems.append((student, f"{d['target']}: {d['code']}", d["message"]))
        problems += [(student, "flagged", w) for w in report.get("warnings", []) if isinstance(w, str) and REVIEW in w]
    # The course's order (the reports list its targets in it), the submission's own problems first, wherever
    # students are as many: never the order in which the batch met them.
    place = {t: i for i, t in enumerate(["submission", *targets_of(reports)])}

    def order(target: str) -> tuple[int, str]:
        return place.get(target, len(place)), target

    return ClassSummary(
        count=len(rows), graded=len(scores), mean=sum(scores) / len(scores) if scores else None,
        full_marks=sum(1 for r in graded if r.get("score") == r.get("max_score")), max_score=maximum,
        distribution=distribution, pass_rates=pass_rates,
        misconceptions={t: sorted(per_target[t].items(), key=lambda kv: (-kv[1], kv[0]))
                        for t in sorted(per_target, key=order)},
        counterexamples=[(t, c, e, n) for (t, c, e), n in sorted(examples.items(), key=lambda kv: (
            -kv[1], order(kv[0][0]), kv[0][1:]))[:10]],
        problems=problems, diagnoses=sorted(everything.items(), key=lambda kv: (
            -kv[1], order(kv[0].partition(":")[0]), kv[0])), who=who)


def _md(text: str) -> str:
    """A table cell: on one line, pipes escaped."""
    return printable(text).replace("\n", " ").replace("|", "\\|")


def headline(summary: ClassSummary) -> str:
    """The summary's first sentence: how many, the mean of those graded, and those left for a human."""
    mean = f"mean score {summary.mean:.1f}" if summary.mean is not None else "no score"
    left = summary.count - summary.graded
    blank = f"; {left} not graded (blank in the gradebooks, listed below)" if left else ""
    return f"{summary.count} submissions, {summary.graded} graded; {mean}; {summary.full_marks} with full marks{blank}."


def summary_markdown(summary: ClassSummary) -> str:
    lines = ["# micrograde: class summary", "", headline(summary),
             "", "## Score distribution", "", "| score | students |", "|---|---|"]
    lines += [f"| {label} | {n} |" for label, n in summary.distribution]
    lines += ["", "## Targets", "", "| target | students with full points |", "|---|---|"]
    lines += [f"| `{t}` | {rate:.0%} |" for t, rate in summary.pass_rates]
    lines += ["", "## Students per diagnosis", "", "| diagnosis | students | who |", "|---|---|---|"]
    lines += [f"| `{key}` | {n} | {_md(', '.join(summary.who.get(key, [])))} |" for key, n in summary.diagnoses]
    lines += ["", "## Most common smallest counterexamples", "", "| target | diagnosis | expression | students |",
              "|---|---|---|---|"]
    lines += [f"| `{t}` | `{c}` | `{_md(e)}` | {n} |" for t, c, e, n in summary.counterexamples]
    lines += ["", "## Not graded in full: look at these by hand", "", "| student | what happened | why |",
              "|---|---|---|"]
    lines += [f"| {_md(s)} | {_md(what)} | {_md(why)} |" for s, what, why in summary.problems]
    return "\n".join(lines) + "\n"


def _text(value: object) -> str:
    return escape(printable(str(value)))


def bar_chart(rows: list[tuple[str, float, str]], most: float, colour: str) -> str:
    """Horizontal bars, one per ``(label, value, value as shown)``: inline SVG."""
    if not rows:
        return "<p>None.</p>"
    width, bar, gap, label = 640, 20, 6, 220
    parts = []
    for i, (name, value, shown) in enumerate(rows):
        y = i * (bar + gap)
        length = max(2, int((width - label - 70) * value / most)) if most else 2
        parts.append(f'<text x="{label - 8}" y="{y + 15}" text-anchor="end">{_text(name)}</text>'
                     f'<rect x="{label}" y="{y}" width="{length}" height="{bar}" fill="{colour}"/>'
                     f'<text x="{label + length + 6}" y="{y + 15}">{_text(shown)}</text>')
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{len(rows) * (bar + gap)}" '
            f'font-family="sans-serif" font-size="13" role="img">{"".join(parts)}</svg>')


def histogram(distribution: list[tuple[str, int]]) -> str:
    """Students per score range: inline SVG columns."""
    if not distribution:
        return "<p>No scores.</p>"
    most = max(n for _, n in distribution) or 1
    column, height, parts = 56, 160, []
    for i, (label, n) in enumerate(distribution):
        h = int(height * n / most)
        x = i * column
        parts.append(f'<rect x="{x + 4}" y="{20 + height - h}" width="{column - 8}" height="{h}" fill="#2c7fb8"/>'
                     f'<text x="{x + column / 2}" y="{14 + height - h}" text-anchor="middle">{n}</text>'
                     f'<text x="{x + column / 2}" y="{height + 38}" text-anchor="middle">{_text(label)}</text>')
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{column * len(distribution)}" height="{height + 46}" '
            f'font-family="sans-serif" font-size="11" role="img">{"".join(parts)}</svg>')


def table(header: list[str], rows: list[list[object]]) -> str:
    head = "".join(f"<th>{_text(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{_text(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def summary_html(summary: ClassSummary) -> str:
    """The same summary as a page with charts (inline SVG, nothing to load)."""
    sections = [
        "<h2>Score distribution</h2>", histogram(summary.distribution),
        "<h2>Students with all of a target's points</h2>",
        bar_chart([(t, rate, f"{rate:.0%}") for t, rate in summary.pass_rates], 1.0, "#41ab5d"),
        "<h2>Misconceptions per target</h2>",
    ]
    most = max((n for codes in summary.misconceptions.values() for _, n in codes), default=1)
    for target, codes in summary.misconceptions.items():
        sections += [f"<h3><code>{_text(target)}</code></h3>",
                     bar_chart([(code, n, str(n)) for code, n in codes], most, "#c0392b")]
    sections += [
        "<h2>Students per diagnosis</h2>",
        table(["diagnosis", "students", "who"], [[key, n, ", ".join(summary.who.get(key, []))]
                                                 for key, n in summary.diagnoses]),
        "<h2>Most common smallest counterexamples</h2>",
        table(["target", "diagnosis", "expression", "students"], [list(c) for c in summary.counterexamples]),
        "<h2>Not graded in full: crashed, timed out, did not load or unreadable: look at these by hand</h2>",
        table(["student", "what happened", "why"], [list(p) for p in summary.problems]),
    ]
    return ("<!doctype html><html><head><meta charset='utf-8'><title>micrograde: class summary</title>"
            "<style>body{font-family:sans-serif;margin:2em;max-width:60em}td,th{padding:2px 12px;text-align:left;"
            "vertical-align:top}</style></head><body><h1>micrograde: class summary</h1>"
            f"<p>{_text(headline(summary))}</p>"
            + "".join(sections) + "</body></html>\n")
