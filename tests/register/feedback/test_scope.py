"""The scope-level s_H per use case and model over a window, against a hand computation of the paper's
s_H = sum_j q_j exp(-lambda dt_j) / max(1, N_reviewed)."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pytest

from register import Actor
from register.console import review
from register.feedback import items as fb
from register.feedback.scope import scope_feedback, scope_feedback_trend
from tests.helpers.actors import enrol
from tests.helpers.feedback import Clock, import_records, two_claims

ADA = Actor("Ada Annotator", "annotator")
RITA = Actor("Rita Reviewer", "reviewer")

AS_OF = datetime(2026, 10, 31, 0, 0, tzinfo=UTC)
LAMBDA = math.log(2) / 30  # the default profile's half-life of 30 days


@pytest.fixture
def scoped(store, tmp_path, monkeypatch):
    """contracts/rag-v3: r1, r2 (+ r5, never reviewed); hr/rag-v4: r3, r4; events at pinned times."""
    enrol(store, ADA, RITA)
    import_records(store, tmp_path, [two_claims("r1"), two_claims("r2"), two_claims("r5"),
                                     two_claims("r3", "hr", "rag-v4"), two_claims("r4", "hr", "rag-v4")])
    clock = Clock(AS_OF - timedelta(days=60))
    monkeypatch.setattr(fb, "utc_now", clock)
    monkeypatch.setattr(review, "utc_now", clock)

    def validated(rid, claim, q, at):
        fid = fb.report_feedback(store, ADA, rid, "wrong", q, claim_id=claim)
        clock.now = at
        fb.validate_feedback(store, RITA, fid, "review")

    validated("r1", "c1", 0.8, AS_OF - timedelta(days=3))
    validated("r2", "c2", 0.5, AS_OF - timedelta(days=12))
    validated("r2", "c1", 1.0, AS_OF - timedelta(days=45))      # before a 30-day window
    validated("r3", "c1", 0.4, AS_OF - timedelta(days=20))
    validated("r3", "c2", 0.9, AS_OF + timedelta(days=1))       # after the as-of time
    clock.now = AS_OF - timedelta(days=5)
    rejected = fb.report_feedback(store, ADA, "r4", "I dislike it", 0.7, claim_id="c1")
    fb.reject_feedback(store, RITA, rejected, "a preference")   # reviewed, no event
    revision = store.scalar("SELECT revision FROM responses WHERE response_id = 'r1' AND is_current")
    review.record_decision(store, RITA, "r1", revision, "release", "checked")  # r1 reviewed again: counts once
    return store


def _hand(events: list[tuple[float, float]], n_reviewed: int) -> float:
    """events: (q, age in days at AS_OF)."""
    return min(1.0, sum(q * math.exp(-LAMBDA * age) for q, age in events) / max(1, n_reviewed))


def test_scope_scores_match_a_hand_computation(scoped):
    frame = scope_feedback(scoped, window_days=30, decay_lambda=LAMBDA, as_of=AS_OF).set_index(["use_case", "model"])
    contracts = frame.loc[("contracts", "rag-v3")]
    # events in (AS_OF - 30 d, AS_OF]: r1 q=0.8 aged 3 d, r2 q=0.5 aged 12 d; reviewed: r1, r2 (r5 never)
    assert (contracts.events, contracts.n_reviewed) == (2, 2)
    assert contracts.s_h == pytest.approx(_hand([(0.8, 3), (0.5, 12)], 2), abs=1e-12)
    assert contracts.s_h == pytest.approx((0.8 * 2 ** (-3 / 30) + 0.5 * 2 ** (-12 / 30)) / 2, abs=1e-12)
    hr = frame.loc[("hr", "rag-v4")]
    # r3 q=0.4 aged 20 d (the one validated after AS_OF does not exist yet); reviewed: r3 and r4 (rejected)
    assert (hr.events, hr.n_reviewed) == (1, 2)
    assert hr.s_h == pytest.approx(0.4 * 2 ** (-20 / 30) / 2, abs=1e-12)


def test_a_longer_window_takes_the_older_event_in_and_filters_pick_scopes(scoped):
    frame = scope_feedback(scoped, window_days=60, decay_lambda=LAMBDA, as_of=AS_OF, use_cases=("contracts",))
    assert frame[["use_case", "model"]].values.tolist() == [["contracts", "rag-v3"]]
    row = frame.iloc[0]
    assert (row.events, row.n_reviewed) == (3, 2)
    assert row.s_h == pytest.approx(_hand([(0.8, 3), (0.5, 12), (1.0, 45)], 2), abs=1e-12)


def test_the_trend_evaluates_each_window_end_on_its_own(scoped):
    trend = scope_feedback_trend(scoped, window_days=30, decay_lambda=LAMBDA, points=3, step_days=7, as_of=AS_OF)
    contracts = trend[trend.use_case == "contracts"].set_index("end_at")
    assert list(contracts.index) == [AS_OF - timedelta(days=14), AS_OF - timedelta(days=7), AS_OF]
    # at AS_OF - 14 d the window (AS_OF - 44 d, AS_OF - 14 d] holds no validation of this scope (r2's old one
    # is 45 d before AS_OF, the others came later)
    assert contracts.iloc[0][["events", "n_reviewed", "s_h"]].tolist() == [0, 0, 0.0]
    # at AS_OF - 7 d: r2 q=0.5 aged 5 d, reviewed r2 only
    assert contracts.iloc[1].s_h == pytest.approx(0.5 * 2 ** (-5 / 30), abs=1e-12)
    assert contracts.iloc[2].s_h == pytest.approx(_hand([(0.8, 3), (0.5, 12)], 2), abs=1e-12)


def test_bad_windows_are_refused(scoped):
    with pytest.raises(ValueError, match="window_days"):
        scope_feedback(scoped, window_days=0, decay_lambda=LAMBDA)
    with pytest.raises(ValueError, match="points"):
        scope_feedback_trend(scoped, window_days=30, decay_lambda=LAMBDA, points=0)
