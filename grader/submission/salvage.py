"""What compiles of a ``.py`` file that does not: its top-level statements, each on its own.

A learner's file often holds more than the exercise: an unfinished ``Tensor`` class below a finished
``Value``, a half-written experiment at the bottom. Python refuses the whole file for one syntax error
anywhere in it, and a grader that did the same would give 0 for work that is done. So when a file does
not parse, its top-level statements are compiled one by one (a notebook's cells already are): those
that compile are kept, each where it was, and those that do not are left out, blanked line for line so
that every other line keeps its number. What was left out, and why, is said in the report (a warning,
or ``load-error`` when what was left out is a graded part).

The statements are found without the parser (it has failed): a top-level statement starts on a line
that is not indented and is not a comment, a closing bracket or the ``else``/``elif``/``except``/
``finally`` of the statement before. A piece that does not compile alone is tried with the pieces after
it (a decorator and its ``def``, a string or bracket that holds an unindented line), up to ``REACH`` of
them; if none compiles, that piece alone is left out. Nothing here runs any of the code.
"""

from __future__ import annotations

import ast
import re
import sys
from dataclasses import dataclass

REACH = 12  # pieces a piece that does not compile alone is tried with
MAX_PIECES = 4000  # a file with more top-level statements than this is not salvaged: it is refused whole
BUDGET = 4  # times the file's size compiled at most while salvaging it (a broken file costs a few parses)
CONTINUATION = re.compile(r"(else|elif|except|finally)\b|[)\]}]")
DEFINES = re.compile(r"(?:async\s+def|def|class)\s+(\w+)")


@dataclass(frozen=True)
class LeftOut:
    """A top-level statement of a file that does not compile, left out of what is run and graded."""

    first: int  # its first and last lines, counted from 1
    last: int
    error: str  # the error Python gives it alone ("IndentationError: unexpected indent")
    line: int | None  # the line Python names
    defines: str | None = None  # the class or function it defines, if its first line says
    kind: str = ""  # "class" or "function" when it defines one

    def describe(self) -> str:
        """``the class Tensor (lines 150-171)``, ``the function train_step (line 9)``, ``the statement at lines
        3-4``."""
        lines = f"line {self.first}" if self.first == self.last else f"lines {self.first}-{self.last}"
        return f"the {self.kind} {self.defines} ({lines})" if self.defines else f"the statement at {lines}"


# A line as Python counts lines, with its ending: only \n, \r\n and \r end one (not \f, unlike splitlines).
LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


def blanked(source: str, lines: list[int]) -> str:
    """``source`` with ``lines`` made blank (a space and their own ending: never a bare ending that
    could join a ``\\r`` before it into one ``\\r\\n``), so every other line keeps its number."""
    numbered = LINE.findall(source)
    for number in lines:
        text = numbered[number - 1]
        numbered[number - 1] = " " + text[len(text.rstrip("\r\n")):]
    return "".join(numbered)


# An f-string whose braces hold the quote that delimits it: legal only from Python 3.12 (PEP 701).
_NESTED_QUOTES = re.compile(r"""\b[rR]?[fF][rR]?(['"]).*\{[^}]*\1""")


def newer_syntax(source: str, line: int | None) -> str:
    """Why code that a newer Python accepts fails here, if that is the reason: it says which version."""
    lines = source.splitlines()
    if sys.version_info < (3, 12) and line is not None and 0 < line <= len(lines) and _NESTED_QUOTES.search(
            lines[line - 1]):
        ran = f"{sys.version_info.major}.{sys.version_info.minor}"
        return (f" (this f-string reuses its own quotes inside {{ }}, which needs Python 3.12 or newer; "
                f"micrograde runs on Python {ran} here: use the other kind of quotes inside)")
    return ""


def starts(lines: list[str]) -> list[int]:
    """The indices of the lines that may start a top-level statement."""
    found = []
    for i, line in enumerate(lines):
        if line[:1] in ("", " ", "\t", "\r", "\n", "#", "\f") or CONTINUATION.match(line):
            continue
        found.append(i)
    return found


def compiles(text: str, filename: str) -> SyntaxError | None:
    """The error that ``text`` gives when compiled alone, or ``None``."""
    try:
        compile(text, filename, "exec", ast.PyCF_ONLY_AST)
    except SyntaxError as exc:
        return exc
    except (ValueError, RecursionError, MemoryError) as exc:
        return SyntaxError(f"{type(exc).__name__}: the source cannot be parsed")
    return None


def salvaged(source: str, filename: str) -> tuple[str, list[LeftOut]] | None:
    """``source`` with every top-level statement that does not compile blanked (its lines kept, empty), and
    what was left out; ``None`` when nothing could be kept or the file is too broken to try."""
    lines = LINE.findall(source)
    found = starts(lines)
    if not found or len(found) > MAX_PIECES:
        return None
    bounds = [*found, len(lines)]
    kept = [line if i < found[0] else "" for i, line in enumerate(lines)]
    left_out = []
    budget = BUDGET * len(source)
    k = 0
    while k < len(found):
        first_error = None
        for reach in range(1, min(REACH, len(found) - k) + 1):
            text = "".join(lines[bounds[k]:bounds[k + reach]])
            budget -= len(text)
            if budget < 0:
                return None
            error = compiles(text, filename)
            if error is None:
                kept[bounds[k]:bounds[k + reach]] = lines[bounds[k]:bounds[k + reach]]
                k += reach
                break
            first_error = first_error or error
        else:
            first, last = bounds[k] + 1, last_code_line(lines, bounds[k], bounds[k + 1])
            line = first_error.lineno + bounds[k] if isinstance(first_error.lineno, int) else None
            kind = "IndentationError" if isinstance(first_error, IndentationError) else "SyntaxError"
            named = DEFINES.match(lines[bounds[k]])
            left_out.append(LeftOut(first, last, f"{kind}: {first_error.msg}", line,
                                    named.group(1) if named else None,
                                    ("class" if named.group(0).startswith("class") else "function") if named else ""))
            k += 1
    if len(left_out) == len(found):
        return None
    return blanked(source, [i + 1 for i, line in enumerate(kept) if not line]), left_out


def last_code_line(lines: list[str], start: int, end: int) -> int:
    """The last line (counted from 1) of ``lines[start:end]`` that is not blank, for a message."""
    for i in range(end - 1, start, -1):
        if lines[i].strip():
            return i + 1
    return start + 1


def defines(source: str, name: str) -> bool:
    """Whether ``source``, which does not parse, defines ``name`` at its top level (``class Value``...), as
    far as its lines say."""
    return re.search(rf"^(?:class|def|async\s+def)\s+{re.escape(name)}\b", source, re.MULTILINE) is not None
