"""The register's bulk SQL scorer computes what ``hri_core.score_response`` computes.

Table V first (the paper's numbers), then a Hypothesis property over random responses and random
profiles (every dimension, HRI, band, action, floors and the decisive floor), then the bookkeeping of
``rescore``: batch scoping, old score rows kept, run / profile version / as-of recorded on each row.
"""

from __future__ import annotations

import json
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from hri_core import Band, FloorRule, default_profile, parse_response, score_response
from register import SYSTEM, Store
from register.scoring.profiles import create_draft, get_profile
from register.scoring.scorer import rescore
from tests.helpers.parity import (
    ANALYST,
    assert_matches,
    bulk_scores,
    check_parity,
    expected_floors,
    load,
    stored_scores,
)
from tests.helpers.paths import REPO_ROOT
from tests.helpers.strategies import AS_OF, profiles, responses, source_registers

TABLE_V_FILE = REPO_ROOT / "data" / "table_v_supplier_contract.jsonl"


# --- (a) Table V ------------------------------------------------------------------------------------


def table_v_records() -> list[dict]:
    return [json.loads(line) for line in TABLE_V_FILE.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_table_v_in_sql_reproduces_the_paper(store):
    records = table_v_records()
    load(store, records)
    row = bulk_scores(store, default_profile(), AS_OF)["paper-table-v"]
    paper = {"s_f": 3 / 11, "s_c": 3 / 11, "s_u": 1.5 / 11, "s_o": 1.5 / 11, "s_s": 0.75 / 11, "s_p": 1.2 / 11,
             "s_h": 0.0}
    for column, value in paper.items():
        assert row[column] == pytest.approx(value, abs=1e-12), column
    assert row["hri_add"] == pytest.approx(1.92 / 11, abs=1e-12)
    assert row["hri"] == pytest.approx(0.70, abs=1e-12)
    assert row["score"] == pytest.approx(70.0, abs=1e-9)
    assert (row["band"], row["action"], row["no_claims"]) == ("High", "review", False)
    assert (row["total_criticality"], row["floors_fired"]) == (11, 1)
    assert (row["decisive_claim_id"], row["decisive_rule_id"]) == ("paper-table-v-3", "contradicted-high")
    assert_matches(row, score_response(parse_response(records[0]), default_profile(), AS_OF))


def test_table_v_rescore_stores_the_same_numbers(store):
    load(store, table_v_records())
    profile = get_profile(store, 1)
    summary = rescore(store, SYSTEM, profile, as_of=AS_OF)
    assert (summary.profile_version, summary.as_of, summary.responses_scored) == (1, AS_OF, 1)
    (row,) = stored_scores(store)["paper-table-v"]
    assert (row["run_id"], row["profile_version"], row["as_of"], row["is_current"]) == (
        summary.run_id, 1, AS_OF, True)
    assert (row["hri"], row["score"], row["band"], row["action"]) == (pytest.approx(0.70), pytest.approx(70.0),
                                                                      "High", "review")
    assert (row["floors_fired"], row["decisive_claim_id"], row["decisive_rule_id"]) == (
        1, "paper-table-v-3", "contradicted-high")
    assert store.query("SELECT run_id, response_id, revision, claim_idx, claim_id, rule_id, label, criticality, value "
                       "FROM score_floors") == [
        (summary.run_id, "paper-table-v", 1, 2, "paper-table-v-3", "contradicted-high", "CONTRADICTED", 3, 0.7)]
    assert_matches(row, score_response(parse_response(table_v_records()[0]), profile, AS_OF))


# --- (b) random responses and random profiles -------------------------------------------------------


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(records=responses(min_size=1, max_size=30, min_claims=0, max_claims=8), profile=profiles(),
       register=source_registers())
def test_bulk_scorer_equals_score_response_on_random_profiles(records, profile, register):
    """... and the decision a rescore stores equals hri_core's (score, Authority, mitigation, decide_answer) on a
    random source register."""
    check_parity(records, profile, AS_OF, register)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(records=responses(min_size=1, max_size=30, min_claims=0, max_claims=8))
def test_bulk_scorer_equals_score_response_on_the_paper_profile(records):
    check_parity(records, default_profile(), AS_OF)


def test_parity_on_hand_picked_edge_cases():
    """Cases a random draw may miss: no claims, future feedback, multi-label max, ties between floors."""
    records = [
        {"response_id": "empty", "claims": []},
        {"response_id": "future-feedback", "claims": [
            {"claim_id": "f1", "labels": ["VALIDATED_NEGATIVE_FEEDBACK"], "criticality": 3,
             "feedback_at": "2027-01-01T00:00:00Z", "feedback_count": 5}]},
        {"response_id": "old-feedback", "claims": [
            {"claim_id": "o1", "labels": ["VALIDATED_NEGATIVE_FEEDBACK"], "feedback_at": "2026-10-02T12:00:00Z",
             "feedback_resolved": True, "feedback_count": 1},
            {"claim_id": "o2", "labels": ["SUPPORTED"], "dimensions": ["F", "C"], "criticality": 4}]},
        {"response_id": "multi-label", "claims": [
            {"claim_id": "m1", "labels": ["CONTRADICTED", "UNSUPPORTED", "ACCESS_GAP"], "dimensions": ["F", "U"],
             "criticality": 2},
            {"claim_id": "m2", "labels": ["OUTDATED", "OUT_OF_SCOPE"], "criticality": 5}]},
        {"response_id": "floor-tie", "claims": [
            {"claim_id": "t1", "labels": ["ACCESS_GAP"], "criticality": 3},
            {"claim_id": "t2", "labels": ["OUT_OF_SCOPE"], "criticality": 4},
            {"claim_id": "t3", "labels": ["CONTRADICTED"], "criticality": 2}]},
    ]
    check_parity(records, default_profile(), AS_OF)
    with tempfile.TemporaryDirectory() as folder:
        store = Store(Path(folder) / "edge.duckdb")
        try:
            load(store, records)
            rows = bulk_scores(store, default_profile(), AS_OF)
        finally:
            store.close()
    assert (rows["empty"]["no_claims"], rows["empty"]["action"], rows["empty"]["hri"]) == (True, "review", 0.0)
    assert (rows["future-feedback"]["s_h"], rows["future-feedback"]["floors_fired"]) == (0.0, 0)
    # two floors of 0.55 tie: the first claim in response order decides
    assert (rows["floor-tie"]["decisive_claim_id"], rows["floor-tie"]["decisive_rule_id"]) == (
        "t1", "access-gap-high")
    assert rows["floor-tie"]["floors_fired"] == 3


def test_rescore_with_regression_profiles(store):
    """Profiles the random search found broken in SQL: one band only, a floor worth 0 (it still fires and
    is counted), and floors without the feedback floor (no unused as-of parameter)."""
    base = default_profile()
    records = [{"response_id": "x", "claims": [
        {"claim_id": "x-1", "labels": ["CONTRADICTED"], "criticality": 3},
        {"claim_id": "x-2", "labels": ["PARTIAL"], "criticality": 1}]}]
    load(store, records)
    variants = {
        "one band": base.model_copy(update={"bands": (Band(name="All", upper=100, action="caution"),)}),
        "zero floor": base.model_copy(update={"floors": base.floors + (
            FloorRule(rule_id="partial-zero", label="PARTIAL", value=0.0),)}),
        "no feedback floor": base.model_copy(update={
            "floors": tuple(r for r in base.floors if r.condition == "criticality")}),
    }
    for name, profile in variants.items():
        summary = rescore(store, SYSTEM, profile, as_of=AS_OF)
        (row,) = stored_scores(store)["x"]
        assert row["run_id"] == summary.run_id, name
        expected = score_response(parse_response(records[0]), profile, AS_OF)
        assert_matches(row, expected)
        assert [r[1:] for r in store.query(
            "SELECT run_id, claim_id, rule_id, label, criticality, value FROM score_floors WHERE run_id = ? "
            "ORDER BY claim_idx", [summary.run_id])] == expected_floors(expected), name
    assert (row["band"], row["action"]) == ("High", "review")
    one_band = stored_scores(store, "run_id = 1")["x"][0]
    assert (one_band["band"], one_band["action"]) == ("All", "caution")
    zero_floor = stored_scores(store, "run_id = 2")["x"][0]
    assert (zero_floor["floors_fired"], zero_floor["decisive_rule_id"]) == (2, "contradicted-high")


# --- (c) rescoring: batch scope, history kept, provenance on every row --------------------------------


def batch_records(prefix: str, n: int) -> list[dict]:
    return [{"response_id": f"{prefix}-{i}", "claims": [
        {"claim_id": f"{prefix}-{i}-1", "labels": ["UNSUPPORTED"], "criticality": 1 + i},
        {"claim_id": f"{prefix}-{i}-2", "labels": ["CONTRADICTED"], "dimensions": ["F", "C"], "criticality": 1}]}
        for i in range(n)]


def test_rescoring_one_batch_leaves_the_other_batches_scores_alone(store):
    batch_1 = load(store, batch_records("b1", 3), "first.jsonl")
    batch_2 = load(store, batch_records("b2", 2), "second.jsonl")
    assert batch_1 != batch_2
    v1 = get_profile(store, 1)
    as_of_1 = datetime(2026, 11, 1, tzinfo=UTC)
    run_1 = rescore(store, SYSTEM, v1, as_of=as_of_1)
    assert run_1.responses_scored == 5
    batch_1_before = stored_scores(store, "is_current AND response_id LIKE 'b1-%'")

    v2 = get_profile(store, create_draft(store, SYSTEM, {"weights": {"F": 0.5, "C": 0.5, "U": 0.0, "O": 0.0,
                                                                        "S": 0.0, "P": 0.0, "H": 0.0}}))
    as_of_2 = as_of_1 + timedelta(days=10)
    run_2 = rescore(store, ANALYST, v2, as_of=as_of_2, batch_id=batch_2)
    assert (run_2.responses_scored, run_2.profile_version) == (2, 2)

    current = stored_scores(store)
    assert sorted(current) == ["b1-0", "b1-1", "b1-2", "b2-0", "b2-1"]
    assert {rid: rows for rid, rows in current.items() if rid.startswith("b1-")} == batch_1_before
    for rid in ("b1-0", "b1-1", "b1-2"):
        (row,) = current[rid]
        assert (row["run_id"], row["profile_version"], row["as_of"]) == (run_1.run_id, 1, as_of_1)
    for rid in ("b2-0", "b2-1"):
        (row,) = current[rid]
        assert (row["run_id"], row["profile_version"], row["as_of"]) == (run_2.run_id, 2, as_of_2)
        record = next(r for r in batch_records("b2", 2) if r["response_id"] == rid)
        assert_matches(row, score_response(parse_response(record), v2, as_of_2))

    assert store.query("SELECT run_id, profile_version, as_of, actor_name, scope, responses_scored FROM score_runs "
                       "ORDER BY run_id") == [
        (run_1.run_id, 1, as_of_1, "system", "all", 5),
        (run_2.run_id, 2, as_of_2, "Dana Analyst", f"batch:{batch_2}", 2)]


def test_rescoring_keeps_old_score_rows_not_current(store):
    load(store, batch_records("r", 2))
    v1 = get_profile(store, 1)
    first = rescore(store, SYSTEM, v1, as_of=AS_OF)
    second = rescore(store, SYSTEM, v1, as_of=AS_OF + timedelta(days=1))
    assert second.run_id != first.run_id

    history = stored_scores(store, "true")
    assert sorted(history) == ["r-0", "r-1"]
    for rid, rows in history.items():
        assert [(r["run_id"], r["is_current"], r["as_of"], r["profile_version"]) for r in rows] == [
            (first.run_id, False, AS_OF, 1), (second.run_id, True, AS_OF + timedelta(days=1), 1)], rid
        assert rows[0]["hri"] == rows[1]["hri"]  # same profile, no feedback: same numbers
    assert store.query_one("SELECT count(*) FROM scores WHERE is_current")[0] == 2


def test_a_rescore_is_one_audited_write(store):
    load(store, batch_records("a", 1))
    before = store.query_one("SELECT max(seq) FROM audit_events")[0]
    summary = rescore(store, ANALYST, get_profile(store, 1), as_of=AS_OF)
    rows = store.query("SELECT actor_name, actor_role, action, entity_type, entity_id, after FROM audit_events "
                       "WHERE seq > ?", [before])
    assert len(rows) == 1
    name, role, action, entity_type, entity_id, after = rows[0]
    assert (name, role, action, entity_type, entity_id) == (
        "Dana Analyst", "admin", "scores.rescore", "score_run", str(summary.run_id))
    assert json.loads(after) == {"profile_version": 1, "as_of": AS_OF.isoformat(), "scope": "all",
                                 "responses_scored": 1}


def test_scoring_reads_only_current_revisions(store):
    record = batch_records("rev", 1)[0]
    load(store, [record])
    changed = {**record, "claims": [{"claim_id": "only", "labels": ["SUPPORTED"], "criticality": 1}]}
    load(store, [changed])
    rows = bulk_scores(store, default_profile(), AS_OF)
    assert list(rows) == ["rev-0"]
    assert (rows["rev-0"]["revision"], rows["rev-0"]["hri"], rows["rev-0"]["total_criticality"]) == (2, 0.0, 1)
