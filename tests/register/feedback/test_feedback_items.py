"""Validated feedback: reported -> validated by a second person -> resolved, as revisions of the response that
the scorer follows at any as-of time; four eyes; rejection; the labels validated outside the register."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime, timedelta

import pytest

from hri_core import score_response
from register import Actor
from register.db.audit import verify_chain
from register.errors import FourEyesViolation, InvalidFeedback, NotFound, PermissionDenied, StaleEdit
from register.feedback import items as fb
from register.governance.checks import run_checks
from register.scoring.profiles import active_profile
from register.scoring.reproduce import load_response, reproduce
from register.scoring.scorer import score_query
from tests.helpers.actors import enrol
from tests.helpers.feedback import Clock, import_records, two_claims

VERA = Actor("Vera Viewer", "viewer")
ADA = Actor("Ada Annotator", "annotator")
RITA = Actor("Rita Reviewer", "reviewer")
ROB = Actor("Rob Reviewer", "reviewer")

REPORTED = datetime(2026, 10, 5, 9, 0, tzinfo=UTC)
VALIDATED = datetime(2026, 10, 5, 15, 0, tzinfo=UTC)
RESOLVED = datetime(2026, 10, 15, 15, 0, tzinfo=UTC)


@pytest.fixture
def loaded(store, tmp_path, monkeypatch):
    """Response r1 (two supported claims), accounts for the named actors and a pinned clock for the feedback
    service."""
    enrol(store, VERA, ADA, RITA, ROB)
    import_records(store, tmp_path, [two_claims("r1"), two_claims("r2")])
    clock = Clock(REPORTED)
    monkeypatch.setattr(fb, "utc_now", clock)
    return store, clock


def _score_at(store, as_of: datetime) -> dict:
    """The SQL scorer's row for r1 (its current revision) at ``as_of``, and the fired floors' rule ids."""
    sql, params = score_query(active_profile(store), as_of)
    row = store.frame(sql, params).set_index("response_id").loc["r1"]
    reference = score_response(load_response(store, "r1"), active_profile(store), as_of)
    assert math.isclose(reference.hri, row["hri"], abs_tol=1e-9)  # the reference scorer agrees at this time
    return {"s_h": float(row["s_h"]), "hri": float(row["hri"]), "band": row["band"], "action": row["action"],
            "floors": sorted(f.rule_id for f in reference.floors)}


def _current_claim(store, claim_id: str) -> dict:
    return store.one("SELECT revision, labels, feedback_at, feedback_count, feedback_resolved FROM claims "
                     "WHERE response_id = 'r1' AND is_current AND claim_id = ?", [claim_id])


def test_reported_validated_by_a_second_person_resolved_and_the_score_follows_over_as_of_time(loaded):
    store, clock = loaded
    half_life = active_profile(store).feedback_half_life_days
    assert half_life == 30
    fid = fb.report_feedback(store, VERA, "r1", "Renewal needs a written notice, see clause 12.", 0.8, claim_id="c2")
    item = fb.feedback_item(store, fid)
    assert (item["state"], item["revision"], item["reported_by"], item["reported_at"]) == (
        "reported", 1, VERA.name, REPORTED)
    assert _current_claim(store, "c2")["revision"] == 1  # a report changes nothing scored

    clock.now = VALIDATED
    revision = fb.validate_feedback(store, RITA, fid, "source_check", severity=0.6, note="clause 12 says so")
    assert revision == 2
    claim = _current_claim(store, "c2")
    # confirmed wrong: SUPPORTED gives way (SUPPORTED stands alone: hri_core.vocabulary.LABEL_CONFLICTS)
    assert claim == {"revision": 2, "labels": ["VALIDATED_NEGATIVE_FEEDBACK"], "feedback_at": VALIDATED,
                     "feedback_count": 1, "feedback_resolved": False}
    item = fb.feedback_item(store, fid)
    assert (item["state"], item["validated_by"], item["validated_at"], item["validation_method"],
            item["validated_severity"], item["validated_claim_id"], item["validated_revision"]) == (
        "validated", RITA.name, VALIDATED, "source_check", 0.6, "c2", 2)

    # before validation the label did not exist yet: no H, no floor
    before = _score_at(store, VALIDATED - timedelta(days=1))
    assert (before["s_h"], before["hri"], before["floors"]) == (0.0, 0.0, [])
    # at validation: c2 (criticality 1 of 2) carries m = 1, s_H = 1/2; unresolved, so the feedback floor (0.50)
    at = _score_at(store, VALIDATED)
    assert at["s_h"] == pytest.approx(0.5) and at["floors"] == ["feedback-repeated-or-unresolved"]
    # a new register's profile carries Table IV's review rationale: the feedback floor asks for at least review
    assert at["hri"] == pytest.approx(0.5) and (at["band"], at["action"]) == ("Medium", "review")
    # one half-life later the contribution halves; the floor holds while the problem is unresolved
    later = _score_at(store, VALIDATED + timedelta(days=half_life))
    assert later["s_h"] == pytest.approx(0.25) and later["hri"] == pytest.approx(0.5)

    clock.now = RESOLVED
    assert fb.resolve_feedback(store, ROB, fid, "clause 12 added to the retrieval index") == 3
    assert _current_claim(store, "c2") == {"revision": 3, "labels": ["VALIDATED_NEGATIVE_FEEDBACK"],
                                           "feedback_at": VALIDATED, "feedback_count": 1, "feedback_resolved": True}
    resolved = _score_at(store, VALIDATED + timedelta(days=half_life))
    # resolved once: the floor no longer fires; the decayed H stays as its weighted part of HRI_add (0.10 * 0.25)
    assert resolved["floors"] == [] and resolved["s_h"] == pytest.approx(0.25)
    assert resolved["hri"] == pytest.approx(0.10 * 0.25) and resolved["band"] == "Low"
    item = fb.feedback_item(store, fid)
    assert (item["state"], item["resolved_by"], item["resolved_at"], item["resolution"], item["resolved_revision"]) \
        == ("resolved", ROB.name, RESOLVED, "clause 12 added to the retrieval index", 3)

    # every step is audited, the revisions came through the batch path, and the stored scores reproduce
    actions = [a for (a,) in store.query("SELECT action FROM audit_events WHERE action LIKE 'feedback.%' ORDER BY seq")]
    assert actions == ["feedback.report", "feedback.validate", "feedback.resolve"]
    assert store.query("SELECT format, source_name FROM import_batches WHERE format LIKE 'revision:%' "
                       "ORDER BY batch_id") == [
        ("revision:feedback", "feedback #1 validated on claim c2 of r1"),
        ("revision:feedback", "feedback #1 resolved on claim c2 of r1")]
    assert reproduce(store, "r1").matches and verify_chain(store).ok
    assert fb.outside_register(store).empty


def test_the_reporter_cannot_validate_or_reject_their_own_report_and_the_refusal_is_audited(loaded):
    store, _ = loaded
    fid = fb.report_feedback(store, RITA, "r1", "The year is wrong.", 0.5, claim_id="c1")
    for attempt in (lambda: fb.validate_feedback(store, RITA, fid, "review"),
                    lambda: fb.reject_feedback(store, RITA, fid, "not a problem")):
        with pytest.raises(FourEyesViolation, match="four eyes"):
            attempt()
    denied = store.query("SELECT actor_name, entity_type, entity_id, after FROM audit_events WHERE action = 'denied'")
    assert [(n, t, i) for n, t, i, _ in denied] == [(RITA.name, "feedback", str(fid))] * 2
    assert {json.loads(after)["permission"] for *_, after in denied} == {"feedback.validate"}
    assert fb.feedback_item(store, fid)["state"] == "reported"
    assert store.scalar("SELECT max(revision) FROM responses WHERE response_id = 'r1'") == 1
    fb.validate_feedback(store, ROB, fid, "review")  # a second person may
    assert fb.feedback_item(store, fid)["validated_by"] == ROB.name


def test_roles_anyone_signed_in_reports_only_reviewers_validate_and_resolve(loaded):
    store, _ = loaded
    fid = fb.report_feedback(store, VERA, "r1", "Looks wrong.", 0.3)
    with pytest.raises(PermissionDenied, match="may not feedback.validate"):
        fb.validate_feedback(store, ADA, fid, "review", claim_id="c1")
    with pytest.raises(PermissionDenied, match="may not feedback.validate"):
        fb.reject_feedback(store, ADA, fid, "no")
    with pytest.raises(PermissionDenied, match="x has no account"):  # not signed in: no account, no report
        fb.report_feedback(store, Actor("x", "viewer"), "r1", "text", 0.3)
    assert fb.feedback_item(store, fid)["state"] == "reported"


def test_a_rejected_report_changes_no_score_and_cannot_be_decided_again(loaded):
    store, _ = loaded
    fid = fb.report_feedback(store, ADA, "r1", "I prefer a shorter answer.", 0.2, claim_id="c1")
    with pytest.raises(InvalidFeedback, match="reason"):
        fb.reject_feedback(store, RITA, fid, "   ")
    fb.reject_feedback(store, RITA, fid, "a style preference, not an error")
    item = fb.feedback_item(store, fid)
    assert (item["state"], item["rejected_by"], item["rejection_reason"]) == (
        "rejected", RITA.name, "a style preference, not an error")
    with pytest.raises(StaleEdit, match="rejected"):
        fb.validate_feedback(store, ROB, fid, "review")
    with pytest.raises(StaleEdit, match="rejected"):
        fb.resolve_feedback(store, ROB, fid, "fixed")
    assert store.scalar("SELECT max(revision) FROM responses WHERE response_id = 'r1'") == 1
    assert list(fb.list_feedback(store, states=("rejected",)).feedback_id) == [fid]
    assert fb.list_feedback(store, states=("validated",)).empty


def test_a_report_on_the_whole_answer_is_validated_on_the_claim_the_validator_names(loaded):
    store, _ = loaded
    fid = fb.report_feedback(store, ADA, "r1", "The answer misstates the renewal terms.", 0.7)
    assert fb.feedback_item(store, fid)["claim_id"] is None
    with pytest.raises(InvalidFeedback, match="name the claim"):
        fb.validate_feedback(store, RITA, fid, "review")
    with pytest.raises(InvalidFeedback, match="no claim 'c9'"):
        fb.validate_feedback(store, RITA, fid, "review", claim_id="c9")
    assert fb.validate_feedback(store, RITA, fid, "adjudication", claim_id="c2") == 2
    assert "VALIDATED_NEGATIVE_FEEDBACK" in _current_claim(store, "c2")["labels"]
    assert _current_claim(store, "c1")["labels"] == ["SUPPORTED"]


def test_repeated_feedback_keeps_the_floor_until_every_item_is_resolved_and_then_by_its_count(loaded):
    store, clock = loaded
    first = fb.report_feedback(store, ADA, "r1", "Renewal is not automatic.", 0.5, claim_id="c2")
    second = fb.report_feedback(store, VERA, "r1", "Still says automatic renewal.", 0.9, claim_id="c2")
    clock.now = VALIDATED
    fb.validate_feedback(store, RITA, first, "review")
    fb.validate_feedback(store, RITA, second, "review")
    assert _current_claim(store, "c2")["feedback_count"] == 2
    # the first resolution leaves the second open: the claim stays unresolved, no revision is written
    assert fb.resolve_feedback(store, ROB, first, "prompt fixed") is None
    assert _current_claim(store, "c2")["feedback_resolved"] is False
    assert fb.resolve_feedback(store, ROB, second, "index rebuilt") == 4
    assert _current_claim(store, "c2")["feedback_resolved"] is True
    # repeated (count 2 >= the rule's minimum of 2): the paper's floor fires even when resolved
    assert _score_at(store, VALIDATED)["floors"] == ["feedback-repeated-or-unresolved"]


@pytest.mark.parametrize("field, kwargs, words", [
    ("severity", {"severity": 1.5}, "from 0 to 1"),
    ("severity", {"severity": float("nan")}, "from 0 to 1"),
    ("severity", {"severity": True}, "from 0 to 1"),
    ("text", {"text": "  "}, "say what is wrong"),
    ("text", {"text": "x" * (fb.MAX_TEXT + 1)}, "more than the limit"),
    ("claim_id", {"claim_id": "c7"}, "has no claim 'c7'"),
])
def test_a_bad_report_is_refused_naming_the_field_and_writes_nothing(loaded, field, kwargs, words):
    store, _ = loaded
    args = {"text": "wrong", "severity": 0.5, "claim_id": None, **kwargs}
    with pytest.raises(InvalidFeedback, match=words) as error:
        fb.report_feedback(store, ADA, "r1", args["text"], args["severity"], claim_id=args["claim_id"])
    assert error.value.field == field
    assert store.scalar("SELECT count(*) FROM feedback_items") == 0


def test_a_report_on_an_unknown_response_is_not_found(loaded):
    store, _ = loaded
    with pytest.raises(NotFound, match="'nope'"):
        fb.report_feedback(store, ADA, "nope", "wrong", 0.5)


def test_imported_feedback_labels_are_validated_outside_the_register_and_named_by_the_checklist(loaded, tmp_path):
    store, clock = loaded
    imported = two_claims("r-imported")
    imported["claims"][0].update(labels=["VALIDATED_NEGATIVE_FEEDBACK"], feedback_at="2026-09-01T00:00:00Z",
                                 feedback_count=1)
    import_records(store, tmp_path, [imported], name="with-feedback.jsonl")
    outside = fb.outside_register(store)
    assert outside[["response_id", "claim_id"]].values.tolist() == [["r-imported", "c1"]]
    check = run_checks(store)["checks"][6]
    assert check["status"] == "fail"
    assert [(f["entity_id"], f["label"]) for f in check["offending"]] == [("r-imported", "claim c1")]
    assert "validated outside the register" in check["offending"][0]["reason"]
    assert "1 current VALIDATED_NEGATIVE_FEEDBACK label(s) checked for a validation record" in check["note"]
    # feedback validated here is not outside the register
    fid = fb.report_feedback(store, ADA, "r1", "wrong", 0.5, claim_id="c1")
    clock.now = VALIDATED
    fb.validate_feedback(store, RITA, fid, "review")
    assert fb.outside_register(store).response_id.tolist() == ["r-imported"]


def test_a_past_time_is_the_systems_alone_and_follows_the_step_before(loaded):
    from register import SYSTEM

    store, clock = loaded
    past = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
    with pytest.raises(PermissionDenied, match="only the system records feedback at a past time"):
        fb.report_feedback(store, ADA, "r1", "wrong date", 0.5, claim_id="c1", at=past)
    assert store.scalar("SELECT count(*) FROM feedback_items") == 0
    denied = store.one("SELECT entity_type, after FROM audit_events WHERE action = 'denied' AND after LIKE "
                       "'%past time%'")
    assert denied["entity_type"] == "response"  # the report's own step and entity, not the validator's
    assert json.loads(denied["after"])["permission"] == "feedback.submit"
    with pytest.raises(InvalidFeedback, match="in the future"):
        fb.report_feedback(store, SYSTEM, "r1", "wrong date", 0.5, claim_id="c1",
                           at=REPORTED + timedelta(hours=1))  # the service's clock reads REPORTED
    with pytest.raises(InvalidFeedback, match="time zone"):
        fb.report_feedback(store, SYSTEM, "r1", "wrong date", 0.5, claim_id="c1", at=datetime(2026, 3, 1))
    fid = fb.report_feedback(store, SYSTEM, "r1", "wrong date", 0.5, claim_id="c1", at=past)
    other = Actor("history", "system")
    with pytest.raises(InvalidFeedback, match="before the step it follows"):
        fb.validate_feedback(store, other, fid, "review", at=past - timedelta(days=1))
    with pytest.raises(PermissionDenied):  # a person validates now, never at a given time
        fb.validate_feedback(store, RITA, fid, "review", at=past + timedelta(days=1))
    fb.validate_feedback(store, other, fid, "review", at=past + timedelta(days=1))
    item = fb.feedback_item(store, fid)
    assert (item["reported_at"], item["validated_at"]) == (past, past + timedelta(days=1))
    assert _current_claim(store, "c1")["feedback_at"] == past + timedelta(days=1)
