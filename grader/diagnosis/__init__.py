"""Diagnosis: what grading found, as frozen values, read into misconceptions a learner is told.

``findings`` holds the values, ``codes`` every code once, ``diagnose`` the one pure function from outcomes
to diagnoses and warnings, ``feedback`` the wording; the rest are its passes and rules.
"""

# The modules other rooms of micrograde may import (tests/unit/test_layout.py holds them to it).
__all__ = ["codes", "diagnose", "feedback", "findings", "inheritance", "rules", "submission", "ungraded"]
