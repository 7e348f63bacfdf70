"""A feedback resolution that would lower the answer's decision is held for a second reviewer (issue 33, item 3):
the item stays validated until the change is approved, whose approval records the resolution with the revision it
stores; a rejection leaves the item open to resolve again (migration 037, ``register.ingest.approvals``)."""

from __future__ import annotations

import pytest

from register import Actor, StaleEdit
from register.feedback import items as fb
from register.ingest.approvals import approve_change, reject_change
from register.ingest.pending import list_pending
from tests.helpers.actors import enrol
from tests.helpers.feedback import import_records, two_claims

ADA, RITA, ROB, ROSA = (Actor("Ada Annotator", "annotator"), Actor("Rita Reviewer", "reviewer"),
                        Actor("Rob Reviewer", "reviewer"), Actor("Rosa Reviewer", "reviewer"))


def _decision(store) -> str:
    return store.scalar("SELECT decision FROM scores WHERE is_current AND response_id = 'r1'")


@pytest.fixture
def validated(store, tmp_path):
    """r1 at low stakes with a validated problem on c2: the feedback floor asks for review; resolved, the
    mitigation of a low-stakes answer asks for less, so resolving it would lower the decision."""
    enrol(store, ADA, RITA, ROB, ROSA)
    import_records(store, tmp_path, [{**two_claims("r1"), "stakes": "low"}])
    fid = fb.report_feedback(store, ADA, "r1", "Renewal is not automatic.", 0.8, claim_id="c2")
    fb.validate_feedback(store, RITA, fid, "review")
    assert _decision(store) == "review"
    return store, fid


def test_a_held_resolution_leaves_the_item_validated_until_it_is_approved(validated):
    store, fid = validated
    assert fb.resolve_feedback(store, ROB, fid, "renewal clause fixed in the index") is None
    (change,) = list_pending(store)
    # nothing resolved yet: the item, the claim and the decision are as they were
    assert fb.feedback_item(store, fid)["state"] == "validated"
    assert store.scalar("SELECT feedback_resolved FROM claims WHERE is_current AND claim_id = 'c2' "
                        "AND response_id = 'r1'") is False
    assert _decision(store) == "review"
    with pytest.raises(StaleEdit, match="already waits for a second reviewer"):
        fb.resolve_feedback(store, ROSA, fid, "me too")
    revision = approve_change(store, ROSA, change["change_id"], "checked the index")
    item = fb.feedback_item(store, fid)
    assert (item["state"], item["resolved_by"], item["resolution"], item["resolved_revision"]) == (
        "resolved", ROB.name, "renewal clause fixed in the index", revision)
    assert store.scalar("SELECT feedback_resolved FROM claims WHERE is_current AND claim_id = 'c2' "
                        "AND response_id = 'r1'") is True
    assert _decision(store) != "review"
    event = store.one("SELECT after FROM audit_events WHERE action = 'label_change.approve'")
    assert '"feedback_resolve"' in event["after"]


def test_a_rejected_resolution_leaves_the_item_open_to_resolve_again(validated):
    store, fid = validated
    fb.resolve_feedback(store, ROB, fid, "fixed, I think")
    (change,) = list_pending(store)
    reject_change(store, ROSA, change["change_id"], "the index still has the old clause")
    assert fb.feedback_item(store, fid)["state"] == "validated"
    assert fb.resolve_feedback(store, ROB, fid, "fixed now") is None  # held again, a new change
    assert len(list_pending(store)) == 1 and list_pending(store)[0]["change_id"] != change["change_id"]



def test_a_held_resolution_given_a_past_time_is_recorded_at_it_when_approved(store, tmp_path):
    """A history recorded after the fact (the system's ``at=``): the approval, whenever it comes, records the
    resolution at the time the history gave, not at the approval's."""
    from datetime import UTC, datetime

    enrol(store, ROSA)
    import_records(store, tmp_path, [{**two_claims("r1"), "stakes": "low"}])
    reporter, validator, resolver = (Actor(name, "system") for name in ("reporter", "validator", "resolver"))
    reported, validated, resolved = (datetime(2026, 8, day, 9, 0, tzinfo=UTC) for day in (3, 10, 17))
    fid = fb.report_feedback(store, reporter, "r1", "Renewal is not automatic.", 0.8, claim_id="c2", at=reported)
    fb.validate_feedback(store, validator, fid, "review", at=validated)
    assert _decision(store) == "review"
    assert fb.resolve_feedback(store, resolver, fid, "fixed upstream", at=resolved) is None  # held
    (change,) = list_pending(store)
    approve_change(store, ROSA, change["change_id"], "checked")
    item = fb.feedback_item(store, fid)
    assert (item["state"], item["resolved_by"], item["resolved_at"]) == ("resolved", "resolver", resolved)
