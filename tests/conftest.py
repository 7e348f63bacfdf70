"""Shared fixtures: every test gets its own temporary DuckDB file; nothing touches the developer's
own database (HRI_DB points into the test's temp folder), no HRI_* setting of the developer's shell
leaks into a test, and Streamlit's caches never carry one test's data into the next.

Shared helpers (not fixtures) live in ``tests/helpers``.
"""

from __future__ import annotations

import gc
import os
import sys

import pytest

from tests.helpers.paths import peer_data as _peer_data


@pytest.fixture(autouse=True)
def _isolated_environment(tmp_path, monkeypatch):
    """Point the app and the CLIs at a temp database for every test, with no other HRI_* setting
    (HRI_DEMO_MODE, HRI_ACTOR, HRI_ROLES_FILE, ... from the shell would change what a test sees)."""
    for name in [name for name in os.environ if name.startswith("HRI_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("HRI_DB", str(tmp_path / "hri.duckdb"))
    # no background warm-up of the overview (ui.warmup): its reads would race what a test counts and closes
    monkeypatch.setenv("HRI_CONSOLE_WARMUP", "0")


@pytest.fixture(autouse=True)
def _clear_streamlit_caches():
    """st.cache_data / st.cache_resource live in the process and survive between AppTest instances: clear
    them around every test that could have filled them (only once Streamlit is imported at all)."""
    _clear_caches()
    yield
    _clear_caches()
    # the app freezes the objects alive at its first run (ui.collector, once per server process); a test process
    # runs the app many times, and what one test froze must not outlive it
    gc.unfreeze()


def _clear_caches() -> None:
    streamlit = sys.modules.get("streamlit")
    if streamlit is not None:
        streamlit.cache_data.clear()
        streamlit.cache_resource.clear()


@pytest.fixture
def store(tmp_path, request):
    """A fresh, migrated register with the default (paper) profile active."""
    from register import SYSTEM, Store
    from register.scoring.profiles import ensure_default_profile

    s = Store(tmp_path / "register.duckdb")
    ensure_default_profile(s, SYSTEM)
    yield s
    # whatever the test wrote, every read model still equals what it is computed from
    import duckdb

    from register.readmodels import hub

    try:
        problems = [] if request.node.get_closest_marker("tampers") else hub.check(s)
    except duckdb.ConnectionException:  # the test closed the store itself
        problems = []
    assert problems == [], f"a read model differs from what it is computed from: {problems}"
    s.close()


@pytest.fixture
def peer_data():
    """``peer_data(*parts)``: a path into ../shared/peer-data, or skip the test (saying why) when it is
    absent (``tests.helpers.paths.peer_data``)."""
    return _peer_data
