"""UI test fixtures: Streamlit caches cleared around every test, a seeded database at HRI_DB."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _clear_streamlit_caches():
    import streamlit as st

    st.cache_data.clear()
    st.cache_resource.clear()
    yield
    st.cache_data.clear()
    st.cache_resource.clear()


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


TEST_PASSWORD = "correct horse battery staple"  # test accounts only; never a default of the app


def ensure_account(username: str, role: str, password: str = TEST_PASSWORD) -> None:
    """A local account in the HRI_DB database with a known password (no one-time-password step)."""
    from register import SYSTEM, Actor, Store
    from register.access.identity import change_own_password, create_user, get_user

    store = Store(os.environ["HRI_DB"])
    try:
        if get_user(store, username) is None:
            one_time = create_user(store, SYSTEM, username, role, f"Test {role}")
            change_own_password(store, Actor(username, role), one_time, password)
    finally:
        store.close()


def login(at, role: str, username: str | None = None) -> str:
    """Log an AppTest session in as a local account ``test-<role>`` (created if missing); returns its name.

    Call before ``at.run()``. The login gate (ui.shell.page_frame) re-reads the account on every run,
    so it lives in the app's database (HRI_DB).
    """
    import time

    username = username or f"test-{role}"
    ensure_account(username, role)
    at.session_state["hri_auth"] = {"username": username, "role": role, "display_name": f"Test {role}",
                                    "method": "local", "last_seen": time.time(), "must_change": False}
    return username


@pytest.fixture
def login_as():
    """``login_as(at, role)``: see ``login``."""
    return login
