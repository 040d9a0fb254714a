"""Every corpus submission's report is the one kept in ``tests/golden/reports.jsonl`` (see ``golden.py``).

A change to how reports are put together changes none of them; a change to what they say changes exactly
the reports it means to, and ``python tests/support/golden.py`` keeps the new ones (the diff then shows them).
"""

from __future__ import annotations

import golden


def test_every_corpus_report_is_as_kept():
    found = golden.differences(golden.kept(), golden.graded_all())
    assert not found, "reports differ from tests/golden/reports.jsonl:\n" + "\n".join(found[:200])
