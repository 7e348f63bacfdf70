"""The approved-use-case register (issue 37, item 1): versioned, audited, soft-deleted and restored like the source
and claims registers; validated whole with every failure named by row and field; four eyes on approval."""

from __future__ import annotations

import json
from datetime import date, timedelta

import pandas as pd
import pytest

from register import Actor, StaleEdit
from register import governance as gov
from register.db.store import utc_now
from register.errors import FourEyesViolation, NotFound, PermissionDenied
from register.governance.use_cases import approve_use_case
from tests.helpers.actors import enrol

SYSTEM = Actor("ops", "system")  # the command line's actor: records approvals made elsewhere
RITA = Actor("rita", "reviewer")
ADA = Actor("ada", "admin")
OLGA = Actor("olga", "admin")
VIC = Actor("vic", "viewer")
NEXT_YEAR = utc_now().date() + timedelta(days=365)


@pytest.fixture
def store(store):
    enrol(store, RITA, ADA, OLGA, VIC)
    return store


def _use_case(use_case_id: str, **values) -> dict:
    row = {"use_case_id": use_case_id, "owner": "ada", "purpose": f"purpose of {use_case_id}", "status": "proposed",
           "allowed_categories": "legal; contractual", "requester_roles": "buyer;contract-manager"}
    row.update(values)
    return row


def _insert(store, actor, *rows: dict) -> dict:
    return gov.save_use_cases(store, actor, gov.RowChanges(inserts=[{"values": r} for r in rows]))


def _row(store, use_case_id: str) -> dict:
    row = gov.use_case_row(store, use_case_id)
    assert row is not None
    return row


def _update(store, actor, use_case_id: str, version: int | None = None, **values) -> dict:
    row = _row(store, use_case_id)
    current = {c: row[c] for c in gov.USE_CASE_COLUMNS}
    return gov.save_use_cases(store, actor, gov.RowChanges(updates=[{
        "key": use_case_id, "row_version": row["row_version"] if version is None else version,
        "values": {**current, **values}}]))


def _events(store, action: str, use_case_id: str) -> list[tuple]:
    return store.query("SELECT actor_name, before, after FROM audit_events WHERE action = ? AND entity_id = ? "
                       "ORDER BY seq", [action, use_case_id])


def test_a_saved_use_case_is_normalised_versioned_and_audited(store):
    row = _use_case("uc-1", status=" Proposed ", allowed_categories="Legal; discrimination / bias",
                    allowed_topics="SLAs, penalties; termination", requester_roles="clinician; buyer; clinician")
    assert _insert(store, RITA, row) == {"updated": 0, "inserted": 1, "deleted": 0, "unchanged": 0}
    row = _row(store, "uc-1")
    assert (row["status"], row["row_version"], row["updated_by"]) == ("proposed", 1, "rita")
    assert list(row["allowed_categories"]) == ["legal", "discrimination/bias"]
    assert list(row["allowed_topics"]) == ["SLAs, penalties", "termination"]  # topics split on ";" only
    # requester roles are their own vocabulary: "clinician" and "buyer" are no console roles, and are kept
    assert list(row["requester_roles"]) == ["clinician", "buyer"]
    assert _update(store, RITA, "uc-1", notes="first review in May")["updated"] == 1
    assert _update(store, RITA, "uc-1", notes="first review in May")["unchanged"] == 1  # same values: no version
    row = _row(store, "uc-1")
    assert (row["row_version"], row["notes"]) == (2, "first review in May")
    (created,) = _events(store, "use_case.create", "uc-1")
    (updated,) = _events(store, "use_case.update", "uc-1")
    assert created[0] == "rita" and created[1] is None
    assert json.loads(updated[1])["notes"] is None and json.loads(updated[2])["notes"] == "first review in May"


def test_a_stale_edit_is_refused_and_writes_nothing(store):
    _insert(store, RITA, _use_case("uc-1"))
    _update(store, ADA, "uc-1", purpose="changed by ada")
    with pytest.raises(StaleEdit, match="use case uc-1 was changed by ada"):
        _update(store, RITA, "uc-1", version=1, purpose="rita's edit of version 1")
    assert (_row(store, "uc-1")["purpose"], _row(store, "uc-1")["row_version"]) == ("changed by ada", 2)


