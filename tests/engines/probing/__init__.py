"""What runs inside each fresh subprocess of ``check_engines.py``: a learner's files loaded beside the course's, the
course's ``micrograde.toml`` forms read against them, and every target's behaviour observed (no micrograde import)."""
