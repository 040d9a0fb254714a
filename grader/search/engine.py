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
from pathlib import Path

from grader.judging.judge import Verdict
from grader.search.replay import END, ReplayCache, private_directory, usable_directory

SHRINK_BUDGET = 80  # examples tried after the first failure, so shrinking stays quick


class _Mismatch(Exception):
    """One generated case failed; Hypothesis shrinks towards a smaller one."""


class _Enough(BaseException):
    """The shrink budget is spent; stops Hypothesis at once (it only catches Exception)."""


_TEMPORARY: list = []  # Hypothesis's directory when there is no cache directory: removed when the process ends


@functools.cache
def _hypothesis():
    """Hypothesis, imported on first need and set up to leave no trace beside the submission."""
    import tempfile

    import hypothesis
    from hypothesis.configuration import set_hypothesis_home_dir

    # Hypothesis mixes constants from "local" modules (imported from outside the
    # standard library and site-packages) into what it draws, and has no public
    # setting to turn that off. Installed as a package, micrograde imports no local
    # module in the grading process (the submission only ever runs in the child), so
    # the examples depend on nothing but the strategy; run from a source checkout,
    # its own modules are local, and the examples are the same on every run of that
    # checkout. Finding those constants means parsing every local module, so
    # Hypothesis keeps what it found in its home directory, by the hash of each
    # file: that home is micrograde's own cache directory (see ``replay``), never
    # the working directory, or else a temporary one that goes when the process ends.
    directory = usable_directory()
    home = directory / "hypothesis" if directory is not None else None
    if home is not None:
        try:
            home.mkdir(mode=0o700, exist_ok=True)
        except OSError:
            home = None
    if home is None or not private_directory(home):
        temporary = tempfile.TemporaryDirectory(prefix="micrograde-hypothesis-", ignore_cleanup_errors=True)
        _TEMPORARY.append(temporary)
        home = Path(temporary.name)
    set_hypothesis_home_dir(home)
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


def search(strategy: Callable[[], object], evaluate_many: Callable[[list], list[Verdict]], focus: str,
           max_examples: int, *, key: str) -> list[Verdict]:
    """Verdicts of the failing cases found (empty when every generated case passed).

    ``strategy`` makes the Hypothesis strategy, only if Hypothesis has to run;
    ``key`` names it in the replay cache (the same key, the same examples);
    ``evaluate_many`` runs cases in order and returns their verdicts.

    Every search starts with its opening: the examples a derandomized search shows
    a submission that passes them all, run in one go (the child works on the next
    while the last is judged). The opening is the same with and without the cache
    (Hypothesis makes it when there is none), so the child always runs the same
    cases in the same order. If one fails, the search goes on from the first that
    did, one example at a time: along the tree while it knows what comes next,
    then with Hypothesis, answered from what was already run as far as it asks
    the same cases in the same order.
    """
    cache = ReplayCache.for_search(key, max_examples)
    tree = cache.load() if cache is not None else None
    opening = tree.opening() if tree is not None else None
    if opening is None:
        opening = passing_examples(strategy, max_examples)
        tree = cache.record([(case, False) for case in opening], ended=True) if cache is not None else None
    opened = evaluate_many(opening) if opening else []
    if all(verdict.passed(focus) for verdict in opened):
        return []
    answer = _Replayed(list(zip(opening, opened)), lambda case: evaluate_many([case])[0])
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
        verdict = answer(case)
        known.append((case, verdict))
        failed = not verdict.passed(focus)
        if failed:
            failures.append(verdict)
        node = following
    path: list[tuple[object, bool]] = []
    replayed = _Replayed(known, answer)

    def recorded(case) -> Verdict:
        verdict = replayed(case)
        path.append((case, not verdict.passed(focus)))
        return verdict

    failures, ended = full_search(strategy, recorded, focus, max_examples)
    if tree is not None:
        cache.record(path, ended)
    return failures
