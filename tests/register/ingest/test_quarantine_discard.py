"""Discarding a quarantined record (``register.ingest.quarantine``): kept with status discarded, who, when
and why, audited, never deleted; only by a role that may import; and migration 012 keeps every row."""

from __future__ import annotations

import json

import pytest

from hri_core import RecordError
from register import Actor, Store
from register.errors import InvalidDecision, NotFound, PermissionDenied, RegisterError
from register.ingest.importer import import_path, reimport_quarantined
from register.ingest.quarantine import discard_quarantined, quarantine_rows
from tests.helpers.actors import enrol
from tests.helpers.intake import MIXED_JSONL
from tests.helpers.migrations import migrations_before

ANNOTATOR = Actor("ann", "annotator")
VIEWER = Actor("vic", "viewer")


@pytest.fixture
def quarantined(store):
    enrol(store, ANNOTATOR, VIEWER)
    import_path(store, ANNOTATOR, MIXED_JSONL)
    return quarantine_rows(store)


def test_a_discarded_row_is_kept_with_who_when_and_why_and_audited(store, quarantined):
    row = quarantined[0]
    discard_quarantined(store, ANNOTATOR, row["quarantine_id"], "  a test record, never meant for the register ")
    [kept] = quarantine_rows(store, ("discarded",))
    assert kept["quarantine_id"] == row["quarantine_id"] and kept["raw"] == row["raw"]
    assert kept["reasons"] == row["reasons"]
    assert (kept["discarded_by"], kept["discard_reason"]) == ("ann", "a test record, never meant for the register")
    assert kept["discarded_at"] is not None
    assert [r["quarantine_id"] for r in quarantine_rows(store)] == [r["quarantine_id"] for r in quarantined[1:]]
    event = store.one("SELECT actor_name, entity_type, entity_id, before, after FROM audit_events "
                      "WHERE action = 'quarantine.discard'")
    assert (event["actor_name"], event["entity_type"], event["entity_id"]) == ("ann", "quarantine",
                                                                             str(row["quarantine_id"]))
    assert json.loads(event["before"])["status"] == "open"
    assert json.loads(event["after"])["reason"] == "a test record, never meant for the register"
    assert store.scalar("SELECT count(*) FROM quarantine") == len(quarantined)  # nothing deleted


def test_a_discard_needs_a_reason_and_an_open_row(store, quarantined):
    qid = quarantined[0]["quarantine_id"]
    for reason in ("", "   ", "x" * 2001):
        with pytest.raises(InvalidDecision, match="reason"):
            discard_quarantined(store, ANNOTATOR, qid, reason)
    with pytest.raises(NotFound):
        discard_quarantined(store, ANNOTATOR, 999_999, "gone")
    discard_quarantined(store, ANNOTATOR, qid, "duplicate of a later record")
    with pytest.raises(RegisterError, match="already discarded"):
        discard_quarantined(store, ANNOTATOR, qid, "again")
    with pytest.raises(RegisterError, match="already discarded"):  # nor can it be fixed afterwards
        reimport_quarantined(store, ANNOTATOR, qid, '{"response_id": "x", "claims": []}')
    assert store.scalar("SELECT count(*) FROM audit_events WHERE action = 'quarantine.discard'") == 1


def test_a_viewer_may_not_discard_and_the_refusal_is_audited(store, quarantined):
    qid = quarantined[0]["quarantine_id"]
    with pytest.raises(PermissionDenied):
        discard_quarantined(store, VIEWER, qid, "not mine to decide")
    assert store.scalar("SELECT status FROM quarantine WHERE quarantine_id = ?", [qid]) == "open"
    assert store.scalar("SELECT count(*) FROM audit_events WHERE actor_name = 'vic'") == 1


def test_a_fix_in_place_resolves_the_row_and_a_bad_fix_keeps_it_open(store, quarantined):
    by_location = {r["location"]: r for r in quarantined}
    bad_label = by_location["line 4"]
    with pytest.raises(RecordError):
        reimport_quarantined(store, ANNOTATOR, bad_label["quarantine_id"],
                             bad_label["raw"].replace("HALLUCINATED", "ALSO_WRONG"))
    assert quarantine_rows(store, ("open",))[1]["raw"].count("ALSO_WRONG") == 1
    report = reimport_quarantined(store, ANNOTATOR, bad_label["quarantine_id"],
                                  bad_label["raw"].replace("HALLUCINATED", "CONTRADICTED"))
    assert report.new_responses == 1 and report.resolved == 1
    assert store.scalar("SELECT status FROM quarantine WHERE quarantine_id = ?",
                        [bad_label["quarantine_id"]]) == "resolved"


def test_migration_012_keeps_every_quarantine_row_of_an_older_database(tmp_path, monkeypatch):
    # and 017, 019, 022, 023: today's importer keeps the console's read model (current_scores) and its summary in
    # the same transaction, joining responses and scores on the key 019 adds, and indexes the texts for search
    migrations_before(tmp_path, monkeypatch, 12, also=(17, 19, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32))
    db = tmp_path / "older.duckdb"
    before = Store(db)
    from register import SYSTEM
    from register.scoring.profiles import ensure_default_profile

    ensure_default_profile(before, SYSTEM)
    # not scored: today's scorer writes columns of later migrations (016), the quarantine is the point here
    import_path(before, SYSTEM, MIXED_JSONL, score=False)
    rows_before = before.query("SELECT * FROM quarantine ORDER BY quarantine_id")
    before.close()
    monkeypatch.undo()
    after = Store(db)
    try:
        assert "012_quarantine_discard.sql" in after.applied_migrations
        rows_after = after.query("SELECT * EXCLUDE (discarded_at, discarded_by, discard_reason) FROM quarantine "
                                 "ORDER BY quarantine_id")
        assert rows_after == rows_before and len(rows_after) == 4
        next_id = after.scalar("SELECT nextval('seq_quarantine')")
        assert next_id > max(r[0] for r in rows_after)  # the sequence carries on: no id is reused
    finally:
        after.close()
