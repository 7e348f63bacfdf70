"""Nothing lowers risk unseen (issue 33, item 3): a confirmation that would lower an answer's decision waits as a
pending label change; the answer keeps its labels and stays in the review queue, marked; a second person with
review permission approves it (four eyes, refused and audited otherwise) or rejects it with a reason."""

from __future__ import annotations

import pytest

from register.console.queries.filters import Filters
from register.console.queries.queue import flag_queued
from register.console.review import review_queue
from register.db.sql import Params
from register.errors import FourEyesViolation, PermissionDenied, RegisterError
from register.ingest.approvals import approve_change, reject_change
from register.ingest.pending import PENDING_MARK, list_pending
from register.scoring.preview import decision_of
from register.scoring.reproduce import load_response
from register.verify.proposals import Decision, decide_proposals, list_proposals
from register.verify.stored import verify_stored
from tests.helpers.actors import ANNOTATOR, REVIEWER, enrol
from tests.helpers.feedback import import_records
from tests.register.verify.test_judge_never_overwrites import AbstainingJudge

CONTRADICTED = {"response_id": "r-low", "question": "When is the office open?", "use_case": "facilities",
                "created_at": "2026-10-01T08:00:00Z", "answer": "The office is open on Sundays.",
                "claims": [{"claim_id": "o1", "text": "The office is open on Sundays.", "labels": ["CONTRADICTED"],
                            "criticality": 3, "contradicted_by": "world"}]}


@pytest.fixture
def held(store, tmp_path):
    """r-low verified by a reviewer; an annotator confirms SUPPORTED on its CONTRADICTED claim."""
    enrol(store, REVIEWER)
    import_records(store, tmp_path, [CONTRADICTED], "low.jsonl")
    verify_stored(store, REVIEWER, ["r-low"], AbstainingJudge())
    (proposal,) = list_proposals(store, response_id="r-low")
    result = decide_proposals(store, ANNOTATOR, [Decision(proposal["proposal_id"], "confirm", label="SUPPORTED")])
    return store, result


def _labels(store):
    return store.scalar("SELECT labels FROM claims WHERE is_current AND response_id = 'r-low'")


def _queued(store):
    p = Params()
    return store.one(f"WITH fr AS (SELECT * FROM current_scores), q AS ({flag_queued(p)}) "
                     "SELECT queued FROM q WHERE response_id = 'r-low'", p.values)["queued"]


def test_a_confirmation_that_lowers_the_decision_waits_and_the_answer_stays_queued(held):
    store, result = held
    assert _labels(store) == ["CONTRADICTED"] and result["batch_id"] is None and len(result["held"]) == 1
    (change,) = list_pending(store)
    assert (change["response_id"], change["origin"], change["proposed_by"], change["status"]) == \
        ("r-low", "verification", ANNOTATOR.name, "pending")
    assert change["decision_before"] in ("review", "block") and change["decision_after"] in ("release", "caution")
    assert _queued(store)
    assert store.scalar("SELECT count(*) FROM audit_events WHERE action = 'label_change.hold'") == 1


def test_the_queue_says_first_that_a_change_is_pending(held):
    """The queue page's "Why in queue" cell shows the start of a long text (a browser showed the decision's reasons
    cut off before the mark): the mark comes first, then the decision and its reasons."""
    store, _ = held
    queue, _ = review_queue(store, Filters())
    why = dict(zip(queue["response_id"], queue["why"], strict=True))["r-low"]
    assert why.startswith(f"{PENDING_MARK}; decision review: "), why


def test_only_another_reviewer_approves_and_the_revision_then_lands(held):
    store, _ = held
    (change,) = list_pending(store)
    with pytest.raises(PermissionDenied):
        approve_change(store, ANNOTATOR, change["change_id"])
    revision = approve_change(store, REVIEWER, change["change_id"], "checked the opening hours")
    assert _labels(store) == ["SUPPORTED"] and revision == 2
    assert list_pending(store) == [] and list_pending(store, status="approved")[0]["decided_by"] == REVIEWER.name
    after = decision_of(store, load_response(store, "r-low"))
    assert after.decision == change["decision_after"]


def test_the_proposer_cannot_approve_their_own_change(held, tmp_path):
    store, _ = held
    (change,) = list_pending(store)
    # the reviewer proposes a lowering change of their own on a second answer
    import_records(store, tmp_path, [{**CONTRADICTED, "response_id": "r-low-2"}], "second.jsonl")
    verify_stored(store, REVIEWER, ["r-low-2"], AbstainingJudge())
    (proposal,) = list_proposals(store, response_id="r-low-2")
    result = decide_proposals(store, REVIEWER, [Decision(proposal["proposal_id"], "confirm", label="SUPPORTED")])
    with pytest.raises(FourEyesViolation):
        approve_change(store, REVIEWER, result["held"][0])
    assert store.scalar("SELECT count(*) FROM audit_events WHERE action = 'denied'") >= 1
    assert store.scalar("SELECT labels FROM claims WHERE is_current AND response_id = 'r-low-2'") == ["CONTRADICTED"]


def test_a_rejection_needs_a_reason_and_keeps_the_labels(held):
    store, _ = held
    (change,) = list_pending(store)
    with pytest.raises(RegisterError, match="reason"):
        reject_change(store, REVIEWER, change["change_id"], " ")
    reject_change(store, REVIEWER, change["change_id"], "the office is closed on Sundays")
    assert _labels(store) == ["CONTRADICTED"] and list_pending(store) == []
    assert list_pending(store, status="rejected")[0]["decision_note"] == "the office is closed on Sundays"


def test_a_change_that_raises_the_decision_lands_at_once(store, tmp_path):
    enrol(store, REVIEWER)
    supported = {k: v for k, v in CONTRADICTED["claims"][0].items() if k != "contradicted_by"}
    import_records(store, tmp_path, [{**CONTRADICTED, "claims": [{**supported, "labels": ["SUPPORTED"],
                                                                  "criticality": 1}]}], "up.jsonl")
    verify_stored(store, REVIEWER, ["r-low"], AbstainingJudge())
    (proposal,) = list_proposals(store, response_id="r-low")
    result = decide_proposals(store, ANNOTATOR, [Decision(proposal["proposal_id"], "confirm", label="CONTRADICTED",
                                                          criticality=3)])
    assert result["held"] == [] and result["batch_id"] is not None and _labels(store) == ["CONTRADICTED"]


def test_the_held_change_and_its_approval_are_part_of_the_answers_life(held):
    from register.console.answer_life import answer_events
    from register.db.audit import EventFilter

    store, _ = held
    (change,) = list_pending(store)
    approve_change(store, REVIEWER, change["change_id"], "checked the opening hours")
    life = answer_events(store, "r-low", EventFilter())[0]
    found = life[life["entity_type"] == "label_change"]
    assert found["action"].tolist() == ["label_change.hold", "label_change.approve"]
    assert set(found["entity_id"]) == {str(change["change_id"])}
