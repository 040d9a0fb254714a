"""The families here are courses' and learners' code, not micrograde's tests: pytest collects none of them (a
course's own ``test_*.py`` among them)."""

collect_ignore_glob = ["*/course", "*/blank", "*/learners", "probing"]
