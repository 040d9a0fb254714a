"""The submissions here are learners' work, not micrograde's tests: pytest collects none of them
(a course's own ``test_engine.py`` needs PyTorch)."""

collect_ignore = ["karpathy_exercises", "dl_course_hw1", "tutorial_deep", "fairness"]
