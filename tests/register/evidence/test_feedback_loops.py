"""Feedback loops over time: weekly hallucination share and s_H per scope, the resolutions, before and after."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest

from register import Actor
from register.console.queries.filters import Filters
from register.errors import RegisterError
from register.evidence.feedback_loops import feedback_loops
from register.feedback import items as fb
from register.feedback.scope import scope_feedback
from register.scoring.profiles import active_profile
from tests.helpers.actors import enrol
from tests.helpers.feedback import Clock, import_records

ADA = Actor("Ada Annotator", "annotator")
RITA = Actor("Rita Reviewer", "reviewer")
AS_OF = datetime(2026, 11, 1, tzinfo=UTC)
VALIDATED = datetime(2026, 9, 20, 10, tzinfo=UTC)
RESOLVED = datetime(2026, 10, 5, 10, tzinfo=UTC)


def _answer(rid: str, created: str, labels: list[str], use_case: str = "contracts", model: str = "m1") -> dict:
    return {"response_id": rid, "use_case": use_case, "model": model, "created_at": created,
            "question": "Q?", "answer": "A.",
            "claims": [{"claim_id": f"c{i}", "text": f"Claim {i}.", "labels": [label]}
                       for i, label in enumerate(labels)]}


@pytest.fixture
def looped(store, tmp_path, monkeypatch):
    """contracts/m1: two answers before the resolution (shares 0.5, 1.0) and two after (0.0, 0.5); hr/m2: one
    answer and no feedback."""
    enrol(store, ADA, RITA)
    import_records(store, tmp_path, [
        _answer("r1", "2026-09-07T09:00:00Z", ["UNSUPPORTED", "SUPPORTED"]),
        _answer("r2", "2026-09-14T09:00:00Z", ["CONTRADICTED", "CONTRADICTED"]),
        _answer("r3", "2026-10-19T09:00:00Z", ["SUPPORTED", "SUPPORTED"]),
        _answer("r4", "2026-10-20T09:00:00Z", ["UNSUPPORTED", "PARTIAL"]),
        _answer("h1", "2026-10-01T09:00:00Z", ["OUTDATED"], "hr", "m2"),
    ])
    clock = Clock(VALIDATED - timedelta(days=1))
    monkeypatch.setattr(fb, "utc_now", clock)
    fid = fb.report_feedback(store, ADA, "r1", "wrong", 0.8, claim_id="c0")
    clock.now = VALIDATED
    fb.validate_feedback(store, RITA, fid, "review")
    clock.now = RESOLVED
    fb.resolve_feedback(store, RITA, fid, "the source was fixed")
    return store


def test_weekly_shares_resolutions_and_before_after(looped):
    result = feedback_loops(looped, weeks=8, as_of=AS_OF)
    assert result.last_week == date(2026, 10, 19) and result.first_week == date(2026, 8, 31)
    series = result.series.set_index(["use_case", "model", "week"])
    assert len(result.series) == 2 * 8  # every week of every scope, empty weeks included
    assert series.loc[("contracts", "m1", date(2026, 9, 7)), "hallucination_share"] == pytest.approx(0.5)
    assert series.loc[("contracts", "m1", date(2026, 9, 14)), "hallucination_share"] == pytest.approx(1.0)
    assert series.loc[("contracts", "m1", date(2026, 10, 19)), "hallucination_share"] == pytest.approx(0.25)
    assert series.loc[("contracts", "m1", date(2026, 10, 19)), "answers"] == 2
    assert series.loc[("contracts", "m1", date(2026, 9, 28)), "answers"] == 0
    # s_H of a week is the scope's s_H over the window ending with it
    decay = active_profile(looped).decay_lambda
    for week in (date(2026, 9, 21), date(2026, 10, 12)):
        end = datetime(week.year, week.month, week.day, tzinfo=UTC) + timedelta(days=7)
        expected = scope_feedback(looped, window_days=30, decay_lambda=decay, as_of=end).set_index(
            ["use_case", "model"]).loc[("contracts", "m1"), "s_h"]
        assert series.loc[("contracts", "m1", week), "s_h"] == pytest.approx(expected, abs=1e-12)
    assert series.loc[("contracts", "m1", date(2026, 9, 21)), "s_h"] > 0

    assert list(result.events["response_id"]) == ["r1"]
    assert result.events["resolved_at"].iloc[0] == RESOLVED
    row = result.before_after.set_index(["use_case", "model"]).loc[("contracts", "m1")]
    assert (row["answers_before"], row["answers_after"], row["resolutions"]) == (2, 2, 1)
    assert row["share_before"] == pytest.approx(0.75) and row["share_after"] == pytest.approx(0.25)
    weekly = result.series[(result.series["use_case"] == "contracts")]
    starts = [datetime(w.year, w.month, w.day, tzinfo=UTC) for w in weekly["week"]]
    before = [s for s, start in zip(weekly["s_h"], starts, strict=True) if start + timedelta(days=7) <= RESOLVED]
    after = [s for s, start in zip(weekly["s_h"], starts, strict=True) if start >= RESOLVED]
    assert row["s_h_before"] == pytest.approx(sum(before) / len(before))
    assert row["s_h_after"] == pytest.approx(sum(after) / len(after))
    assert ("hr", "m2") not in result.before_after.set_index(["use_case", "model"]).index
    as_json = result.as_json()
    assert as_json["before_after"][0]["first_resolved_at"].startswith("2026-10-05")


def test_filters_keep_one_scope(looped):
    result = feedback_loops(looped, Filters(use_cases=("hr",)), weeks=4, as_of=AS_OF)
    assert set(result.series["use_case"]) == {"hr"} and result.events.empty and result.before_after.empty


def test_no_feedback_gives_no_comparison(store, tmp_path):
    import_records(store, tmp_path, [_answer("x1", "2026-10-01T09:00:00Z", ["SUPPORTED"])])
    result = feedback_loops(store, weeks=3, as_of=AS_OF)
    assert result.before_after.empty and result.events.empty and len(result.series) == 3


def test_bad_weeks_are_refused(store):
    with pytest.raises(RegisterError, match="weeks"):
        feedback_loops(store, weeks=0)
    with pytest.raises(RegisterError, match="window_days"):
        feedback_loops(store, window_days=0)
