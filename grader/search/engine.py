"""Searching for a failing expression with Hypothesis, and shrinking it.

Each example is one round trip to the child. Runs are reproducible: the
search is derandomized, keeps no example database and writes nothing to disk,
and the smallest failure is chosen by our own measure, not by which one
happened to be last.

A derandomized search asks for the same examples whenever the same ones
fail, so searches are replayed from ``grader.search.replay``'s tree without
starting the Hypothesis engine (nor importing it): a passing submission
always, a failing one when its path of passes and failures has been walked
before. Where the tree does not know what comes next, Hypothesis runs; it
asks for the same examples in the same order, is answered from what the walk
already saw, and goes on searching and shrinking exactly as it would have
alone. The child sees the same requests either way.
"""

from __future__ import annotations

import functools
from collections import deque
from collections.abc import Callable

from grader.judging.judge import Verdict
from grader.search.replay import END, ReplayCache

SHRINK_BUDGET = 80  # examples tried after the first failure, so shrinking stays quick


class _Mismatch(Exception):
    """One generated case failed; Hypothesis shrinks towards a smaller one."""


class _Enough(BaseException):
    """The shrink budget is spent; stops Hypothesis at once (it only catches Exception)."""


_TEMPORARY: list = []  # Hypothesis's directory, kept until the process ends (then removed)


@functools.cache
def _hypothesis():
    """Hypothesis, imported on first need and set up to leave no trace and depend on nothing local."""
    import tempfile
    from pathlib import Path

    import hypothesis
    from hypothesis.configuration import set_hypothesis_home_dir

    # Hypothesis keeps a cache directory (for constants it finds in local source
    # files) relative to the working directory; grading must leave no trace, next to
    # the submission or anywhere else, so it gets a temporary directory of its own
    # that goes when the grading process ends. Hypothesis also mixes constants from
    # "local" modules (imported from outside the standard library and site-packages)
    # into what it draws, and has no public setting to turn that off. Installed as a
    # package, micrograde imports no local module in the grading process (the
    # submission only ever runs in the child), so the examples depend on nothing but
    # the strategy; from a source checkout its own modules are local, and the
    # examples are still the same on every run of that checkout.
    home = tempfile.TemporaryDirectory(prefix="micrograde-hypothesis-", ignore_cleanup_errors=True)
    _TEMPORARY.append(home)
    set_hypothesis_home_dir(Path(home.name))
    return hypothesis


def _run(strategy: Callable[[], object], probe: Callable[[object], None], max_examples: int) -> bool:
    """Run ``probe`` on the examples of a derandomized search of what ``strategy()`` makes (it raises
    ``_Mismatch`` to shrink); False when the shrink budget stopped it."""
    hypothesis = _hypothesis()
    from hypothesis.errors import Flaky

    @hypothesis.settings(max_examples=max_examples, derandomize=True, database=None, deadline=None,
                         phases=(hypothesis.Phase.explicit, hypothesis.Phase.generate, hypothesis.Phase.shrink),
                         report_multiple_bugs=False, suppress_health_check=list(hypothesis.HealthCheck),
                         verbosity=hypothesis.Verbosity.quiet, print_blob=False)
    @hypothesis.given(strategy())
    def run(case) -> None:
        probe(case)

    try:
        run()
    except _Enough:
        return False
    except (_Mismatch, Flaky):
        pass
    return True


def full_search(strategy: Callable[[], object], evaluate: Callable[[object], Verdict], focus: str,
                max_examples: int) -> tuple[list[Verdict], bool]:
    """The Hypothesis search itself: the failing verdicts, the first one found first, and
    whether Hypothesis ended by itself (not stopped by the shrink budget)."""
    failures: list[Verdict] = []
    after_failure = [0]

    def probe(case) -> None:
        if failures:
            after_failure[0] += 1
            if after_failure[0] > SHRINK_BUDGET:
                raise _Enough
        verdict = evaluate(case)
        if not verdict.passed(focus):
            failures.append(verdict)
            raise _Mismatch

    ended = _run(strategy, probe, max_examples)
    return failures, ended


def passing_examples(strategy: Callable[[], object], max_examples: int) -> list:
    """Every example, in order, that the search shows a submission passing them all."""
    examples: list = []
    _run(strategy, examples.append, max_examples)
    return examples


class _Replayed:
    """``evaluate``, answered from verdicts already known while the same cases come in the same order."""

    def __init__(self, known: list[tuple[object, Verdict]], evaluate: Callable[[object], Verdict]):
        self.known = deque(known)
        self.evaluate = evaluate

    def __call__(self, case) -> Verdict:
        if self.known and self.known[0][0] == case:
            return self.known.popleft()[1]
        self.known.clear()
        return self.evaluate(case)


def search(strategy: Callable[[], object], evaluate: Callable[[object], Verdict], focus: str,
           max_examples: int, *, key: str) -> list[Verdict]:
    """Verdicts of the failing cases found (empty when every generated case passed).

    ``strategy`` makes the Hypothesis strategy, only if Hypothesis has to run;
    ``key`` names it in the replay cache (the same key, the same examples).
    """
    cache = ReplayCache.for_search(key, max_examples)
    if cache is None:
        return full_search(strategy, evaluate, focus, max_examples)[0]
    tree = cache.load()
    if tree is None:
        tree = cache.record([(case, False) for case in passing_examples(strategy, max_examples)], ended=True)
    failures: list[Verdict] = []
    known: list[tuple[object, Verdict]] = []
    node, failed, after_failure = None, False, 0
    while tree is not None:
        following = tree.following(node, failed)
        if following == END or (failures and after_failure == SHRINK_BUDGET):
            return failures  # where Hypothesis ends, or the shrink budget would stop it
        case = tree.case(following) if following >= 0 else None
        if case is None:
            break  # the tree does not know: Hypothesis goes on from here
        after_failure += bool(failures)
        verdict = evaluate(case)
        known.append((case, verdict))
        failed = not verdict.passed(focus)
        if failed:
            failures.append(verdict)
        node = following
    path: list[tuple[object, bool]] = []
    replayed = _Replayed(known, evaluate)

    def recorded(case) -> Verdict:
        verdict = replayed(case)
        path.append((case, not verdict.passed(focus)))
        return verdict

    failures, ended = full_search(strategy, recorded, focus, max_examples)
    if tree is not None:
        cache.record(path, ended)
    return failures
