"""The richer-answer extensions (issue 12) through the register: stored in their own columns from JSON Lines,
flat CSV and Parquet (migration 009), read back into the same record, idempotent on re-import, checked by
the flat frame schema, and carried by the exports."""

from __future__ import annotations

import csv
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hri_core import parse_response
from register import SYSTEM
from register.ingest.exporter import export_scores
from register.ingest.importer import import_path
from register.ingest.records import content_hash
from register.scoring.reproduce import load_response

CHUNKS = [{"id": "k1", "text": "Support hours: Mon-Fri 8:00-18:00", "source_id": "contract-2024-07"},
          {"id": "k2", "text": "Termination needs 90 days' notice."}]
RECORD = {
    "response_id": "ext-1", "stakes": "High", "query_ambiguous": False, "gt_answer": "Support is Mon-Fri.",
    "retrieved_context": CHUNKS,
    "gt_claims": [{"text": "Support is Mon-Fri.", "response": "Contradiction", "context": ["Entailment", "Neutral"]}],
    "claims": [
        {"claim_id": "ext-1-1", "text": "The SLA includes 24/7 support.", "labels": ["CONTRADICTED"], "criticality": 2,
         "contradicted_by": "context", "is_core": True, "category": "contractual",
         "entailment": {"target": "Contradiction", "context": ["Contradiction", "Neutral"]}},
        {"claim_id": "ext-1-2", "text": "Termination needs notice.", "labels": ["SUPPORTED"], "is_core": False,
         "category": "discrimination / bias", "source_id": "k2"}],
}

RESPONSE_COLUMNS = "stakes, query_ambiguous, gt_answer, retrieved_context, gt_claims"
CLAIM_COLUMNS = "claim_id, category, is_core, contradicted_by, entailment"


def stored(store, rid: str) -> tuple[dict, list[dict]]:
    response = store.one(f"SELECT {RESPONSE_COLUMNS} FROM responses WHERE response_id = ? AND is_current", [rid])
    claims = store.dicts(f"SELECT {CLAIM_COLUMNS} FROM claims WHERE response_id = ? AND is_current "
                         "ORDER BY claim_idx", [rid])
    return response, claims


def test_jsonl_extensions_are_stored_read_back_and_idempotent(store, tmp_path):
    path = tmp_path / "rich.jsonl"
    path.write_text(json.dumps(RECORD) + "\n", encoding="utf-8")
    report = import_path(store, SYSTEM, path)
    assert (report.accepted, report.quarantined) == (1, 0)
    response, claims = stored(store, "ext-1")
    assert (response["stakes"], response["query_ambiguous"], response["gt_answer"]) == (
        "high", False, "Support is Mon-Fri.")
    assert json.loads(response["retrieved_context"]) == CHUNKS
    assert json.loads(response["gt_claims"]) == RECORD["gt_claims"]
    assert [(c["category"], c["is_core"], c["contradicted_by"]) for c in claims] == [
        ("contractual", True, "context"), ("discrimination/bias", False, None)]
    assert json.loads(claims[0]["entailment"]) == RECORD["claims"][0]["entailment"]
    assert claims[1]["entailment"] is None
    assert content_hash(load_response(store, "ext-1")) == content_hash(parse_response(RECORD))
    again = import_path(store, SYSTEM, path)
    assert (again.unchanged, again.new_revisions) == (1, 0)
    # the context contradiction counts in C as well as F (Table III): criticality 2 of a total 3
    s_f, s_c = store.query_one("SELECT s_f, s_c FROM scores WHERE response_id = 'ext-1' AND is_current")
    assert (s_f, s_c) == (pytest.approx(2 / 3), pytest.approx(2 / 3))


def flat_rows() -> list[dict]:
    base = {"response_id": "flat-1", "stakes": "low", "query_ambiguous": "true", "gt_answer": "g",
            "retrieved_context": json.dumps(CHUNKS)}
    return [{**base, "claim_id": "flat-1-1", "labels": "CONTRADICTED", "criticality": "2",
             "contradicted_by": "world", "is_core": "yes", "category": "legal"},
            {**base, "claim_id": "flat-1-2", "labels": "UNSUPPORTED", "criticality": "1", "is_core": "no",
             "contradicted_by": "", "category": ""},
            {"response_id": "flat-2", "stakes": "medium", "query_ambiguous": "perhaps", "gt_answer": "",
             "retrieved_context": "", "claim_id": "flat-2-1", "labels": "SUPPORTED", "criticality": "1",
             "contradicted_by": "", "is_core": "", "category": ""}]


def check_flat(store, report, row: int) -> None:
    """``row``: the bad row's number (CSV counts the header as row 1, Parquet counts data rows from 1)."""
    assert (report.accepted, report.quarantined) == (1, 1)
    response, claims = stored(store, "flat-1")
    assert (response["stakes"], response["query_ambiguous"], response["gt_answer"]) == ("low", True, "g")
    assert json.loads(response["retrieved_context"]) == CHUNKS
    assert [(c["category"], c["is_core"], c["contradicted_by"]) for c in claims] == [
        ("legal", True, "world"), (None, False, None)]
    (reasons,) = store.query_one("SELECT reasons FROM quarantine WHERE response_id = 'flat-2'")
    assert {"field": "query_ambiguous", "message": f"row {row}: 'perhaps' is not true or false"} in json.loads(reasons)


def test_flat_csv_extensions_and_the_frame_schema(store, tmp_path):
    path = tmp_path / "rich.csv"
    rows = flat_rows()
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    check_flat(store, import_path(store, SYSTEM, path), 4)


def test_flat_parquet_extensions_and_the_frame_schema(store, tmp_path):
    path = tmp_path / "rich.parquet"
    rows = flat_rows()
    table = pa.table({name: [row[name] for row in rows] for name in rows[0]})
    table = table.set_column(table.schema.get_field_index("criticality"), "criticality",
                             pa.array([int(row["criticality"]) for row in rows], pa.int64()))
    pq.write_table(table, path)
    check_flat(store, import_path(store, SYSTEM, path), 3)


def test_exports_carry_the_extensions_and_the_mitigation(store, tmp_path):
    path = tmp_path / "rich.jsonl"
    path.write_text(json.dumps(RECORD) + "\n", encoding="utf-8")
    import_path(store, SYSTEM, path)
    target = tmp_path / "scores.csv"
    assert export_scores(store, target) == 1
    (row,) = list(csv.DictReader(target.open(encoding="utf-8")))
    assert (row["stakes"], row["query_ambiguous"], row["gt_answer"]) == ("high", "false", "Support is Mon-Fri.")
    assert json.loads(row["retrieved_context"]) == CHUNKS
    # high stakes and a contradicted claim: seed 004 escalates, naming the claim
    assert (row["mitigation_action"], row["mitigation_rule"], row["mitigation_claim_id"]) == (
        "escalate", "contradicted", "ext-1-1")
    assert row["mitigation_reason"] == "escalate: claim 1 CONTRADICTED at Inference, high stakes"
    # a new register's profile carries Table IV's review rationale: the CONTRADICTED criticality-2 floor asks for
    # at least review
    assert (row["mitigation_policy_version"], row["action"], row["action_floor_rule_id"]) == (
        "1", "review", "contradicted-medium")
    assert row["decision"] == "review" and "mitigation escalate: claim 1 CONTRADICTED" in row["decision_reasons"]
    parquet = tmp_path / "scores.parquet"
    export_scores(store, parquet)
    exported = pq.read_table(parquet).to_pylist()[0]
    assert (exported["query_ambiguous"], exported["mitigation_action"]) == (False, "escalate")
