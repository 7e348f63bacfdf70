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
def plain_db(database_templates):
    """The database named by HRI_DB without the demo set: a migrated register holding the paper's Table V answers
    (so the first start loads no demo) and the ``test-<role>`` accounts. No RAG results, no outcomes: for the
    pages' "nothing yet" states, which the demo set (its RAGChecker answers and review decisions) no longer shows."""
    from register import SYSTEM
    from register.demo import DATA_DIR
    from register.ingest.importer import import_path
    from tests.helpers.accounts import create_accounts

    store = database_templates.open("migrated", Path(os.environ["HRI_DB"]))
    import_path(store, SYSTEM, DATA_DIR / "table_v_supplier_contract.jsonl")
    create_accounts(store, {f"test-{role}": role for role in ("viewer", "annotator", "reviewer", "admin")})
    yield store
    store.close()


@pytest.fixture
def login_as():
    """``login_as(at, role)``: see ``tests.helpers.accounts.login``."""
    return login
