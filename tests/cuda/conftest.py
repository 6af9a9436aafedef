"""Fixtures shared by the GPU-only tests of tests/cuda (tests/conftest.py's apply as well)."""

import pytest


@pytest.fixture(scope="module")
def xp():
    """The namespace, imported when a GPU test first needs it."""
    import arrayx
    return arrayx
