"""Formal review of block answers (register/console/risk_acceptance.py, migration 036; issue 33, item 2).

A block answer is released only by a risk acceptance one reviewer proposes and another approves; it is bound to
the score state and re-opened by a new revision, a changed decision or its expiry. The queue is read through
``review_queue`` / ``queue_stats`` (the one definition the overview shares), the audit trail through its search.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from register import SYSTEM, Actor, NotFound, StaleEdit
from register.console.answer_life import answer_events
from register.console.queries.filters import Filters
from register.console.queries.overview import kpis
from register.console.review import queue_stats, record_decision, review_queue
from register.console.risk_acceptance import (
    MAX_DAYS,
    acceptances,
    approve_acceptance,
    claims_hash,
    propose_acceptance,
    reject_acceptance,
)
from register.db.audit import EventFilter, search_events, verify_chain
from register.errors import FourEyesViolation, InvalidDecision, PermissionDenied
from register.scoring.profiles import activate, create_draft, get_profile
from register.scoring.scorer import rescore
from tests.helpers.actors import enrol
from tests.helpers.console_records import dataset, load

RITA = Actor("Rita Reviewer", "reviewer")
ROB = Actor("Rob Reviewer", "reviewer")
ANNA = Actor("Anna Annotator", "annotator")
NOW = datetime(2027, 2, 1, 12, 0, tzinfo=UTC)
UNTIL = NOW.date() + timedelta(days=30)
BLOCKED = "hc-crit"  # CONTRADICTED at criticality 3: decided block


@pytest.fixture
def loaded(store, tmp_path):
    enrol(store, RITA, ROB, ANNA)
    load(store, tmp_path, dataset())
    return store


def _queued(store, now=NOW) -> set[str]:
    frame, total = review_queue(store, Filters(), limit=1000, now=now)
    assert total == len(frame) == queue_stats(store, now=now)["size"] == kpis(store, Filters(), now=now)["queue_size"]
    return set(frame["response_id"])


def _decision(store, rid: str) -> str:
    return store.scalar("SELECT decision FROM scores WHERE response_id = ? AND is_current", [rid])


def _accepted(store, release="release_with_caution") -> int:
    acceptance = propose_acceptance(store, RITA, BLOCKED, 1, release, "contract owner accepts", UNTIL, now=NOW)
    approve_acceptance(store, ROB, acceptance, "agreed with legal", now=NOW)
    return acceptance


def test_one_reviewer_cannot_release_a_block_answer(loaded):
    store = loaded
    assert _decision(store, BLOCKED) == "block"
    for release in ("release", "release_with_caution"):
        with pytest.raises(InvalidDecision, match="formal review") as error:
            record_decision(store, RITA, BLOCKED, 1, release, "looks fine to me")
        assert error.value.field == "decision"
    assert BLOCKED in _queued(store)
    # one reviewer may still keep it blocked
    record_decision(store, RITA, BLOCKED, 1, "block", "confirmed wrong")
    assert BLOCKED not in _queued(store)


def test_two_reviewers_accept_the_risk_and_the_answer_leaves_the_queue(loaded):
    store = loaded
    before = _queued(store)
    acceptance = propose_acceptance(store, RITA, BLOCKED, 1, "release_with_caution", "contract owner accepts",
                                    UNTIL, now=NOW)
    assert _queued(store) == before  # a proposal alone changes nothing
    with pytest.raises(FourEyesViolation):
        approve_acceptance(store, RITA, acceptance, now=NOW)
    with pytest.raises(PermissionDenied):
        approve_acceptance(store, ANNA, acceptance, now=NOW)
    approve_acceptance(store, ROB, acceptance, "agreed with legal", now=NOW)
    assert _queued(store) == before - {BLOCKED}
    assert _decision(store, BLOCKED) == "block"  # the decision stays what the score says
    row = acceptances(store, response_id=BLOCKED, now=NOW).iloc[0]
    assert (row["status"], row["proposed_by"], row["decided_by"], row["state"]) == (
        "accepted", RITA.name, ROB.name, f"in force until {UNTIL}")
    score = store.one("SELECT profile_version, run_id, score FROM scores WHERE response_id = ? AND is_current",
                      [BLOCKED])
    assert (row["profile_version"], row["run_id"], row["score_at"], row["decision_at"]) == (
        score["profile_version"], score["run_id"], score["score"], "block")
    assert row["claims_hash"] == claims_hash(store, BLOCKED, 1) and len(row["claims_hash"]) == 64
    events, _ = search_events(store, EventFilter(entity_type="risk_acceptance", entity_id=str(acceptance)))
    # the refused approvals (four eyes, the annotator's role) are in the trail too
    assert sorted(e["action"] for e in events.to_dict("records")) == [
        "denied", "denied", "risk_acceptance.approve", "risk_acceptance.propose"]
    assert verify_chain(store).ok
    life, _ = answer_events(store, BLOCKED)
    assert {"risk_acceptance.propose", "risk_acceptance.approve"} <= set(life["action"])


def test_an_annotator_cannot_propose_and_the_register_refuses_what_makes_no_sense(loaded):
    store = loaded
    with pytest.raises(PermissionDenied):
        propose_acceptance(store, ANNA, BLOCKED, 1, "release", "why not", UNTIL, now=NOW)
    bad = [({"release": "block"}, "release"), ({"reason": "  "}, "reason"),
           ({"expires_on": NOW.date()}, "expires_on"),
           ({"expires_on": NOW.date() + timedelta(days=MAX_DAYS + 1)}, "expires_on"),
           ({"expires_on": NOW}, "expires_on")]
    for change, field in bad:
        args = {"release": "release", "reason": "ok", "expires_on": UNTIL, **change}
        with pytest.raises(InvalidDecision) as error:
            propose_acceptance(store, RITA, BLOCKED, 1, args["release"], args["reason"], args["expires_on"], now=NOW)
        assert error.value.field == field
    with pytest.raises(NotFound):
        propose_acceptance(store, RITA, "no-such-answer", 1, "release", "ok", UNTIL, now=NOW)
    not_block = store.scalar("SELECT response_id FROM scores WHERE is_current AND decision = 'review' LIMIT 1")
    with pytest.raises(InvalidDecision, match="not block"):
        propose_acceptance(store, RITA, not_block, 1, "release", "ok", UNTIL, now=NOW)
    propose_acceptance(store, RITA, BLOCKED, 1, "release", "ok", UNTIL, now=NOW)
    with pytest.raises(StaleEdit, match="already has risk acceptance"):
        propose_acceptance(store, ROB, BLOCKED, 1, "release", "me too", UNTIL, now=NOW)
    assert store.scalar("SELECT count(*) FROM risk_acceptances") == 1


def test_a_rejected_or_withdrawn_proposal_leaves_the_answer_queued(loaded):
    store = loaded
    first = propose_acceptance(store, RITA, BLOCKED, 1, "release", "ok", UNTIL, now=NOW)
    with pytest.raises(InvalidDecision):
        reject_acceptance(store, ROB, first, " ", now=NOW)
    reject_acceptance(store, ROB, first, "legal disagrees", now=NOW)
    with pytest.raises(StaleEdit, match="already rejected"):
        approve_acceptance(store, ROB, first, now=NOW)
    second = propose_acceptance(store, RITA, BLOCKED, 1, "release", "again", UNTIL, now=NOW)
    reject_acceptance(store, RITA, second, "withdrawn: wrong answer", now=NOW)  # its proposer withdraws it
    assert BLOCKED in _queued(store)
    assert list(acceptances(store, response_id=BLOCKED, now=NOW)["state"]) == ["rejected", "rejected"]


def test_the_expiry_reopens_an_acceptance(loaded):
    store = loaded
    _accepted(store)
    assert BLOCKED not in _queued(store, now=datetime.combine(UNTIL, datetime.min.time(), UTC))
    after = datetime.combine(UNTIL + timedelta(days=1), datetime.min.time(), UTC)
    assert BLOCKED in _queued(store, now=after)
    assert acceptances(store, response_id=BLOCKED, now=after).iloc[0]["state"] == f"re-opened: expired on {UNTIL}"


def test_a_new_revision_reopens_an_acceptance_and_stales_a_proposal(loaded, tmp_path):
    store = loaded
    _accepted(store)
    changed = next(r for r in dataset() if r["response_id"] == BLOCKED)
    changed = {**changed, "answer": "Unlimited liability, as agreed."}
    load(store, tmp_path, [changed], name="revision.jsonl")
    assert store.scalar("SELECT revision FROM responses WHERE response_id = ? AND is_current", [BLOCKED]) == 2
    assert _decision(store, BLOCKED) == "block"
    assert BLOCKED in _queued(store)
    assert acceptances(store, response_id=BLOCKED, now=NOW).iloc[0]["state"] == "re-opened: a new revision is current"
    with pytest.raises(NotFound):
        approve_acceptance(store, ROB, 999, now=NOW)


def test_a_proposal_is_not_approved_on_a_score_that_changed(loaded, tmp_path):
    store = loaded
    acceptance = propose_acceptance(store, RITA, BLOCKED, 1, "release", "ok", UNTIL, now=NOW)
    changed = {**next(r for r in dataset() if r["response_id"] == BLOCKED), "answer": "Changed."}
    load(store, tmp_path, [changed], name="revision.jsonl")
    with pytest.raises(StaleEdit, match="not the current one"):
        approve_acceptance(store, ROB, acceptance, now=NOW)
    fresh = propose_acceptance(store, RITA, BLOCKED, 2, "release", "ok", UNTIL, now=NOW)
    rescore(store, SYSTEM, get_profile(store, store.scalar(
        "SELECT profile_version FROM scores WHERE response_id = ? AND is_current", [BLOCKED])))
    with pytest.raises(StaleEdit, match="score run"):
        approve_acceptance(store, ROB, fresh, now=NOW)


def test_a_rescore_that_changes_the_decision_reopens_it_and_one_that_does_not_keeps_it(loaded):
    store = loaded
    _accepted(store)
    version = store.scalar("SELECT profile_version FROM scores WHERE response_id = ? AND is_current", [BLOCKED])
    rescore(store, SYSTEM, get_profile(store, version))  # same decision, a new run: still in force
    assert BLOCKED not in _queued(store)
    # a profile under which nothing is blocked: no floors, and the top band asks for review
    profile = get_profile(store, version).model_dump(mode="json")
    bands = [{**band, "action": "review" if band["action"] == "block" else band["action"]}
             for band in profile["bands"]]
    lenient = create_draft(store, SYSTEM, {"bands": bands, "floors": []})
    activate(store, SYSTEM, lenient, "test: nothing blocks")
    rescore(store, SYSTEM, get_profile(store, lenient))
    assert _decision(store, BLOCKED) == "review"
    assert BLOCKED in _queued(store)
    assert acceptances(store, response_id=BLOCKED, now=NOW).iloc[0]["state"] == \
        "re-opened: the decision is now review"
    # and one reviewer now decides it, as any review answer
    record_decision(store, RITA, BLOCKED, 1, "release", "under the new profile a review answer")
    assert BLOCKED not in _queued(store)


def test_proposal_date_checks_use_the_day_of_now(loaded):
    store = loaded
    tomorrow = NOW.date() + timedelta(days=1)
    acceptance = propose_acceptance(store, RITA, BLOCKED, 1, "release", "one day", tomorrow, now=NOW)
    later = NOW + timedelta(days=2)
    with pytest.raises(StaleEdit, match="expired"):
        approve_acceptance(store, ROB, acceptance, now=later)
    assert acceptances(store, now=NOW).iloc[0]["status"] == "proposed"
