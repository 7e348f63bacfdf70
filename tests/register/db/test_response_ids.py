"""``response_ids`` (migration 028): a response's revisions found by the hash of its id, then by their keys.

Every writer of responses records its new revisions (the importer, revisions included, and the bulk copies);
the lookup equals the scan of every id it replaced, for every id and for ids that are not there; the id itself
is compared (two ids may share a hash); ``check`` names a missing, a wrongly hashed and an extra row; an older
database gets its table filled by the migration."""

from __future__ import annotations

import json

import pytest

from hri_core.synthetic import generate_responses
from register import SYSTEM, Store
from register.console.queries.detail import response_detail
from register.db.store import Change, Transaction
from register.ingest.importer import import_path
from register.ingest.replicate import replicate
from register.readmodels import response_ids
from register.scoring.profiles import ensure_default_profile
from register.scoring.reproduce import reproduce
from tests.helpers.migrations import migrations_before


def _write(path, records) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


def _tamper(store: Store, statement: str, params: list) -> None:
    """Write to ``response_ids`` directly (what no code of the register does), as an audited test event."""

    def fn(tx: Transaction) -> Change:
        tx.execute(statement, params)
        return Change("response_ids", None, None, {"test": statement})

    store.write(SYSTEM, "test.tamper", fn)


def _scanned(store: Store, response_id: str) -> list[tuple]:
    """What the lookup replaced: every revision of the id found by comparing every stored id."""
    return store.query("SELECT revision, response_key, is_current FROM responses WHERE response_id = ? "
                       "ORDER BY revision", [response_id])


@pytest.fixture
def revised(store, tmp_path):
    """30 synthetic responses, 10 of them revised by a second file (changed answers), and 45 bulk copies."""
    first = list(generate_responses(30, seed=11))
    _write(tmp_path / "first.jsonl", first)
    assert import_path(store, SYSTEM, tmp_path / "first.jsonl").accepted == 30
    changed = [{**r, "answer": (r.get("answer") or "") + " (revised)"} for r in first[:10]]
    _write(tmp_path / "second.jsonl", changed)
    assert import_path(store, SYSTEM, tmp_path / "second.jsonl").new_revisions == 10
    batch = store.scalar("SELECT batch_id FROM import_batches WHERE source_name = 'first.jsonl'")
    replicate(store, SYSTEM, batch, 45)
    return store


def test_the_lookup_equals_the_scan_for_every_id_and_for_ids_not_there(revised):
    ids = [rid for (rid,) in revised.query("SELECT DISTINCT response_id FROM responses ORDER BY 1")]
    assert len(ids) == 75 and revised.scalar("SELECT count(*) FROM response_ids") == 85  # 10 second revisions
    for rid in ids:
        assert response_ids.revisions(revised, rid) == _scanned(revised, rid)
    assert len(response_ids.revisions(revised, ids[0])) in (1, 2)
    assert [len(response_ids.revisions(revised, rid)) for rid in ids].count(2) == 10
    for absent in ("", "nope", ids[0] + " ", ids[0].upper(), "%", "' OR 1=1 --"):
        assert response_ids.revisions(revised, absent) == _scanned(revised, absent) == []
    assert response_ids.check(revised) == []


def test_the_detail_and_its_reproduction_read_a_revised_response_by_its_current_revision(revised):
    rid = revised.scalar("SELECT response_id FROM responses WHERE revision = 2 ORDER BY response_id LIMIT 1")
    detail = response_detail(revised, rid)
    assert detail["revisions"] == [1, 2] and detail["response"]["revision"] == 2
    assert detail["response"]["answer"].endswith("(revised)")
    assert reproduce(revised, rid).matches
    assert response_detail(revised, rid, revision=1)["response"]["revision"] == 1
    assert response_detail(revised, rid + "x") is None


@pytest.mark.tampers
def test_the_id_itself_is_compared_and_check_names_each_fault(revised):
    a, b = revised.query("SELECT response_id, response_key FROM responses WHERE revision = 1 "
                         "ORDER BY response_key LIMIT 2")
    # a row that claims b's key for a's hash (as two ids sharing a hash would look): a's lookup still finds a only
    _tamper(revised, "INSERT INTO response_ids VALUES (md5_number_lower(?), ?)", [a[0], b[1]])
    assert response_ids.revisions(revised, a[0]) == _scanned(revised, a[0])
    assert [p for p in response_ids.check(revised) if "match no response" in p] == [
        "1 row(s) of response_ids match no response revision"]
    _tamper(revised, "DELETE FROM response_ids WHERE response_key = ? AND id_hash = md5_number_lower(?)", [b[1], b[0]])
    assert any("not in response_ids" in p for p in response_ids.check(revised))
    # what a missing row costs (the reason check exists): that revision is not found
    assert b[1] not in [key for _, key, _ in response_ids.revisions(revised, b[0])]


def test_an_older_database_gets_its_ids_from_the_migration(tmp_path, monkeypatch):
    migrations_before(tmp_path, monkeypatch, 28, also=(29, 30, 31, 32))
    monkeypatch.setattr(response_ids, "record", lambda *args, **kwargs: None)  # the writers before the table
    older = Store(tmp_path / "older.duckdb")
    ensure_default_profile(older, SYSTEM)
    _write(tmp_path / "o.jsonl", generate_responses(20, seed=3))
    assert import_path(older, SYSTEM, tmp_path / "o.jsonl").accepted == 20
    assert older.scalar("SELECT count(*) FROM information_schema.tables WHERE table_name = 'response_ids'") == 0
    older.close()
    monkeypatch.undo()

    upgraded = Store(tmp_path / "older.duckdb")
    assert upgraded.scalar("SELECT count(*) FROM response_ids") == 20
    assert response_ids.check(upgraded) == []
    for (rid,) in upgraded.query("SELECT response_id FROM responses"):
        assert response_ids.revisions(upgraded, rid) == _scanned(upgraded, rid)
    upgraded.close()
