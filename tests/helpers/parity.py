"""The SQL-versus-Python scorer comparison shared by the parity and decisive-floor tests: load records
into a register as one batch, read the bulk SQL scorer's rows and fired floors, and compare them with
``hri_core.score_response`` to 1e-9."""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from hri_core import DIMENSIONS, ScoringProfile, parse_response, score_response
from hri_core.scoring import ScoreResult
from register import Actor, Store
from register.db.store import Change, utc_now
from register.ingest.records import insert_responses
from register.scoring.scorer import DIM_COLUMNS, fired_floors_query, score_query
from tests.helpers.actors import enrol
from tests.helpers.fresh import fresh_store

TOLERANCE = 1e-9
ANALYST = Actor("Dana Analyst", "admin")

SCORE_COLUMNS = ("response_id", "revision", *DIM_COLUMNS.values(), "hri_add", "hri", "score", "band", "action",
                 "no_claims", "total_criticality", "floors_fired", "decisive_claim_id", "decisive_rule_id",
                 "scoring_failure", "action_floor_claim_id", "action_floor_rule_id")


def load(store: Store, records: list[dict], source_name: str = "test.jsonl") -> int:
    """Import validated records as one batch (an ``import_batches`` row first, as the importer does), as
    ``ANALYST`` (given an account here: the register re-reads it on every write)."""
    enrol(store, ANALYST)
    parsed = [(parse_response(record), json.dumps(record)) for record in records]

    def fn(cur) -> Change:
        batch_id = cur.scalar("SELECT nextval('seq_batch')")
        now = utc_now()
        cur.execute("INSERT INTO import_batches (batch_id, source_name, format, started_at, actor_name, "
                    "records_total) VALUES (?, ?, 'jsonl', ?, ?, ?)",
                    [batch_id, source_name, now, ANALYST.name, len(parsed)])
        counts = insert_responses(cur, batch_id, now, parsed)
        return Change("import_batch", str(batch_id), None, {"new_responses": counts.new_responses}, result=batch_id)

    return store.write(ANALYST, "import.file", fn)


def bulk_scores(store: Store, profile: ScoringProfile, as_of: datetime, batch_id: int | None = None) -> dict:
    """The SQL scorer's rows, by response id, as dicts."""
    sql, params = score_query(profile, as_of, batch_id=batch_id)
    assert isinstance(params, dict)
    rows = store.query(f"SELECT {', '.join(SCORE_COLUMNS)} FROM ({sql}) AS scored", params)
    return {row[0]: dict(zip(SCORE_COLUMNS, row, strict=True)) for row in rows}


def fired_floors(store: Store, profile: ScoringProfile, as_of: datetime, batch_id: int | None = None) -> dict:
    """Every fired floor by response id: (claim_id, rule_id, label, criticality, value), in claim then rule order."""
    sql, params = fired_floors_query(profile, as_of, batch_id=batch_id)
    out: dict[str, list[tuple]] = {}
    for rid, _revision, _idx, claim_id, rule_id, label, criticality, value in store.query(sql, params):
        out.setdefault(rid, []).append((claim_id, rule_id, label, criticality, value))
    return out


def expected_floors(result: ScoreResult) -> list[tuple]:
    return [(f.claim_id, f.rule_id, f.label.value, f.criticality, f.value) for f in result.floors]


def stored_scores(store: Store, where: str = "is_current", params: list | None = None) -> dict:
    """Rows of the ``scores`` table by response id (``where`` is a fixed test condition)."""
    columns = ("response_id", "run_id", "revision", "profile_version", "as_of", "is_current",
               *(c for c in SCORE_COLUMNS if c not in ("response_id", "revision")))
    rows = store.query(f"SELECT {', '.join(columns)} FROM scores WHERE {where} ORDER BY response_id, run_id",
                       params or [])
    out: dict[str, list[dict]] = {}
    for row in rows:
        out.setdefault(row[0], []).append(dict(zip(columns, row, strict=True)))
    return out


def assert_matches(row: dict, expected: ScoreResult) -> None:
    """One SQL score row against the reference score of the same response."""
    rid = expected.response_id
    assert row["scoring_failure"] is None, (rid, row["scoring_failure"])  # a valid record always scores
    for dim in DIMENSIONS:
        assert row[DIM_COLUMNS[dim]] == pytest.approx(expected.dimensions[dim], abs=TOLERANCE), (rid, dim.value)
    assert row["hri_add"] == pytest.approx(expected.hri_add, abs=TOLERANCE), rid
    assert row["hri"] == pytest.approx(expected.hri, abs=TOLERANCE), rid
    assert row["score"] == pytest.approx(expected.score, abs=TOLERANCE), rid
    assert (row["band"], row["action"], row["no_claims"]) == (expected.band, expected.action, expected.no_claims), rid
    assert row["total_criticality"] == expected.total_criticality, rid
    assert row["floors_fired"] == len(expected.floors), rid
    decisive = expected.decisive_floor
    assert (row["decisive_claim_id"], row["decisive_rule_id"]) == (
        (decisive.claim_id, decisive.rule_id) if decisive else (None, None)), rid
    raised = expected.action_floor
    assert (row["action_floor_claim_id"], row["action_floor_rule_id"]) == (
        (raised.claim_id, raised.rule_id) if raised else (None, None)), rid


