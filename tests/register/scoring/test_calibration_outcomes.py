"""Calibration outcomes that mean something: each carries its kind, an escalation is no outcome, validated
feedback is a confirmed correction of the revision it was reported on, and random audit samples of
released answers bring outcomes from the low end of the score range."""

from __future__ import annotations

import pandas as pd
import pytest

from hri_core import ScoringProfile
from register import Actor, ImportRejected
from register.console.review import record_decision
from register.errors import InvalidDecision, PermissionDenied
from register.feedback import items as fb
from register.scoring import calibration as cal
from tests.helpers.actors import REVIEWER, enrol

ANNOTATOR = Actor("Ada Annotator", "annotator")


@pytest.fixture(autouse=True)
def _annotator_account(store):
    """An account for ANNOTATOR, so that a refusal below is for the role, not for a missing account."""
    enrol(store, ANNOTATOR)


def _current(store, rid: str) -> int:
    return store.query_one("SELECT revision FROM responses WHERE response_id = ? AND is_current", [rid])[0]


# released answers no reviewer decided (the demo records decisions on the Factcheck-GPT answers: register.demo)
_UNDECIDED = "NOT EXISTS (SELECT 1 FROM review_decisions d WHERE d.response_id = scores.response_id)"


def _released(store, n: int, below: float = 50.0) -> list[str]:
    return [r for (r,) in store.query("SELECT response_id FROM scores WHERE is_current AND action IN "
                                      f"('release', 'caution') AND NOT no_claims AND score < ? AND {_UNDECIDED} "
                                      "ORDER BY response_id LIMIT ?", [below, n])]


def test_imported_rows_carry_their_kind_from_the_file_or_their_own_cell(demo_store):
    r1, r2, r3, r4 = _released(demo_store, 4)
    csv = (f"response_id,outcome,kind\n{r1},bad,incident\n{r2},good,\n{r3},bad,gossip\n"
           f"{r4},good,EXPERT_ADJUDICATION\n").encode()
    report = cal.import_outcomes_csv(demo_store, REVIEWER, csv, "mixed.csv", kind="audit_finding")
    assert report.accepted == 3 and [(p["row"], p["field"]) for p in report.problems] == [(3, "kind")]
    frame = cal.outcome_pairs(demo_store, ("import",))
    assert dict(zip(frame.response_id, frame.kind, strict=True)) == {
        r1: "incident", r2: "audit_finding", r4: "expert_adjudication"}


def test_a_file_that_does_not_say_what_kind_its_outcomes_are_is_refused(demo_store):
    (r1,) = _released(demo_store, 1)
    with pytest.raises(ImportRejected, match="kind"):
        cal.import_outcomes_csv(demo_store, REVIEWER, f"response_id,outcome\n{r1},bad\n".encode(), "o.csv")
    with pytest.raises(ImportRejected, match="'rumour' is not an outcome kind"):
        cal.import_outcomes_csv(demo_store, REVIEWER, f"response_id,outcome\n{r1},bad\n".encode(), "o.csv",
                                kind="rumour")
    assert demo_store.scalar("SELECT count(*) FROM outcome_imports") == 0


def test_an_escalation_is_no_outcome_and_a_block_is_a_bad_review_decision(demo_store):
    r1, r2 = _released(demo_store, 2)
    record_decision(demo_store, REVIEWER, r1, _current(demo_store, r1), "escalate", "needs legal")
    record_decision(demo_store, REVIEWER, r2, _current(demo_store, r2), "block", "wrong date")
    frame = cal.outcome_pairs(demo_store)
    assert r1 not in set(frame.response_id)
    row = frame[frame.response_id == r2].iloc[0]
    assert (bool(row.bad), row.kind, row.source) == (True, "review_decision", "review")


