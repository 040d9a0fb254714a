import sys
from pathlib import Path

import pytest

from grader.child import launcher

sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(params=["auto", "none"])
def mode(request, monkeypatch):
    """Each test twice: in the strongest sandbox this machine offers, and with namespaces
    turned off (``MICROGRADE_SANDBOX=none``), which is what a machine without them gets."""
    monkeypatch.setenv("MICROGRADE_SANDBOX", request.param)
    launcher.detect.cache_clear()
    if request.param == "auto" and not launcher.detect().isolated:
        pytest.skip(f"no namespaces on this machine: {launcher.detect().detail}")
    yield request.param
    launcher.detect.cache_clear()
