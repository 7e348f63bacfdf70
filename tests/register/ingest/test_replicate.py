"""SQL copies of validated synthetic responses (the bulk generator behind ``demo --synthetic N --bulk``): each copy
carries the raw record and content hash the importer would store for it, the claims of its template, its own key,
and scores equal to its template's; the copies are an audited import batch; made once."""

from __future__ import annotations

import json

import pytest

from hri_core.models import parse_response
from hri_core.synthetic import generate_responses
from register import SYSTEM, Actor
from register.demo import seed_demo
from register.errors import PermissionDenied, RegisterError
from register.ingest.importer import import_path
from register.ingest.records import content_hash
from register.ingest.replicate import COPY_FORMAT, replicate
from tests.helpers.actors import enrol


@pytest.fixture
def templates(store, tmp_path):
    """An import batch of 30 synthetic responses, imported and scored as any file."""
    path = tmp_path / "templates.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in generate_responses(30, seed=7)))
    report = import_path(store, SYSTEM, path)
    assert report.accepted == 30
    return store.scalar("SELECT batch_id FROM import_batches WHERE source_name = 'templates.jsonl'")


def test_copies_hold_what_the_importer_would_store_for_them(store, templates, tmp_path):
    report = replicate(store, SYSTEM, templates, 75)
    assert (report.responses, report.templates) == (75, 30)
    rows = store.dicts("SELECT response_id, response_key, revision, raw, content_hash FROM responses "
                       "WHERE batch_id = ?", [report.batch_id])
    assert len(rows) == 75 and len({r["response_key"] for r in rows}) == 75 and {r["revision"] for r in rows} == {1}
    rounds = {r["response_id"].rsplit("~", 1)[1] for r in rows}
    assert rounds == {"1", "2", "3"}  # 30 + 30 + 15 copies, each round one copy of each template in turn
    for row in rows[::7]:  # the raw line names the copy, and its hash is the importer's
        record = json.loads(row["raw"])
        assert record["response_id"] == row["response_id"]
        assert content_hash(parse_response(record, record=row["response_id"])) == row["content_hash"]
    again = tmp_path / "again.jsonl"  # importing copies' lines later finds them unchanged
    again.write_text("".join(r["raw"] + "\n" for r in rows[:5]))
    reimport = import_path(store, SYSTEM, again)
    assert (reimport.unchanged, reimport.new_revisions, reimport.new_responses) == (5, 0, 0)


def test_copies_have_their_templates_claims_and_scores(store, templates):
    report = replicate(store, SYSTEM, templates, 60)
    mismatched = store.scalar("""
        SELECT count(*) FROM claims k JOIN claims t ON t.response_id = split_part(k.response_id, '~', 1)
             AND t.is_current AND t.claim_idx = k.claim_idx
        WHERE k.is_current AND k.response_id LIKE '%~%'
          AND (k.labels <> t.labels OR k.criticality <> t.criticality OR k.text IS DISTINCT FROM t.text)""")
    assert mismatched == 0
    assert report.claims == store.scalar("SELECT 2 * sum(claim_count) FROM responses WHERE batch_id = ?", [templates])
    scores = store.query("""
        SELECT k.score = t.score AND k.band = t.band AND k.action = t.action FROM scores k
        JOIN scores t ON t.is_current AND t.response_id = split_part(k.response_id, '~', 1)
        WHERE k.is_current AND k.run_id = ?""", [report.score_run_id])
    assert len(scores) == 60 and all(same for (same,) in scores)


def test_the_copies_are_an_audited_balanced_batch_and_cannot_be_made_twice(store, templates):
    report = replicate(store, SYSTEM, templates, 40)
    batch = store.one("SELECT format, records_total, accepted, new_responses, quarantined, finished_at "
                      "FROM import_batches WHERE batch_id = ?", [report.batch_id])
    assert (batch["format"], batch["records_total"], batch["accepted"], batch["new_responses"],
            batch["quarantined"]) == (COPY_FORMAT, 40, 40, 40, 0) and batch["finished_at"] is not None
    assert store.scalar("SELECT count(*) FROM audit_events WHERE action = 'import.copies'") == 2  # two rounds
    before = store.scalar("SELECT count(*) FROM responses")
    with pytest.raises(RegisterError, match="already in the register"):
        replicate(store, SYSTEM, templates, 10)
    assert store.scalar("SELECT count(*) FROM responses") == before
    assert store.scalar("SELECT count(*) FROM import_batches WHERE finished_at IS NULL") == 0  # none left open
    assert not store.query("SELECT table_name FROM information_schema.tables WHERE table_name LIKE 'replica_%'")


def test_only_importers_make_copies_and_an_empty_batch_is_named(store, templates):
    viewer = Actor("vic", "viewer")
    enrol(store, viewer)
    with pytest.raises(PermissionDenied):
        replicate(store, viewer, templates, 5)
    with pytest.raises(RegisterError, match="import batch 999"):
        replicate(store, SYSTEM, 999, 5)
    with pytest.raises(RegisterError, match="positive"):
        replicate(store, SYSTEM, templates, 0)


def test_demo_bulk_imports_the_templates_and_copies_the_rest_once(store, monkeypatch):
    monkeypatch.setattr("register.demo.BULK_TEMPLATES", 40)
    summary = seed_demo(store, SYSTEM, synthetic=100, bulk=True)
    assert summary["synthetic"] == 100
    copies = store.scalar("SELECT count(*) FROM responses r JOIN import_batches b USING (batch_id) "
                          "WHERE b.format = ?", [COPY_FORMAT])
    imported = store.scalar("SELECT accepted FROM import_batches WHERE source_name = 'synthetic-40.jsonl'")
    assert (copies, imported) == (60, 40)
    again = seed_demo(store, SYSTEM, synthetic=100, bulk=True)
    assert any("made before" in note for note in again["notes"])
    assert store.scalar("SELECT count(*) FROM responses r JOIN import_batches b USING (batch_id) "
                        "WHERE b.format = ?", [COPY_FORMAT]) == 60
