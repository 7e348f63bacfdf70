"""The register's own outcomes as the fit's input: the rows read set-based in DuckDB equal a recomputation in
Python (each answer's outcome from the raw decisions, feedback and imports; its dimension scores and fired floor
from ``hri_core.score_response`` of the stored revision), and the fit from them is the file path's fit."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from hri_core import score_response
from hri_core.outcome_fit import FitError, fit_weights, outcome_set
from hri_core.vocabulary import DIMENSIONS
from register.console.review import record_decision
from register.errors import RegisterError
from register.feedback import items as fb
from register.scoring import calibration as cal
from register.scoring.profiles import active_profile, get_profile
from register.scoring.register_outcomes import (
    SCORE_COLUMNS,
    compare_from_register,
    fit_from_register,
    register_outcomes,
)
from register.scoring.reproduce import load_response
from tests.helpers.actors import ANNOTATOR, REVIEWER, enrol
from tests.helpers.outcomes import import_scored_outcomes

BAD_DECISIONS = ("block", "send_back", "ask", "abstain")


def _current(store, rid):
    return store.scalar("SELECT revision FROM responses WHERE response_id = ? AND is_current", [rid])


def _released(store, n, offset=0):
    return [r for (r,) in store.query(
        "SELECT response_id FROM scores WHERE is_current AND action IN ('release', 'caution') AND NOT no_claims "
        "AND scoring_failure IS NULL AND response_id NOT IN (SELECT response_id FROM review_decisions) "
        "ORDER BY response_id LIMIT ? OFFSET ?", [n, offset])]  # not one the demo's reviewer decided


@pytest.fixture
def outcome_store(demo_store):
    """Every source of outcomes: review decisions (one an escalation: no outcome), an audit finding, validated
    feedback, imported outcomes of two kinds, one of them later than a decision on the same answer."""
    enrol(demo_store, REVIEWER, ANNOTATOR)
    picked = _released(demo_store, 12)
    for i, rid in enumerate(picked[:8]):
        decision = BAD_DECISIONS[i % 4] if i % 2 else "release"
        record_decision(demo_store, REVIEWER, rid, _current(demo_store, rid), decision, "checked")
    record_decision(demo_store, REVIEWER, picked[8], _current(demo_store, picked[8]), "escalate", "legal")
    cal.draw_audit_sample(demo_store, REVIEWER, 2, seed=3)
    sampled = [r for (r,) in demo_store.query("SELECT response_id FROM audit_sample_items ORDER BY response_id")]
    record_decision(demo_store, REVIEWER, sampled[0], _current(demo_store, sampled[0]), "block", "audit")
    claim = demo_store.scalar("SELECT claim_id FROM claims WHERE response_id = ? AND is_current ORDER BY claim_idx "
                              "LIMIT 1", [picked[9]])
    item = fb.report_feedback(demo_store, ANNOTATOR, picked[9], "the date is wrong", 0.9, claim_id=claim)
    fb.validate_feedback(demo_store, REVIEWER, item, "source_check")
    csv = f"response_id,outcome,kind\n{picked[0]},bad,incident\n{picked[10]},good,expert_adjudication\n"
    cal.import_outcomes_csv(demo_store, REVIEWER, csv.encode(), "o.csv")
    return demo_store


def _expected(store) -> pd.DataFrame:
    """The same rows recomputed in Python: outcome events read table by table, the latest per answer, each scored
    again from its stored revision under the profile and as-of time of its latest score row."""
    events = []
    sampled = {tuple(r) for r in store.query("SELECT response_id, revision FROM audit_sample_items")}
    for rid, rev, decision, at in store.query("SELECT response_id, revision, decision, decided_at FROM "
                                              "review_decisions"):
        if decision != "escalate" and rev == _current(store, rid):
            kind = "audit_finding" if (rid, rev) in sampled else "review_decision"
            events.append((rid, rev, int(decision in BAD_DECISIONS), kind, "review", at))
    for rid, rev, state, at in store.query("SELECT response_id, revision, state, validated_at FROM feedback_items"):
        if state in ("validated", "resolved"):
            events.append((rid, rev, 1, "confirmed_correction", "feedback", at))
    for rid, outcome, kind, at in store.query("SELECT o.response_id, o.outcome, o.kind, i.imported_at FROM "
                                              "imported_outcomes o JOIN outcome_imports i USING (import_id)"):
        events.append((rid, _current(store, rid), int(outcome == "bad"), kind, "import", at))
    latest: dict[str, tuple] = {}
    for event in events:
        if event[0] not in latest or event[5] > latest[event[0]][5]:
            latest[event[0]] = event
    rows = []
    for rid, rev, outcome, kind, source, _ in sorted(latest.values()):
        version, as_of = store.query_one("SELECT profile_version, as_of FROM scores WHERE response_id = ? AND "
                                         "revision = ? ORDER BY run_id DESC LIMIT 1", [rid, rev])
        result = score_response(load_response(store, rid, rev), get_profile(store, version), as_of)
        rows.append({"response_id": rid, "revision": rev, "source": source, "kind": kind, "outcome": outcome,
                     **{c: result.dimensions[d] for c, d in zip(SCORE_COLUMNS, DIMENSIONS, strict=True)},
                     "floor": max((f.value for f in result.floors), default=0.0)})
    return pd.DataFrame(rows)


def test_register_rows_equal_a_python_recomputation(outcome_store):
    data = register_outcomes(outcome_store)
    expected = _expected(outcome_store)
    assert set(expected["source"]) == {"review", "feedback", "import"}
    assert {"review_decision", "audit_finding", "confirmed_correction", "incident",
            "expert_adjudication"} <= set(expected["kind"])
    got = data.rows.drop(columns=["as_of"])
    pd.testing.assert_frame_equal(got.reset_index(drop=True), expected[list(got.columns)], check_dtype=False,
                                  atol=1e-9, rtol=0)
    assert data.left_out == {"unscored": 0, "scoring_failure": 0}
    assert data.kind_counts()["incident"] == {"n": 1, "harmful": 1}


def test_kinds_filter_and_hash_follow_the_rows(outcome_store):
    everything = register_outcomes(outcome_store)
    reviews = register_outcomes(outcome_store, ("review_decision",))
    assert set(reviews.rows["kind"]) == {"review_decision"} and 0 < reviews.n < everything.n
    assert reviews.data_hash != everything.data_hash
    assert register_outcomes(outcome_store).data_hash == everything.data_hash  # the same rows, the same hash
    with pytest.raises(RegisterError, match="'gossip' is not an outcome kind"):
        register_outcomes(outcome_store, ("gossip",))


def test_too_few_outcomes_say_how_many_there_are_and_how_many_are_needed(outcome_store):
    """The demo's review decisions are enough for a fit; the outcomes of two kinds are not."""
    assert register_outcomes(outcome_store).shortfall() is None
    kinds = ("incident", "confirmed_correction")
    data = register_outcomes(outcome_store, kinds)
    assert data.n == 2
    assert data.shortfall() == ("The register holds 2 answer(s) with a known outcome and a usable score; "
                                "a fit needs at least 20 (18 more).")
    with pytest.raises(FitError, match="the fit needs at least 20"):
        fit_from_register(outcome_store, kinds, resamples=0)


