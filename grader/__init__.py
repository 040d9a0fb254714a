"""micrograde: grades a build-micrograd-yourself submission and names its gradient bugs.

From a notebook or a script, ``from grader import check; check(Value, train_step)``
grades your own classes and shows the report.
"""

__version__ = "0.1.0"


def check(*args, **kwargs):
    """Grade your ``Value`` and ``train_step``: see ``grader.student.check``."""
    from grader.student import check as run

    return run(*args, **kwargs)
