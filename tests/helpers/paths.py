"""Where the repository, its test data and the peer data live (relative to this file, never absolute)."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
TEST_DATA = REPO_ROOT / "tests" / "data"
IMPORT_DATA = TEST_DATA / "import"
SHARED = REPO_ROOT.parent / "shared"
PEER_DATA = SHARED / "peer-data"


def peer_data(*parts: str) -> Path:
    """Path into ../shared/peer-data, or skip the test (saying why) when it is absent."""
    path = PEER_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"peer data not available: {path.relative_to(SHARED.parent) if SHARED.exists() else path.name}")
    return path
