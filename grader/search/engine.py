"""Searching for a failing expression with Hypothesis, and shrinking it.

Hypothesis drives the search from the grading process; each example is one
round trip to the child. Runs are reproducible: the search is derandomized,
keeps no example database and writes nothing to disk, and the smallest
failure is chosen by our own measure, not by which one happened to be last.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path

from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis.configuration import set_hypothesis_home_dir
from hypothesis.errors import Flaky
from hypothesis.strategies import SearchStrategy

from grader.judging.judge import Verdict

SHRINK_BUDGET = 80  # examples tried after the first failure, so shrinking stays quick

# Hypothesis keeps a cache directory (for constants it finds in local source
# files) relative to the working directory. Grading must leave no trace next to
# the submission, and must not generate differently depending on which local
# modules happen to be imported, so both are switched off.
set_hypothesis_home_dir(Path(tempfile.gettempdir()) / "micrograde-hypothesis-unused")
try:
    from hypothesis.internal.conjecture import providers as _providers

    _providers._get_local_constants = lambda: _providers.Constants()
except (ImportError, AttributeError):  # a Hypothesis without local constants
    pass


class _Mismatch(Exception):
    """One generated case failed; Hypothesis shrinks towards a smaller one."""


class _Enough(BaseException):
    """The shrink budget is spent; stops Hypothesis at once (it only catches Exception)."""


def search(strategy: SearchStrategy, evaluate: Callable[[object], Verdict], focus: str,
           max_examples: int) -> list[Verdict]:
    """Verdicts of the failing cases found (empty when every generated case passed)."""
    failures: list[Verdict] = []
    after_failure = [0]

    @settings(max_examples=max_examples, derandomize=True, database=None, deadline=None,
              phases=(Phase.explicit, Phase.generate, Phase.shrink), report_multiple_bugs=False,
              suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet, print_blob=False)
    @given(strategy)
    def probe(case) -> None:
        if failures:
            after_failure[0] += 1
            if after_failure[0] > SHRINK_BUDGET:
                raise _Enough
        verdict = evaluate(case)
        if not verdict.passed(focus):
            failures.append(verdict)
            raise _Mismatch

    try:
        probe()
    except (_Mismatch, _Enough, Flaky):
        pass
    return failures
