"""Calibration through the register: outcomes from reviews and CSV files, with a known answer."""

from __future__ import annotations

import pytest

from hri_core import calibration
from register import ImportRejected
from register.console.review import record_decision
from register.errors import PermissionDenied
from register.scoring import calibration as cal
from register.scoring.elicitation import elicitations_for
from register.scoring.profiles import get_profile, profile_meta
from tests.helpers.actors import ANN, REVIEWER


def four_distinct(store):
    """Four current responses with distinct positive scores, lowest first."""
    rows = store.query("SELECT arg_min(response_id, response_id), score FROM scores WHERE is_current AND score > 0 "
                       "AND response_id NOT IN (SELECT response_id FROM review_decisions) "
                       "GROUP BY score ORDER BY score LIMIT 4")
    assert len(rows) == 4
    return rows


def test_known_answer_from_csv_and_reviews(demo_store):
    (r1, s1), (r2, s2), (r3, s3), (r4, s4) = four_distinct(demo_store)
    csv = f"response_id,outcome\n{r1},good\n{r2},bad\n{r3},good\n".encode()
    report = cal.import_outcomes_csv(demo_store, REVIEWER, csv, "audit.csv", kind="audit_finding")
    assert (report.rows_total, report.accepted, report.problems) == (3, 3, [])
    revision = demo_store.query_one("SELECT revision FROM responses WHERE response_id = ? AND is_current", [r4])[0]
    # the demo's own review decisions (its Factcheck-GPT answers, register.demo) are outcomes too: set apart here
    demo_decided = set(cal.outcome_pairs(demo_store, ("review",)).response_id)
    record_decision(demo_store, REVIEWER, r4, revision, "block", "contradicts the contract")
    frame = cal.outcome_pairs(demo_store)
    frame = frame[~frame.response_id.isin(demo_decided)]
    assert dict(zip(frame.response_id, frame.bad, strict=True)) == {r1: False, r2: True, r3: False, r4: True}
    assert dict(zip(frame.response_id, frame.source, strict=True)) == {
        r1: "import", r2: "import", r3: "import", r4: "review"}
    pairs = list(zip(frame.score, frame.bad, strict=True))
    # bad s2 outscores good s1 but not good s3; bad s4 outscores both: AUC = 3/4
    assert calibration.roc_auc(pairs) == pytest.approx(0.75)
    # missing a bad answer costs 10, a needless review 1: flag everything above s1 (one needless review)
    best = calibration.cost_optimal_threshold(pairs, 10, 1)
    assert best.threshold == pytest.approx(s1)
    assert (best.best.false_negatives, best.best.false_positives) == (0, 1)
    only_reviews = cal.outcome_pairs(demo_store, ("review",))
    assert set(only_reviews.response_id) == demo_decided | {r4}


def test_latest_outcome_wins(demo_store):
    (r1, _), *_ = four_distinct(demo_store)
    cal.import_outcomes_csv(demo_store, REVIEWER, f"response_id,outcome\n{r1},bad\n".encode(), "a.csv",
                            kind="incident")
    cal.import_outcomes_csv(demo_store, REVIEWER, f"response_id,outcome\n{r1},good\n".encode(), "b.csv",
                            kind="incident")
    frame = cal.outcome_pairs(demo_store)
    assert list(frame[frame.response_id == r1].bad) == [False]


def test_bad_rows_are_reported_with_their_number_and_valid_rows_kept(demo_store):
    (r1, _), (r2, _), *_ = four_distinct(demo_store)
    csv = (f"response_id,outcome\n{r1},BAD\nnot-a-response,good\n{r2},maybe\n,good\n\n{r2},0\n").encode()
    report = cal.import_outcomes_csv(demo_store, REVIEWER, csv, "mixed.csv", kind="incident")
    assert report.accepted == 2 and report.rows_total == 5 and report.rejected == 3
    assert [(p["row"], p["field"]) for p in report.problems] == [(2, "response_id"), (3, "outcome"),
                                                                  (4, "response_id")]
    stored = demo_store.query("SELECT row_number, response_id, outcome FROM imported_outcomes ORDER BY row_number")
    assert stored == [(1, r1, "bad"), (6, r2, "good")]


@pytest.mark.parametrize("content, name, words", [
    (b"response_id,outcome\nx,bad\n", "outcomes.xlsx", ".csv"),
    (b"id,label\nx,bad\n", "o.csv", "response_id and outcome"),
    (b"\xff\xfe\x00bad", "o.csv", "not a text CSV"),
    (b"response_id,outcome\n" + b"x,bad\n" * 1_000_000, "big.csv", "larger than the limit"),
])
def test_whole_file_refusals(demo_store, content, name, words):
    with pytest.raises(ImportRejected, match=words):
        cal.import_outcomes_csv(demo_store, REVIEWER, content, name, kind="incident")
    assert demo_store.query_one("SELECT count(*) FROM outcome_imports")[0] == 0


def test_band_suggestion_becomes_a_draft_with_its_record(demo_store):
    (r1, s1), (r2, s2), (r3, s3), (r4, s4) = four_distinct(demo_store)
    pairs = [(s1, False), (s2, True), (s3, False), (s4, True)]
    with pytest.raises(PermissionDenied):
        cal.save_band_suggestion(demo_store, REVIEWER, pairs, 10, 1)
    version, record_id = cal.save_band_suggestion(demo_store, ANN, pairs, 10, 1)
    assert profile_meta(demo_store, version)["status"] == "draft"
    bands = get_profile(demo_store, version).bands
    expected = calibration.suggest_bands(pairs, 10, 1, get_profile(demo_store, 1))["bands"]
    assert [(b.name, b.upper, b.action) for b in bands] == [(b["name"], b["upper"], b["action"]) for b in expected]
    review_band = next(i for i, b in enumerate(bands) if b.action in ("review", "block"))
    assert bands[review_band - 1].upper == pytest.approx(s1)
    (record,) = elicitations_for(demo_store, version)
    assert record["elicitation_id"] == record_id and record["method"] == "calibration"
    assert record["record"]["auc"] == pytest.approx(0.75) and record["record"]["outcomes"] == 4
