"""Fixtures of the demo's tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def demo_store(store):
    """The ``store`` fixture loaded with the demo set (Table V, Factcheck-GPT, 120 synthetic responses): ``store`` is
    a copy of that template when a test asks for this fixture (``tests/conftest.py``: STORE_TEMPLATES)."""
    return store
