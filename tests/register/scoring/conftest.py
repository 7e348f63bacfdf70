"""Fixtures of the scoring-profile tests: a register with demo data (the actors are in tests/helpers/actors.py)."""

from __future__ import annotations

import pytest

from tests.helpers.actors import ANN, BOB, REVIEWER, enrol
from tests.helpers.stores import check_read_models


@pytest.fixture
def store(store):
    """The shared register, with accounts for the named actors (the register re-reads them on every write)."""
    enrol(store, ANN, BOB, REVIEWER)
    return store


@pytest.fixture
def demo_store(tmp_path, request, templates):
    """A register (default profile active) loaded with the demo set (Table V, Factcheck-GPT, 120 synthetic
    responses), with accounts for the named actors: a copy of the session's template, checked at teardown as
    ``store`` is."""
    store = templates.open("demo120", tmp_path / "demo.duckdb")
    enrol(store, ANN, BOB, REVIEWER)
    yield store
    check_read_models(store, request)
    store.close()
