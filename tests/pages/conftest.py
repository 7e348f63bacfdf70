"""Page test fixtures: a seeded database at HRI_DB and ``login_as`` (Streamlit's caches are cleared
around every test by tests/conftest.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.helpers.accounts import login


@pytest.fixture(autouse=True)
def _unexpected_errors_raise(monkeypatch):
    """HRI_DEBUG=1: an unexpected error on a page is re-raised (``at.exception``), not hidden behind an
    incident id, so ``assert not at.exception`` still catches defects (test_error_path.py unsets it)."""
    monkeypatch.setenv("HRI_DEBUG", "1")


@pytest.fixture
def seeded_db(database_templates):
    """The database named by HRI_DB (a temp file, see tests/conftest.py), loaded with the demo set (50 synthetic
    responses) and holding the ``test-<role>`` accounts of ``login_as``: a copy of the session's template."""
    store = database_templates.open("demo50-accounts", Path(os.environ["HRI_DB"]))
    yield store
    store.close()


@pytest.fixture
def seeded_db_without_accounts(database_templates):
    """``seeded_db`` before any account exists (a first start)."""
    store = database_templates.open("demo50", Path(os.environ["HRI_DB"]))
    yield store
    store.close()


@pytest.fixture
def login_as():
    """``login_as(at, role)``: see ``tests.helpers.accounts.login``."""
    return login
