"""What ``check_corpus.py`` runs to establish the ground truth of the real-assignment corpus.

The learners' code is run in plain Python (numpy, no PyTorch) and compared with ``reference/engine.py``
and finite differences, so that every verdict in a ``verdicts.toml`` is observed, not only asserted.
"""