def test_a_deleted_use_case_is_kept_and_can_be_restored(store):
    _insert(store, RITA, _use_case("uc-1"), _use_case("uc-2"))
    counts = gov.save_use_cases(store, RITA, gov.RowChanges(deletes=[{"key": "uc-1", "row_version": 1}]))
    assert counts["deleted"] == 1
    assert gov.list_use_cases(store)["use_case_id"].tolist() == ["uc-2"]
    kept = gov.list_use_cases(store, include_deleted=True).set_index("use_case_id")
    assert bool(kept.loc["uc-1", "deleted"]) and kept.loc["uc-1", "row_version"] == 2
    assert gov.use_case_row(store, "uc-1") is None
    gov.restore(store, RITA, "usecases", "uc-1")
    assert gov.list_use_cases(store)["use_case_id"].tolist() == ["uc-1", "uc-2"]
    assert _row(store, "uc-1")["row_version"] == 3
    assert [e[0] for e in _events(store, "use_case.delete", "uc-1")] == ["rita"]
    assert [e[0] for e in _events(store, "use_case.restore", "uc-1")] == ["rita"]
    with pytest.raises(NotFound, match="use case uc-2 is not deleted"):
        gov.restore(store, RITA, "usecases", "uc-2")


def test_validation_names_every_bad_row_and_field_and_writes_nothing(store):
    rows = [_use_case("uc-ok"),
            _use_case("uc-2", status="bogus", review_by="next spring", allowed_categories="legal; gossip"),
            _use_case("uc-3", owner="", purpose=" ", requester_roles="buyer (EU); -role; console;admin"),
            _use_case("uc-4", status="approved", approved_by="ADA ", review_by=str(NEXT_YEAR)),
            _use_case("uc-5", status="approved", evidence_link="javascript:alert(1)"),
            _use_case("", purpose="no id")]
    with pytest.raises(gov.ValidationFailed) as failed:
        _insert(store, SYSTEM, *rows)
    problems = {(p.row, p.column) for p in failed.value.problems}
    assert problems == {(2, "status"), (2, "review_by"), (2, "allowed_categories"), (3, "owner"), (3, "purpose"),
                        (3, "requester_roles"), (4, "approved_by"), (5, "approved_by"), (5, "review_by"),
                        (5, "evidence_link"), (6, "use_case_id")}
    messages = {(p.row, p.column): p.message for p in failed.value.problems}
    assert "'ADA' is the use case's owner" in messages[(4, "approved_by")]
    assert "four eyes" in messages[(4, "approved_by")]
    assert "'gossip' is not a claim category" in messages[(2, "allowed_categories")]
    assert "'-role' is not a requester role" in messages[(3, "requester_roles")]
    assert store.scalar("SELECT count(*) FROM use_case_register") == 0


def test_the_system_records_an_approval_made_elsewhere_but_a_persons_edit_never_approves(store):
    # the command line (an imported register file) records who approved, as long as it is not the owner
    _insert(store, SYSTEM, _use_case("uc-imported", status="approved", approved_by="olga", review_by=str(NEXT_YEAR)))
    assert _row(store, "uc-imported")["approved_by"] == "olga"
    _insert(store, RITA, _use_case("uc-1"))
    with pytest.raises(gov.ValidationFailed) as failed:  # a person may not approve by editing the status
        _update(store, RITA, "uc-1", status="approved", approved_by="olga", review_by=NEXT_YEAR)
    assert [(p.row, p.column) for p in failed.value.problems] == [(1, "approved_by"), (1, "status")]
    with pytest.raises(gov.ValidationFailed) as failed:  # nor name an approver on an unapproved one
        _update(store, RITA, "uc-1", approved_by="olga")
    assert [(p.row, p.column) for p in failed.value.problems] == [(1, "approved_by")]
    with pytest.raises(gov.ValidationFailed) as failed:  # nor widen what an approved use case covers
        _update(store, RITA, "uc-imported", allowed_categories=["legal", "health"], review_by=NEXT_YEAR.replace(
            year=NEXT_YEAR.year + 5))
    assert {(p.row, p.column) for p in failed.value.problems} == {(1, "allowed_categories"), (1, "review_by")}
    assert list(_row(store, "uc-imported")["allowed_categories"]) == ["legal", "contractual"]
    # suspending and notes need no second person
    assert _update(store, RITA, "uc-imported", status="suspended", notes="incident 42")["updated"] == 1
    assert _row(store, "uc-imported")["status"] == "suspended"


