"""What the optional outputs need beyond grading, and the one line that says how to get it.

Grading needs only what ``pip install micrograde`` installs; the ``--html`` hand-back page needs
nbconvert, a sanitiser for what the student wrote and grandalf, which ``micrograde[html]``
installs. Asked for a page without them, the command says so in one line instead of failing
half-way through a grade.
"""

from __future__ import annotations

import importlib.util

HTML_EXTRA = "micrograde[html]"


def html_missing() -> str | None:
    """The first module the ``--html`` page needs that is not installed (``None``: all are)."""
    for module in ("nbconvert", "grandalf"):
        if importlib.util.find_spec(module) is None:
            return module
    try:
        import grader.report.sanitise  # noqa: F401 (its sanitiser library, whichever that is)
    except ModuleNotFoundError as exc:
        return exc.name or "the sanitiser"
    return None


def html_needs() -> str | None:
    """The one-line reason ``--html`` cannot be written here, naming the extra; ``None`` when it can."""
    missing = html_missing()
    return None if missing is None else f"--html needs {missing}, which is not installed: pip install '{HTML_EXTRA}'"
