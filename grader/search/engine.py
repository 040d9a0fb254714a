"""Searching for a failing expression: Hypothesis generates, micrograde shrinks.

A search shows the submission the examples a derandomized Hypothesis search
generates for a test that passes them all: its *opening*. The opening does
not depend on the submission, so it is generated once and kept
(``grader.search.replay``); Hypothesis is neither run nor imported when it
is. The whole opening goes to the child at once, the next case built while
the last is judged. If any case fails, the smallest failure is shrunk by
``grader.search.shrink``, on the expressions themselves, towards the case a
student can check by hand.

Runs are reproducible: the generation is derandomized, keeps no example
database and writes nothing beside the submission; the opening is the same
with and without the cache, and shrinking depends only on the verdicts.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path

from grader.judging.judge import Verdict
from grader.search import shipped
from grader.search.generable import Space
from grader.search.replay import ReplayCache, enabled, private_directory, usable_directory
from grader.search.shrink import shrink

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


class _Enough(BaseException):
    """Enough distinct examples: stops Hypothesis at once (it catches only ``Exception``)."""


SEARCHED_PER_EXAMPLE = 4  # how many examples Hypothesis may make for each distinct one wanted


def generate(strategy: Callable[[], object], max_examples: int) -> list:
    """The first ``max_examples`` distinct examples, in order, that a derandomized search of what
    ``strategy()`` makes shows a test that passes them all. Hypothesis repeats examples (a third
    of its first thirty, here), and a repeat tells nothing new: the search may make up to
    ``SEARCHED_PER_EXAMPLE`` times as many, so that the opening holds as many different cases
    as it is long."""
    hypothesis = _hypothesis()
    examples: dict = {}

    @hypothesis.settings(max_examples=SEARCHED_PER_EXAMPLE * max_examples, derandomize=True, database=None,
                         deadline=None, phases=(hypothesis.Phase.explicit, hypothesis.Phase.generate),
                         suppress_health_check=list(hypothesis.HealthCheck),
                         verbosity=hypothesis.Verbosity.quiet, print_blob=False)
    @hypothesis.given(strategy())
    def run(case) -> None:
        examples.setdefault(case, None)
        if len(examples) == max_examples:
            raise _Enough

    try:
        run()
    except _Enough:
        pass
    return list(examples)


def strategy(space: Space):
    """The Hypothesis strategy of ``space`` (Hypothesis is imported only when a search has to run it)."""
    from grader.search.strategies import expressions

    return expressions(space.target, roots=space.roots, ops=space.ops, apart=space.apart)


def opening(space: Space, max_examples: int, judgeable: Callable[[object], bool] = lambda case: True) -> list:
    """The opening of the search of ``space``: shipped with micrograde (the default course's,
    ``grader.search.shipped``), else from the cache if it has it, else generated (and kept).

    A kept opening with a case the grader cannot judge (``judgeable``) is dropped and generated again:
    a case is charged to the submission only if a fresh search would have shown it too."""
    cases = shipped.opening(space, max_examples) if enabled() else None
    if cases is not None and all(judgeable(case) for case in cases):
        return cases
    cache = ReplayCache.for_search(space, max_examples)
    cases = cache.load() if cache is not None else None
    if cases is not None and not all(judgeable(case) for case in cases):
        cases = None
    if cases is None:
        cases = generate(lambda: strategy(space), max_examples)
        if cache is not None:
            cache.store(cases)
    return cases


def search(space: Space, evaluate_many: Callable[[list], list[Verdict]], focus: str,
           max_examples: int, judgeable: Callable[[object], bool] = lambda case: True) -> list[Verdict]:
    """Verdicts of the failing cases found (empty when every generated case passed): the first
    failure of the opening, then those found while shrinking it.

    As a Hypothesis search would, the search stops at the first failure: only it
    and its simpler versions speak for the submission, not whatever else the
    opening would have met after it (a wrong value further on can make a later
    case crash, or hide a fault by a coincidence).

    ``space`` is what the search draws from (its key names it in the cache: the
    same key, the same examples); every shrunk case keeps its target op (if any);
    ``evaluate_many`` runs cases in order and returns their verdicts; ``judgeable``
    says whether the grader can judge a case at all (see ``opening``).
    ``evaluate_many`` may answer fewer cases than it was given (the child was
    lost): the search ends there, with what it found.
    """
    cases = opening(space, max_examples, judgeable)
    first = next((v for v in (evaluate_many(cases) if cases else []) if not v.passed(focus)), None)
    return [first, *shrink(first, evaluate_many, focus, space.target)] if first is not None else []
