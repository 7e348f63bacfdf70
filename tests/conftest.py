"""Shared fixtures: every test gets its own temporary DuckDB file; nothing touches the developer's
own database (HRI_DB points into the test's temp folder)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED = REPO_ROOT.parent / "shared"
PEER_DATA = SHARED / "peer-data"
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))


@pytest.fixture(autouse=True)
def _isolated_database(tmp_path, monkeypatch):
    """Point the app and the CLIs at a temp database for every test."""
    monkeypatch.setenv("HRI_DB", str(tmp_path / "hri.duckdb"))


@pytest.fixture
def store(tmp_path):
    """A fresh, migrated register with the default (paper) profile active."""
    from register import SYSTEM, Store
    from register.scoring.profiles import ensure_default_profile

    s = Store(tmp_path / "register.duckdb")
    ensure_default_profile(s, SYSTEM)
    yield s
    s.close()


def peer_data(*parts: str) -> Path:
    """Path into ../shared/peer-data, or skip the test (saying why) when it is absent."""
    path = PEER_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"peer data not available: {path.relative_to(SHARED.parent) if SHARED.exists() else path.name}")
    return path
