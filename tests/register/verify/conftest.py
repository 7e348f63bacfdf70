"""Fixtures of the verification tests (the actors are in tests/helpers/actors.py)."""

from __future__ import annotations

import pytest

from tests.helpers.actors import ANN, ANNOTATOR, enrol


@pytest.fixture
def store(store):
    """The shared register, with accounts for the named actors (the register re-reads them on every write)."""
    enrol(store, ANN, ANNOTATOR)
    return store
