"""Records of known properties for the console query and review tests, loaded through the real importer,
and what each response should look like computed independently in Python (``hri_core.score_response``)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from hri_core import parse_response, score_response
from hri_core.synthetic import generate_responses
from register import SYSTEM, Store
from register.console.queries.filters import NO_CLAIMS_STATE, Filters
from register.ingest.importer import import_path
from register.scoring.profiles import active_profile
from register.scoring.scorer import rescore

AS_OF = datetime(2027, 1, 1, tzinfo=UTC)
ALL_DIMS = ["F", "C", "U", "O", "S", "P", "H"]


def claim(text: str, labels: list[str], criticality: int = 1, **extra) -> dict:
    """One claim of an interchange record."""
    return {"text": text, "labels": labels, "criticality": criticality, **extra}


def handmade_records() -> list[dict]:
    """Records with known properties: a score of exactly 100, no claims, no creation time, and texts
    that tell an escaped search from an unescaped one."""
    base = {"use_case": "supplier-contracts", "model": "handmade", "question": "What does it say?"}
    return [
        {**base, "response_id": "hc-crit", "created_at": "2026-06-03T08:00:00Z", "answer": "Unlimited liability.",
         "claims": [claim("The liability cap is unlimited.", ["CONTRADICTED"], 3, dimensions=ALL_DIMS)]},
        {**base, "response_id": "hc-noclaims", "created_at": "2026-06-02T10:00:00Z", "answer": "I cannot say.",
         "claims": []},
        {**base, "response_id": "hc-nodate", "answer": "Fine.", "claims": [claim("All is fine.", ["SUPPORTED"])]},
        {**base, "response_id": "hc-nodate-high", "answer": "24/7.",
         "claims": [claim("The SLA includes 24/7 support.", ["CONTRADICTED"], 3)]},
        {**base, "response_id": "hc-us-1", "created_at": "2026-07-01T00:00:00Z", "answer": "See the code.",
         "claims": [claim("The code a_c is valid.", ["SUPPORTED"])]},
        {**base, "response_id": "hc-us-2", "created_at": "2026-07-01T00:00:00Z", "answer": "See the code.",
         "claims": [claim("The code abc is valid.", ["SUPPORTED"])]},
        {**base, "response_id": "hc-pct-1", "created_at": "2026-07-02T00:00:00Z", "answer": "Save 10%off today.",
         "claims": [claim("A discount applies.", ["PARTIAL"], 2)]},
        {**base, "response_id": "hc-pct-2", "created_at": "2026-07-02T00:00:00Z",
         "answer": "Save 10 items off today.", "claims": [claim("A discount applies.", ["PARTIAL"], 2)]},
        {**base, "response_id": "hc-slash", "created_at": "2026-07-03T00:00:00Z", "answer": r"Saved in C:\temp\x.",
         "claims": [claim("The zeppelinworthy clause was removed.", ["UNSUPPORTED"], 2)]},
    ]


def dataset() -> list[dict]:
    """160 seeded synthetic responses plus the hand-made ones."""
    return list(generate_responses(160, seed=3)) + handmade_records()


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def load(store: Store, tmp_path: Path, records: list[dict], name: str = "batch.jsonl") -> None:
    """Import through the real importer, then rescore everything at AS_OF (reproducible decay)."""
    report = import_path(store, SYSTEM, write_jsonl(tmp_path / name, records))
    assert report.quarantined == 0 and report.accepted == len(records)
    rescore(store, SYSTEM, active_profile(store), as_of=AS_OF)


@dataclass
class Row:
    """What one response should look like on the pages, computed in Python from its record."""

    response_id: str
    use_case: str | None
    model: str | None
    created_at: datetime | None
    question: str | None
    answer: str | None
    claim_texts: list[str]
    claim_count: int
    score: float
    band: str  # as the pages show it: the band, or NO_CLAIMS_STATE for a response without claims
    action: str
    no_claims: bool
    decisive: bool
    floors: list[tuple[str, str]]
    dims: dict[str, float]
    hri_add: float
    decision: str | None = None  # hri_core's decision and its reasons (with ``expected_rows(..., store=)``)
    decision_reasons: tuple[str, ...] = ()


def expected_rows(records: list[dict], profile, store: Store | None = None) -> list[Row]:
    """Each record scored with ``hri_core.score_response`` at AS_OF, as the pages should show it; with ``store``,
    its decision too (against the store's source register and active mitigation policy)."""
    from tests.helpers.parity import decision_inputs

    inputs = None if store is None else decision_inputs(store)  # read once: the store does not change meanwhile
    rows = []
    for record in records:
        response = parse_response(record)
        result = score_response(response, profile, AS_OF)
        rows.append(Row(
            response.response_id, response.use_case, response.model, response.created_at, response.question,
            response.answer, [c.text for c in response.claims], len(response.claims), result.score,
            NO_CLAIMS_STATE if result.no_claims else result.band, result.action, result.no_claims,
            result.decisive_floor is not None,
            [(fl.claim_id, fl.rule_id) for fl in result.floors],
            {d.value: v for d, v in result.dimensions.items()}, result.hri_add,
            *((None, ()) if store is None else _decided(store, record, profile, inputs))))
    return rows


def _decided(store: Store, record: dict, profile, inputs) -> tuple[str, tuple[str, ...]]:
    from tests.helpers.parity import pure_decision
    decision = pure_decision(store, record, profile, AS_OF, inputs)
    return decision.decision, decision.reasons


def select(rows: list[Row], f: Filters) -> list[Row]:
    """The Python reading of a Filters (profile_version aside)."""
    out = []
    for row in rows:
        day = row.created_at.astimezone(UTC).date() if row.created_at else None
        if f.date_from and (day is None or day < f.date_from):
            continue
        if f.date_to and (day is None or day > f.date_to):
            continue
        if f.use_cases and row.use_case not in f.use_cases:
            continue
        if f.models and row.model not in f.models:
            continue
        if f.bands and row.band not in f.bands:
            continue
        if f.decisions and row.decision not in f.decisions:
            continue
        out.append(row)
    return out