def score_in_fresh_db(records: list[dict], profile: ScoringProfile, as_of: datetime,
                      register: dict | None = None) -> tuple[dict, dict]:
    """Load ``records`` into a throwaway register; return the bulk scorer's rows and fired floors by response.
    With a source ``register`` (``strategies.source_registers``), also rescore and check every stored decision
    against the pure one (``check_decisions``)."""
    with tempfile.TemporaryDirectory() as folder:
        store = fresh_store(Path(folder) / "parity.duckdb")  # a copy of a migrated file
        try:
            load(store, records)
            if register is not None:
                add_register(store, register)
                check_decisions(store, records, profile, as_of)
            return bulk_scores(store, profile, as_of), fired_floors(store, profile, as_of)
        finally:
            store.close()


@dataclass(frozen=True)
class DecisionInputs:
    """What ``pure_decision`` reads from the store besides the record: read once for many records."""

    policy: Any
    sources: dict
    requester_roles: dict
    rules: Any
    use_case_statuses: dict


def decision_inputs(store: Store) -> DecisionInputs:
    """The store's mitigation policy, source register, requesters, authority rules and use-case statuses."""
    from register.scoring.authority_rules import authority_rules, requester_roles
    from register.scoring.mitigation import active_policy
    from register.scoring.preview import use_case_statuses

    return DecisionInputs(active_policy(store), register_sources(store), requester_roles(store),
                          authority_rules(store), use_case_statuses(store))


def pure_decision(store: Store, record: dict, profile: ScoringProfile, as_of: datetime,
                  inputs: DecisionInputs | None = None):
    """``hri_core``'s decision on ``record``: score_response, the Authority checks against the store's register,
    the mitigation reading them, decide_answer. ``inputs``: ``decision_inputs(store)`` read once by a caller that
    decides many records on an unchanged store (else read here)."""
    from hri_core.decision import authority_findings, decide_scored, scope_finding
    from hri_core.mitigation import decide

    inputs = inputs or decision_inputs(store)
    response = parse_response(record)
    results = pure_authority(store, response, as_of, inputs)
    mitigation = decide(response, inputs.policy, authority={r.claim_id: r.failures for r in results})
    return decide_scored(score_response(response, profile, as_of), mitigation=mitigation, authority=authority_findings(
        response, results, unmarked_claims_core=inputs.policy.unmarked_claims_core),
        scope=scope_finding(response.use_case, inputs.use_case_statuses))


def check_decisions(store: Store, records: list[dict], profile: ScoringProfile, as_of: datetime) -> None:
    """A rescore under ``profile`` stores on every record's row the decision and reasons ``pure_decision`` gives."""
    from register import SYSTEM
    from register.scoring.scorer import rescore

    rescore(store, SYSTEM, profile, as_of=as_of)
    stored = {rid: (decision, list(reasons)) for rid, decision, reasons in store.query(
        "SELECT response_id, decision, decision_reasons FROM scores WHERE is_current")}
    inputs = decision_inputs(store)
    for record in records:
        want = pure_decision(store, record, profile, as_of, inputs)
        assert stored[record["response_id"]] == (want.decision, list(want.reasons)), record


def check_parity(records: list[dict], profile: ScoringProfile, as_of: datetime, register: dict | None = None) -> None:
    """Every record's SQL row and fired floors equal its reference score under ``profile`` at ``as_of`` (and, with
    a source ``register``, its stored decision the pure one)."""
    rows, floors = score_in_fresh_db(records, profile, as_of, register)
    assert sorted(rows) == sorted(r["response_id"] for r in records)
    for record in records:
        rid = record["response_id"]
        expected = score_response(parse_response(record), profile, as_of)
        assert_matches(rows[rid], expected)
        assert floors.get(rid, []) == expected_floors(expected), rid


def add_register(store: Store, register: dict) -> None:
    """Record a ``strategies.source_registers`` register: its sources, its use cases' requesters and its
    approved-use-case register rows."""
    from register import SYSTEM
    from register.governance.registers import add_row
    from register.scoring.authority_rules import save_use_cases

    for row in register["sources"]:
        add_row(store, SYSTEM, "sources", row)
    save_use_cases(store, SYSTEM, register["use_cases"], "parity")
    for row in register.get("use_case_register", ()):
        add_row(store, SYSTEM, "usecases", row)


def register_sources(store: Store) -> dict:
    """The source register as ``hri_core.authority.SourceRecord`` by id (deleted rows left out: unknown)."""
    from hri_core.authority import SourceRecord
    from register.governance.registers import list_sources

    def na(value) -> bool:
        return value is None or (not hasattr(value, "__len__") and pd_isna(value))

    out = {}
    for r in list_sources(store).to_dict("records"):
        out[r["source_id"]] = SourceRecord.model_validate(
            {**r, "restricted_to": None if na(r["restricted_to"]) else list(r["restricted_to"]),
             "authority_tier": None if na(r["authority_tier"]) else int(r["authority_tier"]),
             "valid_until": None if na(r["valid_until"]) else r["valid_until"],
             "superseded_by": None if na(r["superseded_by"]) else r["superseded_by"]})
    return out


def pure_authority(store: Store, response, as_of: datetime, inputs: DecisionInputs | None = None) -> tuple:
    """``hri_core.authority.check_response`` of ``response`` against the store's register, rules and requesters
    (from ``inputs`` when a caller read them once, else read here)."""
    from hri_core.authority import check_response
    from register.scoring.authority_rules import authority_rules, requester_roles

    sources, roles, rules = ((inputs.sources, inputs.requester_roles, inputs.rules) if inputs is not None else
                             (register_sources(store), requester_roles(store), authority_rules(store)))
    return check_response(response, sources, as_of=as_of, requester_roles=roles.get(response.use_case or ""),
                          rules=rules)


def pd_isna(value) -> bool:
    import pandas as pd
    return bool(pd.isna(value))
