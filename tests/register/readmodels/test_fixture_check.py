"""The store fixture's teardown check (``tests.helpers.stores``) skips ``hub.check`` only when there is nothing to
compare: its list of tables must name every table the check reads, or a read model written wrongly beside empty
sources would pass unchecked."""

from __future__ import annotations

import re

import pytest

from register.readmodels import hub, version_views
from tests.helpers import stores
from tests.helpers.feedback import import_records, two_claims
from tests.helpers.statements import recorded_statements


@pytest.fixture
def demo_store(store):
    """The ``store`` fixture loaded with the demo set (a copy of its template: ``tests/conftest.py``)."""
    return store


def test_the_shortcut_names_every_table_the_check_reads(demo_store, monkeypatch):
    tables = {name for (name,) in demo_store.query("SELECT table_name FROM duckdb_tables()")}
    with recorded_statements(monkeypatch) as statements:
        assert hub.check(demo_store) == []
    read = set(re.findall(r"\w+", " ".join(statements))) & tables
    kept = {table for version in version_views.kept(demo_store) for table in version_views.tables(version)}
    assert {"responses", "scores", "current_scores", "search_words"} <= read  # the recording saw the check
    # search_index is the index's state row (how far it has caught up), never empty
    assert read - kept - {"search_index"} <= set(stores._SOURCES + stores._READ_MODELS)


def test_an_empty_register_has_nothing_to_compare_and_a_loaded_one_has(store, tmp_path):
    assert stores.nothing_to_compare(store) and hub.check(store) == []
    import_records(store, tmp_path, [two_claims("r1")])
    assert not stores.nothing_to_compare(store)


def test_a_read_model_row_beside_empty_sources_is_still_checked(store):
    with store.cursor() as cur:  # written behind the register's back, as a wrong writer would
        cur.execute("INSERT INTO response_ids VALUES (42, 7)")
    assert not stores.nothing_to_compare(store)
    assert hub.check(store) == ["response_ids: 1 row(s) of response_ids match no response revision"]
    with store.cursor() as cur:  # the fixture's own check at teardown then passes
        cur.execute("DELETE FROM response_ids")
