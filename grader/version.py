"""micrograde's version, written in one place: the package's metadata (``pyproject.toml``), ``--version``,
and what a batch's or a kept opening's file records it was made with all read it here."""

__version__ = "0.1.0"
