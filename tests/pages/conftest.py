"""Page test fixtures: a seeded database at HRI_DB and ``login_as`` (Streamlit's caches are cleared
around every test by tests/conftest.py)."""

from __future__ import annotations

import os

import pytest

from tests.helpers.accounts import login


@pytest.fixture(autouse=True)
def _unexpected_errors_raise(monkeypatch):
    """HRI_DEBUG=1: an unexpected error on a page is re-raised (``at.exception``), not hidden behind an
    incident id, so ``assert not at.exception`` still catches defects (test_error_path.py unsets it)."""
    monkeypatch.setenv("HRI_DEBUG", "1")


@pytest.fixture
def seeded_db():
    """The database named by HRI_DB (a temp file, see tests/conftest.py), loaded with the demo set."""
    from register import SYSTEM, Store
    from register.demo import seed_demo
    from register.scoring.profiles import ensure_default_profile

    store = Store(os.environ["HRI_DB"])
    ensure_default_profile(store, SYSTEM)
    seed_demo(store, SYSTEM, synthetic=50)
    yield store
    store.close()


@pytest.fixture
def login_as():
    """``login_as(at, role)``: see ``tests.helpers.accounts.login``."""
    return login
