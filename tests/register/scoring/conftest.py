"""Fixtures of the scoring-profile tests: a register with demo data (the actors are in tests/helpers/actors.py)."""

from __future__ import annotations

import pytest

from tests.helpers.actors import ANN, BOB, REVIEWER, enrol


@pytest.fixture
def store(store):
    """The shared register, with accounts for the named actors (the register re-reads them on every write)."""
    enrol(store, ANN, BOB, REVIEWER)
    return store


@pytest.fixture
def demo_store(store):
    """The ``store`` fixture (default profile active, the named actors' accounts) loaded with the demo set (Table V,
    Factcheck-GPT, 120 synthetic responses): ``store`` is a copy of that template when a test asks for this fixture
    (``tests/conftest.py``: STORE_TEMPLATES)."""
    return store
