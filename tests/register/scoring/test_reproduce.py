"""Stored scores recompute exactly from the stored labels, profile version and as-of time."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from register import SYSTEM
from register.console.queries.detail import response_detail
from register.errors import NotFound
from register.ingest.importer import import_path
from register.scoring.profiles import activate, create_draft, get_profile
from register.scoring.reproduce import load_response, reproduce
from register.scoring.scorer import rescore
from tests.helpers.paths import REPO_ROOT
from tests.helpers.statements import recorded_statements

AS_OF = datetime(2026, 12, 1, tzinfo=UTC)


@pytest.fixture
def loaded(store, tmp_path):
    records = [json.loads((REPO_ROOT / "data" / "table_v_supplier_contract.jsonl").read_text()),
               {"response_id": "fb", "claims": [
                   {"labels": ["VALIDATED_NEGATIVE_FEEDBACK"], "criticality": 2,
                    "feedback_at": "2026-10-01T00:00:00Z", "feedback_count": 1, "feedback_resolved": True},
                   {"labels": ["PARTIAL", "OUTDATED"], "dimensions": ["C", "O"]}]},
               {"response_id": "none", "claims": []}]
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    import_path(store, SYSTEM, path, score=False)
    rescore(store, SYSTEM, get_profile(store, 1), as_of=AS_OF)
    return store


@pytest.mark.parametrize("rid", ["paper-table-v", "fb", "none"])
def test_current_scores_reproduce(loaded, rid):
    result = reproduce(loaded, rid)
    assert result.matches, result.differences
    assert result.recomputed.as_of == AS_OF


def test_table_v_reproduction_values(loaded):
    result = reproduce(loaded, "paper-table-v")
    assert result.recomputed.score == pytest.approx(70.0)
    assert result.stored["decisive_claim_id"] == "paper-table-v-3"


@pytest.mark.tampers
def test_tampered_score_is_reported_with_the_field(loaded):
    with loaded.cursor() as cur:
        cur.execute("UPDATE scores SET score = 12.5, band = 'Low' WHERE response_id = 'paper-table-v'")
    result = reproduce(loaded, "paper-table-v")
    assert not result.matches
    assert any(d.startswith("score: stored 12.5") for d in result.differences)
    assert any(d.startswith("band: stored 'Low'") for d in result.differences)


def test_old_run_under_an_older_profile_still_reproduces(loaded):
    first_run = loaded.query_one("SELECT run_id FROM scores WHERE response_id = 'fb' AND is_current")[0]
    version = create_draft(loaded, SYSTEM, {"weights": {"F": 0.1, "C": 0.1, "U": 0.1, "O": 0.4, "S": 0.1,
                                                       "P": 0.1, "H": 0.1}})
    activate(loaded, SYSTEM, version, "test")
    rescore(loaded, SYSTEM, get_profile(loaded, version), as_of=datetime(2027, 1, 1, tzinfo=UTC))
    old, new = reproduce(loaded, "fb", run_id=first_run), reproduce(loaded, "fb")
    assert old.matches and new.matches
    assert old.stored["profile_version"] == 1 and new.stored["profile_version"] == version
    assert old.recomputed.hri != new.recomputed.hri


def test_load_response_round_trips_claim_fields(loaded):
    response = load_response(loaded, "fb")
    assert [c.labels[0].value for c in response.claims] == ["VALIDATED_NEGATIVE_FEEDBACK", "PARTIAL"]
    assert response.claims[1].dimensions[0].value == "C"
    assert response.claims[0].feedback_resolved is True


def test_unknown_response_is_not_found(loaded):
    with pytest.raises(NotFound, match="nope"):
        reproduce(loaded, "nope")


def test_an_earlier_revisions_run_reproduces_from_that_revision(loaded, tmp_path):
    """Score rows are found by their revision's key: the first revision's run recomputes from the first
    revision's claims, the current score from the second's (each response's revisions have their own keys)."""
    first_run = loaded.scalar("SELECT run_id FROM scores WHERE response_id = 'fb' AND is_current")
    revised = {"response_id": "fb", "claims": [{"labels": ["CONTRADICTED"], "criticality": 3}]}
    path = tmp_path / "revised.jsonl"
    path.write_text(json.dumps(revised) + "\n")
    import_path(loaded, SYSTEM, path)
    old, new = reproduce(loaded, "fb", run_id=first_run), reproduce(loaded, "fb")
    assert old.matches and new.matches, (old.differences, new.differences)
    assert (old.revision, new.revision) == (1, 2)
    assert [c.labels[0].value for c in old.response.claims] == ["VALIDATED_NEGATIVE_FEEDBACK", "PARTIAL"]
    assert [c.labels[0].value for c in new.response.claims] == ["CONTRADICTED"]
    assert load_response(loaded, "fb", 1).claims[1].dimensions[0].value == "C"
    assert [c.labels[0].value for c in load_response(loaded, "fb").claims] == ["CONTRADICTED"]
    with pytest.raises(NotFound, match="has no revision 3"):
        load_response(loaded, "fb", 3)


def test_the_revisions_keys_given_spare_the_ids_lookup(loaded, monkeypatch):
    """The detail page has looked the id up already (``response_detail``'s ``keys``): reproducing with them gives
    the same result and reads nothing through ``response_ids`` (a scan of every id's hash at scale)."""
    keys = response_detail(loaded, "fb")["keys"]
    expected = reproduce(loaded, "fb")
    with recorded_statements(monkeypatch) as statements:
        given = reproduce(loaded, "fb", keys=keys)
    assert statements and not [s for s in statements if "response_ids" in s]
    assert (given.stored, given.recomputed, given.matches, given.response) == (
        expected.stored, expected.recomputed, expected.matches, expected.response)
    assert keys == {1: loaded.scalar("SELECT response_key FROM responses WHERE response_id = 'fb'")}
