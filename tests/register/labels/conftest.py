"""A small labelling register per test (tests/helpers/labelling.py)."""

from __future__ import annotations

import pytest

from tests.helpers.labelling import labelling_store


@pytest.fixture
def lab(tmp_path):
    store = labelling_store(tmp_path)
    yield store
    store.close()
