"""The review queue and reviewers' decisions (register/console/review.py, migration 002).

Expected queues are computed in Python from the records (scored with ``hri_core.score_response``)
and the stored import times; decisions are checked in the tables, the audit trail and the
``known_outcomes`` view.
"""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from register import SYSTEM, Actor, NotFound, RegisterError, StaleEdit, Store
from register.console.queries.filters import Filters
from register.console.queries.overview import kpis
from register.console.review import DECISIONS, OUTCOMES, decisions_for, queue_stats, record_decision, review_queue
from register.db.audit import EventFilter, search_events, verify_chain
from register.errors import InvalidDecision
from register.ingest.importer import import_path
from register.scoring.profiles import activate, active_profile, create_draft, get_profile
from register.scoring.scorer import rescore
from tests.helpers.actors import enrol
from tests.helpers.console_records import claim, dataset, expected_rows, handmade_records, load, select, write_jsonl

REVIEWER = Actor("Rita Reviewer", "reviewer")
LEAD = Actor("Lars Lead", "admin")

@pytest.fixture
def store(store):
    """The shared register, with accounts for this module's actors (the register re-reads them on every write)."""
    enrol(store, REVIEWER, LEAD)
    return store

NOW = datetime(2027, 2, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def loaded(store, tmp_path):
    records = dataset()
    load(store, tmp_path, records)
    return store, expected_rows(records, active_profile(store), store)


def _imported_at(store: Store) -> dict[str, datetime]:
    return dict(store.query("SELECT response_id, imported_at FROM responses WHERE is_current"))


def expected_queue(store: Store, rows, f: Filters | None = None, decided=frozenset()):
    """The queue in Python: decided review or block (hri_core's decision), not decided by a reviewer; oldest
    first."""
    f = f or Filters()
    imported = _imported_at(store)
    queued = [r for r in select(rows, f)
              if r.decision in ("review", "block") and r.response_id not in decided]
    moment = {r.response_id: r.created_at or imported[r.response_id] for r in queued}
    return sorted(queued, key=lambda r: (moment[r.response_id], imported[r.response_id], r.response_id)), moment


def test_the_queue_holds_every_answer_decided_review_or_block_oldest_first(loaded):
    store, rows = loaded
    want, moment = expected_queue(store, rows)
    assert {r.decision for r in want} == {"review", "block"} and any(r.no_claims for r in want)
    assert any(r.action in ("release", "caution") for r in want)  # queued by the mitigation, not the band
    frame, total = review_queue(store, Filters(), limit=1000, now=NOW)
    assert total == len(want)
    assert list(frame.columns) == ["response_id", "revision", "use_case", "model", "created_at", "score", "band",
                                   "action", "no_claims", "decision", "decision_reasons", "mitigation_action",
                                   "age_days", "why"]
    assert list(frame["response_id"]) == [r.response_id for r in want]
    for rid, age, why, decision, reasons in frame[["response_id", "age_days", "why", "decision",
                                                   "decision_reasons"]].itertuples(index=False):
        row = next(r for r in want if r.response_id == rid)
        assert age == pytest.approx((NOW - moment[rid]).total_seconds() / 86400, abs=1e-6)
        assert (decision, tuple(reasons)) == (row.decision, row.decision_reasons)
        assert why == f"decision {row.decision}: " + "; ".join(row.decision_reasons)
    assert set(frame.loc[frame["response_id"] == "hc-crit", "decision"]) == {"block"}
    # the undated response is aged from its import time
    undated = frame.loc[frame["response_id"] == "hc-nodate-high", "age_days"].item()
    assert undated == pytest.approx((NOW - _imported_at(store)["hc-nodate-high"]).total_seconds() / 86400, abs=1e-6)


def test_queue_pages_and_filters(loaded):
    store, rows = loaded
    everything, _ = review_queue(store, Filters(), limit=1000, now=NOW)
    first, total = review_queue(store, Filters(), limit=4, offset=0, now=NOW)
    second, _ = review_queue(store, Filters(), limit=4, offset=4, now=NOW)
    assert list(first["response_id"]) + list(second["response_id"]) == list(everything["response_id"][:8])
    assert total == len(everything) > 8
    f = Filters(use_cases=("supplier-contracts",), date_from=date(2026, 6, 1))
    want, _ = expected_queue(store, rows, f)
    frame, size = review_queue(store, f, limit=1000, now=NOW)
    assert list(frame["response_id"]) == [r.response_id for r in want] and size == len(want) < total
    with pytest.raises(ValueError):
        review_queue(store, Filters(), limit=-1)


def test_queue_stats_agree_with_kpis_and_the_queue(loaded):
    store, rows = loaded
    want, moment = expected_queue(store, rows)
    stats = queue_stats(store, now=NOW)
    assert stats["size"] == len(want)
    assert stats["oldest_age_days"] == pytest.approx((NOW - min(moment.values())).total_seconds() / 86400, abs=1e-6)
    headline = kpis(store, Filters(), now=NOW)
    assert (headline["queue_size"], headline["queue_oldest_age_days"]) == (stats["size"], stats["oldest_age_days"])
    f = Filters(models=("rag-v4",))
    headline = kpis(store, f, now=NOW)
    assert (headline["queue_size"], headline["queue_oldest_age_days"]) == tuple(queue_stats(store, f, now=NOW).values())
    assert headline["queue_size"] == review_queue(store, f, now=NOW)[1] == len(expected_queue(store, rows, f)[0])


def test_an_empty_queue(store):
    assert queue_stats(store) == {"size": 0, "oldest_age_days": None}
    frame, total = review_queue(store, Filters())
    assert frame.empty and total == 0


def test_a_decision_leaves_the_queue_is_audited_and_becomes_a_known_outcome(loaded):
    store, rows = loaded
    target = review_queue(store, Filters(), limit=1, now=NOW)[0].iloc[0]
    rid, revision = target["response_id"], int(target["revision"])
    size = queue_stats(store)["size"]
    events = store.query_one("SELECT count(*) FROM audit_events")[0]

    decision_id = record_decision(store, REVIEWER, rid, revision, "block", "  Contradicts the signed contract.  ")

    assert queue_stats(store)["size"] == size - 1
    assert rid not in set(review_queue(store, Filters(), limit=1000)[0]["response_id"])
    decisions = decisions_for(store, rid)
    assert list(decisions["decision_id"]) == [decision_id]
    row = decisions.iloc[0]
    assert (row["decision"], row["reason"], row["decided_by"], row["decided_role"]) == (
        "block", "Contradicts the signed contract.", REVIEWER.name, REVIEWER.role)
    assert row["score_at_decision"] == pytest.approx(target["score"])
    assert (row["band_at_decision"], row["action_at_decision"], row["profile_version"]) == (
        target["band"], target["action"], 1)
    audit = store.query("SELECT actor_name, actor_role, action, entity_type, entity_id, before, after "
                        "FROM audit_events WHERE seq > ? ORDER BY seq", [events])
    assert len(audit) == 1
    name, role, action, entity_type, entity_id, before, after = audit[0]
    assert (name, role, action, entity_type, entity_id) == (REVIEWER.name, REVIEWER.role, "review.decide",
                                                            "response", rid)
    assert f'"decision_id":{decision_id}' in after
    assert '"decision":null' in before and '"queued":true' in before
    assert '"decision":"block"' in after and '"outcome":"bad"' in after and REVIEWER.name in after
    assert verify_chain(store).ok
    assert store.query("SELECT response_id, revision, outcome, source FROM known_outcomes") == [
        (rid, revision, "bad", "review")]


@pytest.mark.parametrize("decision, outcome", [
    ("release", "good"), ("release_with_caution", "good"), ("block", "bad"), ("send_back", "bad"),
    ("escalate", None), ("ask", "bad"), ("abstain", "bad")])
def test_known_outcomes_map_each_decision(loaded, decision, outcome):
    store, _ = loaded
    rid = review_queue(store, Filters(), limit=1)[0]["response_id"].item()
    record_decision(store, LEAD, rid, 1, decision, "checked against the source")
    # an escalation passes the answer on without judging it: no outcome (it used to count as bad)
    expected = [] if outcome is None else [(outcome, "review", "review_decision")]
    assert store.query("SELECT outcome, source, kind FROM known_outcomes WHERE response_id = ?", [rid]) == expected
    assert set(DECISIONS) == {"release", "release_with_caution", "block", "send_back", "escalate", "ask", "abstain"}
    assert OUTCOMES[decision] == outcome  # the view and the module say the same


@pytest.mark.parametrize("reason", ["", "   \n\t", None])
def test_a_decision_needs_a_reason(loaded, reason):
    store, _ = loaded
    events = store.query_one("SELECT count(*) FROM audit_events")[0]
    with pytest.raises(InvalidDecision) as caught:
        record_decision(store, REVIEWER, "hc-crit", 1, "block", reason)
    assert caught.value.field == "reason" and str(caught.value).startswith("reason:")
    assert isinstance(caught.value, ValueError) and isinstance(caught.value, RegisterError)
    assert store.query_one("SELECT count(*) FROM review_decisions")[0] == 0
    assert store.query_one("SELECT count(*) FROM audit_events")[0] == events


@pytest.mark.parametrize("decision", ["approve", "BLOCK", "block'; DROP TABLE review_decisions; --", ""])
def test_unknown_decisions_are_refused(loaded, decision):
    store, _ = loaded
    with pytest.raises(InvalidDecision) as caught:
        record_decision(store, REVIEWER, "hc-crit", 1, decision, "a reason")
    assert caught.value.field == "decision"
    assert store.query_one("SELECT count(*) FROM review_decisions")[0] == 0


def test_a_second_decision_on_the_same_revision_is_refused(loaded):
    store, _ = loaded
    record_decision(store, REVIEWER, "hc-crit", 1, "block", "wrong liability cap")
    with pytest.raises(StaleEdit, match=r"already decided by Rita Reviewer .* at \d{4}-\d\d-\d\d .*reload"):
        record_decision(store, LEAD, "hc-crit", 1, "release", "looks fine to me")
    assert list(decisions_for(store, "hc-crit")["decision"]) == ["block"]


def test_decisions_on_unknown_responses_are_refused(loaded):
    store, _ = loaded
    with pytest.raises(NotFound):
        record_decision(store, REVIEWER, "no-such-response", 1, "release", "fine")
    with pytest.raises(NotFound):
        record_decision(store, REVIEWER, "hc-crit", 7, "release", "fine")
    with pytest.raises(InvalidDecision) as caught:
        record_decision(store, REVIEWER, "hc-crit", 0, "release", "fine")
    assert caught.value.field == "revision"


def test_a_new_revision_of_a_decided_response_is_queued_again(loaded, tmp_path):
    store, _ = loaded
    record_decision(store, REVIEWER, "hc-nodate-high", 1, "send_back", "the SLA hours are wrong")
    assert "hc-nodate-high" not in set(review_queue(store, Filters(), limit=1000)[0]["response_id"])
    revised = next(r for r in handmade_records() if r["response_id"] == "hc-nodate-high")
    revised = {**revised, "answer": "Support is 24/7, with a weekend hotline.",
               "claims": [claim("The SLA includes 24/7 support.", ["CONTRADICTED"], 3),
                          claim("There is a weekend hotline.", ["UNSUPPORTED"], 1)]}
    import_path(store, SYSTEM, write_jsonl(tmp_path / "revised.jsonl", [revised]))
    queue = review_queue(store, Filters(), limit=1000)[0].set_index("response_id")
    assert queue.loc["hc-nodate-high", "revision"] == 2 and queue.loc["hc-nodate-high", "action"] == "review"
    # the old revision's decision stands, and a decision on it now is stale
    with pytest.raises(StaleEdit, match="already decided"):
        record_decision(store, LEAD, "hc-nodate-high", 1, "release", "fine")
    record_decision(store, LEAD, "hc-nodate-high", 2, "release_with_caution", "hotline confirmed by phone")
    assert "hc-nodate-high" not in set(review_queue(store, Filters(), limit=1000)[0]["response_id"])
    decided = decisions_for(store, "hc-nodate-high")
    assert list(zip(decided["revision"], decided["decision"], strict=True)) == [
        (1, "send_back"), (2, "release_with_caution")]
    assert store.query("SELECT revision, outcome FROM known_outcomes WHERE response_id = 'hc-nodate-high' "
                       "ORDER BY revision") == [(1, "bad"), (2, "good")]


def test_a_revision_replaced_before_the_decision_is_stale(loaded, tmp_path):
    store, _ = loaded
    revised = {**next(r for r in handmade_records() if r["response_id"] == "hc-crit"), "answer": "Changed."}
    import_path(store, SYSTEM, write_jsonl(tmp_path / "revised.jsonl", [revised]))
    with pytest.raises(StaleEdit, match="no longer current .*revision 2.*reload"):
        record_decision(store, REVIEWER, "hc-crit", 1, "block", "wrong cap")
    assert store.query_one("SELECT count(*) FROM review_decisions")[0] == 0


def test_a_decided_low_risk_response_never_enters_the_queue(loaded):
    store, rows = loaded
    low = next(r for r in rows if r.decision in ("release", "caution") and r.action == "release")
    size = queue_stats(store)["size"]
    record_decision(store, REVIEWER, low.response_id, 1, "release", "spot check")
    assert queue_stats(store)["size"] == size
    assert decisions_for(store, low.response_id)["action_at_decision"].item() == "release"


def test_migration_002_is_recorded_once_and_constrains_decisions(store):
    path = store.path
    store.close()
    reopened = Store(path)
    try:
        assert reopened.applied_migrations == []
        migrations = reopened.query("SELECT version, name FROM schema_migrations ORDER BY version")
        assert migrations[1] == (2, "002_review.sql")
        with pytest.raises(Exception, match="(?i)constraint"):
            reopened.query("INSERT INTO review_decisions (decision_id, response_id, revision, decision, reason, "
                           "decided_by, decided_role, decided_at) VALUES (1, 'r', 1, 'approve', 'x', 'a', 'b', now())")
        with pytest.raises(Exception, match="(?i)constraint"):
            reopened.query("INSERT INTO review_decisions (decision_id, response_id, revision, decision, reason, "
                           "decided_by, decided_role, decided_at) VALUES (1, 'r', 1, 'block', '  ', 'a', 'b', now())")
    finally:
        reopened.close()



def test_no_claims_is_queued_whatever_action_the_profile_gives_it(loaded):
    store, _ = loaded
    version = create_draft(store, SYSTEM, {"no_claims_action": "caution"})
    activate(store, SYSTEM, version, "test: no-claims answers get caution")
    rescore(store, SYSTEM, get_profile(store, version))
    frame = review_queue(store, Filters(), limit=1000)[0].set_index("response_id")
    # the band's action is the profile's caution; the mitigation (no claims: nothing was checked) asks for a person
    assert frame.loc["hc-noclaims", "action"] == "caution"
    assert frame.loc["hc-noclaims", "decision"] == "review"
    assert frame.loc["hc-noclaims", "why"].startswith("decision review: no claims: caution; mitigation escalate")
    assert list(frame.loc["hc-noclaims", "decision_reasons"])[0].endswith(": caution")


def test_a_decision_is_found_in_the_audit_trail_by_its_response_id(loaded):
    store, _ = loaded
    rid = review_queue(store, Filters(), limit=1, now=NOW)[0].iloc[0]["response_id"]
    decision_id = record_decision(store, REVIEWER, rid, 1, "release", "Checked against the contract.")
    found, total = search_events(store, EventFilter(entity_id=rid))
    assert total == 1 and list(found["action"]) == ["review.decide"]
    assert f'"decision_id":{decision_id}' in found.iloc[0]["after"]