def test_the_register_fit_is_the_file_paths_fit_on_the_same_matrix(demo_store):
    """On the imported incidents only (the demo's review decisions are another kind)."""
    import_scored_outcomes(demo_store, 60)
    data = register_outcomes(demo_store, ("incident",))
    assert data.shortfall() is None and data.n == 60
    fit = fit_from_register(demo_store, ("incident",), resamples=10, seed=4)
    same = fit_weights(outcome_set(data.rows["response_id"], data.rows[list(SCORE_COLUMNS)].to_numpy(),
                                   data.rows["floor"].to_numpy(), data.rows["outcome"].to_numpy(), data.data_hash),
                       active_profile(demo_store), data.as_of(), resamples=10, seed=4)
    assert fit.to_dict() == same.to_dict()
    assert fit.data_hash == data.data_hash and sum(fit.weights.values()) == pytest.approx(1.0)
    rows = compare_from_register(demo_store, ("incident",), resamples=5, data_hash=data.data_hash)
    assert {r["data_sha256"] for r in rows} == {data.data_hash} and len(rows) == 5
    with pytest.raises(RegisterError, match="outcomes changed"):
        fit_from_register(demo_store, ("incident",), resamples=0, data_hash="0" * 64)


def test_outcome_set_names_the_field_of_bad_arrays():
    with pytest.raises(FitError, match="one of each per answer"):
        outcome_set(["a"], np.zeros((2, 7)), np.zeros(2), np.zeros(2), "h")
    with pytest.raises(FitError, match="from 0 to 1"):
        outcome_set(["a"], np.full((1, 7), 1.5), np.zeros(1), np.zeros(1), "h")
    with pytest.raises(FitError, match="must be 0"):
        outcome_set(["a"], np.zeros((1, 7)), np.zeros(1), np.array([2.0]), "h")
