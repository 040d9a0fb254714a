"""micrograde: grades a build-micrograd-yourself submission and names its gradient bugs."""

__version__ = "0.1.0"
