"""Fixtures of the scoring-profile tests: a register with demo data (the actors are in tests/helpers/actors.py)."""

from __future__ import annotations

import pytest

from register import SYSTEM
from tests.helpers.actors import ANN, BOB, REVIEWER, enrol


@pytest.fixture
def store(store):
    """The shared register, with accounts for the named actors (the register re-reads them on every write)."""
    enrol(store, ANN, BOB, REVIEWER)
    return store


@pytest.fixture
def demo_store(store):
    """The ``store`` fixture (default profile active) loaded with the demo set (Table V, Factcheck-GPT,
    120 synthetic responses)."""
    from register.demo import seed_demo

    seed_demo(store, SYSTEM, synthetic=120)
    return store