def test_validated_feedback_is_a_confirmed_correction_scored_as_reported(demo_store):
    (rid,) = _released(demo_store, 1, below=40.0)  # the feedback floor (50) will raise it
    reported_revision = _current(demo_store, rid)
    score_before = demo_store.scalar("SELECT score FROM scores WHERE response_id = ? AND is_current", [rid])
    claim = demo_store.scalar("SELECT claim_id FROM claims WHERE response_id = ? AND is_current "
                              "ORDER BY claim_idx LIMIT 1", [rid])
    item = fb.report_feedback(demo_store, ANNOTATOR, rid, "the date is wrong", 0.9, claim_id=claim)
    assert rid not in set(cal.outcome_pairs(demo_store).response_id)  # reported is not confirmed
    fb.validate_feedback(demo_store, REVIEWER, item, "source_check")
    assert demo_store.scalar("SELECT score FROM scores WHERE response_id = ? AND is_current", [rid]) > score_before
    row = cal.outcome_pairs(demo_store).set_index("response_id").loc[rid]
    # the score it is compared with is the reported revision's, not the one its own validation raised
    assert (bool(row.bad), row.kind, row.source) == (True, "confirmed_correction", "feedback")
    assert (int(row.revision), float(row.score)) == (reported_revision, pytest.approx(score_before))
    assert "feedback" not in set(cal.outcome_pairs(demo_store, ("review", "import")).source)


def test_an_audit_sample_draws_undecided_released_answers_and_its_decisions_are_audit_findings(demo_store):
    # the population: released answers no reviewer decided (the demo's decided ones are not drawn)
    released = demo_store.scalar("SELECT count(*) FROM scores WHERE is_current AND action IN ('release', 'caution') "
                                 f"AND NOT no_claims AND scoring_failure IS NULL AND {_UNDECIDED}")
    assert released > 10
    with pytest.raises(PermissionDenied, match=r"\(annotator\) may not"):
        cal.draw_audit_sample(demo_store, ANNOTATOR, 5)
    with pytest.raises(InvalidDecision, match="size"):
        cal.draw_audit_sample(demo_store, REVIEWER, 0)
    first = cal.draw_audit_sample(demo_store, REVIEWER, 5, seed=7)
    drawn = cal.audit_sample_items(demo_store)
    assert len(drawn) == 5 and set(drawn.action) <= {"release", "caution"} and drawn.decision.isna().all()
    assert demo_store.one("SELECT population, seed, drawn_by FROM audit_samples WHERE sample_id = ?", [first]) == {
        "population": released, "seed": 7, "drawn_by": REVIEWER.name}
    second = cal.draw_audit_sample(demo_store, REVIEWER, 5, seed=7)  # same seed: the next five, never the same
    again = cal.audit_sample_items(demo_store)
    assert len(set(again.response_id)) == 10 and set(again.sample_id) == {first, second}
    rid, revision = drawn.iloc[0][["response_id", "revision"]]
    record_decision(demo_store, REVIEWER, rid, int(revision), "send_back", "cites a withdrawn policy")
    assert len(cal.audit_sample_items(demo_store, undecided_only=True)) == 9
    row = cal.outcome_pairs(demo_store).set_index("response_id").loc[rid]
    assert (bool(row.bad), row.kind) == (True, "audit_finding")
    assert float(row.score) <= 50  # from the released end of the range
    assert demo_store.scalar("SELECT count(*) FROM audit_events WHERE action = 'calibration.audit_sample'") == 2


def test_coverage_counts_outcomes_per_kind_and_band_like_band_for():
    profile = ScoringProfile()  # bands Low 20, Medium 50, High 75, Critical 100
    frame = pd.DataFrame({
        "score": [0.0, 20.0, 20.0000000001, 20.5, 50.0, 75.1, 100.0],
        "bad": [False, False, True, False, True, True, True],
        "kind": ["audit_finding", "audit_finding", "review_decision", "incident", "review_decision",
                 "confirmed_correction", "review_decision"]})
    expected_bands = [profile.band_for(s).name for s in frame.score]
    assert expected_bands == ["Low", "Low", "Low", "Medium", "Medium", "Critical", "Critical"]
    table = cal.outcome_coverage(frame, profile).set_index("kind")
    bands = ["Low (0-20]", "Medium (20-50]", "High (50-75]", "Critical (75-100]"]
    assert list(table.columns) == [*bands, "outcomes", "bad"]
    assert list(table.index) == ["confirmed_correction", "audit_finding", "incident", "review_decision", "all"]
    assert table.loc["audit_finding", bands].tolist() == [2, 0, 0, 0]
    assert table.loc["review_decision", bands].tolist() == [1, 1, 0, 1]
    assert table.loc["all", bands].tolist() == [3, 2, 0, 2]
    assert (table.loc["all", "outcomes"], table.loc["all", "bad"]) == (7, 4)
    assert table.loc["review_decision", "bad"] == 3
