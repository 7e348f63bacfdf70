"""A small labelling register per test (tests/helpers/labelling.py): a copy of the session's template."""

from __future__ import annotations

import pytest

from register import Store
from tests.helpers.labelling import labelling_store


def _build(path) -> None:
    labelling_store(path.parent, path.name).close()


@pytest.fixture
def lab(tmp_path, database_templates):
    store = Store(database_templates.copy("labelling", tmp_path / "labels.duckdb", _build))
    yield store
    store.close()
