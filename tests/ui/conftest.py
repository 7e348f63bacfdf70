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
    from register.profiles import ensure_default_profile

    store = Store(os.environ["HRI_DB"])
    ensure_default_profile(store, SYSTEM)
    seed_demo(store, SYSTEM, synthetic=50)
    yield store
    store.close()
