"""Revisions made inside the register (register/ingest/revise.py): stored as the next revision through
the import path, audited with their origin, scored, and refused without the permission."""

from __future__ import annotations

import pytest

from hri_core import parse_response
from register import SYSTEM, Actor
from register.access.permissions import Permission
from register.errors import PermissionDenied, RegisterError
from register.ingest.importer import import_path
from register.ingest.revise import revise_responses

RECORD = {"response_id": "r-1", "answer": "The fee is 2%.",
          "claims": [{"claim_id": "c1", "text": "The fee is 2%.", "labels": ["SUPPORTED"], "criticality": 3}]}


def _current(store, response_id):
    return store.one("SELECT r.revision, s.band, s.score FROM responses r JOIN scores s ON s.response_id = "
                     "r.response_id AND s.revision = r.revision AND s.is_current WHERE r.is_current "
                     "AND r.response_id = ?", [response_id])


def test_a_changed_label_becomes_the_next_scored_revision_with_its_origin(store, tmp_path):
    path = tmp_path / "one.jsonl"
    path.write_text(__import__("json").dumps(RECORD) + "\n")
    import_path(store, SYSTEM, path)
    before = _current(store, "r-1")
    changed = parse_response({**RECORD, "claims": [{**RECORD["claims"][0], "labels": ["CONTRADICTED"]}]})
    batch = revise_responses(store, SYSTEM, [changed], origin="adjudication", subject="adjudication of c1 of r-1",
                             permission=Permission.IMPORT)
    after = _current(store, "r-1")
    assert (before["revision"], after["revision"]) == (1, 2)
    assert after["score"] > before["score"]
    assert batch.new_revisions == 1 and batch.score_run_id is not None
    assert store.scalar("SELECT format FROM import_batches WHERE batch_id = ?", [batch.batch_id]) \
        == "revision:adjudication"
    assert store.scalar("SELECT count(*) FROM audit_events WHERE action = 'import.batch' AND entity_id = ?",
                        [str(batch.batch_id)]) == 1


def test_the_same_content_again_is_unchanged(store, tmp_path):
    path = tmp_path / "one.jsonl"
    path.write_text(__import__("json").dumps(RECORD) + "\n")
    import_path(store, SYSTEM, path)
    batch = revise_responses(store, SYSTEM, [parse_response(RECORD)], origin="feedback", subject="r-1",
                             permission=Permission.IMPORT)
    assert (batch.new_revisions, batch.unchanged) == (0, 1)
    assert _current(store, "r-1")["revision"] == 1


def test_refused_without_the_permission_or_with_an_unknown_origin(store):
    viewer = Actor("Vic Viewer", "viewer")
    with pytest.raises(PermissionDenied):
        revise_responses(store, viewer, [parse_response(RECORD)], origin="feedback", subject="r-1",
                         permission=Permission.IMPORT)
    with pytest.raises(RegisterError, match="not a revision origin"):
        revise_responses(store, SYSTEM, [parse_response(RECORD)], origin="guess", subject="r-1",
                         permission=Permission.IMPORT)