def test_the_owner_approving_is_refused_with_four_eyes_and_a_second_person_approves(store):
    _insert(store, RITA, _use_case("uc-1", owner="ada"))
    with pytest.raises(FourEyesViolation, match="ada owns use case uc-1"):
        approve_use_case(store, ADA, "uc-1", 1, review_by=NEXT_YEAR, reason="mine, so fine?")
    denied = store.query_one("SELECT actor_name, after FROM audit_events WHERE action = 'denied' AND "
                             "entity_type = 'use_case' AND entity_id = 'uc-1'")
    assert denied[0] == "ada" and "four eyes" in denied[1]
    assert _row(store, "uc-1")["status"] == "proposed"
    with pytest.raises(PermissionDenied):  # approving needs an admin
        approve_use_case(store, RITA, "uc-1", 1, review_by=NEXT_YEAR, reason="reviewed")
    with pytest.raises(gov.ValidationFailed) as failed:
        approve_use_case(store, OLGA, "uc-1", 1, review_by=date(2020, 1, 1), reason=" ",
                         evidence_link="ftp://evidence")
    assert {p.column for p in failed.value.problems} == {"review_by", "reason", "evidence_link"}
    version = approve_use_case(store, OLGA, "uc-1", 1, review_by=NEXT_YEAR, reason="DPIA signed",
                               evidence_link="https://intranet.example/dpia/17", evidence_hash="sha256:ab12")
    row = _row(store, "uc-1")
    assert version == 2 and row["row_version"] == 2
    assert (row["status"], row["approved_by"], row["review_by"], row["evidence_link"], row["evidence_hash"]) == (
        "approved", "olga", NEXT_YEAR, "https://intranet.example/dpia/17", "sha256:ab12")
    (approved,) = _events(store, "use_case.approve", "uc-1")
    assert approved[0] == "olga" and json.loads(approved[2])["reason"] == "DPIA signed"
    with pytest.raises(StaleEdit):  # approving what one read at an older version
        approve_use_case(store, OLGA, "uc-1", 1, review_by=NEXT_YEAR, reason="again")


def test_whoever_made_the_last_change_does_not_approve_it(store):
    _insert(store, OLGA, _use_case("uc-1", owner="somebody else"))
    with pytest.raises(FourEyesViolation, match="olga made the last change"):
        approve_use_case(store, OLGA, "uc-1", 1, review_by=NEXT_YEAR, reason="I wrote it")
    assert approve_use_case(store, ADA, "uc-1", 1, review_by=NEXT_YEAR, reason="read and agreed") == 2


def test_a_persons_import_rejects_the_rows_that_would_approve_and_saves_the_others(store):
    frame = pd.DataFrame([_use_case("uc-1"),
                          _use_case("uc-2", owner="carol", status="approved", approved_by="olga",
                                    review_by=str(NEXT_YEAR)),
                          _use_case("uc-3", status="suspended")])
    result = gov.import_register(store, RITA, "usecases", frame)
    assert (result.inserted, result.rejected_rows) == (2, 1)
    assert {(p.row, p.column) for p in result.rejected} == {(2, "approved_by"), (2, "status")}
    assert gov.list_use_cases(store)["use_case_id"].tolist() == ["uc-1", "uc-3"]


def test_a_viewer_may_not_edit_the_register(store):
    with pytest.raises(PermissionDenied):
        _insert(store, VIC, _use_case("uc-1"))
    assert store.scalar("SELECT count(*) FROM use_case_register") == 0
