"""Criticality sensitivity: the transitions equal the pure scorer's on the changed claims, and nothing is written."""

from __future__ import annotations

import copy
from collections import Counter
from datetime import UTC, datetime

import pytest

from hri_core import Response, score_response
from register.console.queries.filters import Filters
from register.errors import RegisterError
from register.evidence.criticality import NO_CATEGORY, criticality_sensitivity, parse_shifts
from register.scoring.profiles import active_profile
from tests.helpers.feedback import import_records

AS_OF = datetime(2026, 11, 1, tzinfo=UTC)


def _claim(i: int, label: str, criticality: int, category: str | None) -> dict:
    claim = {"claim_id": f"c{i}", "text": f"Claim {i}.", "labels": [label], "criticality": criticality}
    if category is not None:
        claim["category"] = category
    return claim


# contradicted legal claims of criticality 2 and 3 fire the paper's floors; flattened, they no longer do
RECORDS = [
    {"response_id": rid, "use_case": use_case, "model": "m1", "created_at": "2026-10-01T08:00:00Z",
     "question": "Q?", "answer": "A.", "claims": [_claim(i, *c) for i, c in enumerate(claims)]}
    for rid, use_case, claims in [
        ("a1", "contracts", [("CONTRADICTED", 3, "legal"), ("SUPPORTED", 1, "general")]),
        ("a2", "contracts", [("CONTRADICTED", 2, "legal"), ("SUPPORTED", 1, None), ("SUPPORTED", 1, None)]),
        ("a3", "contracts", [("UNSUPPORTED", 1, "general"), ("SUPPORTED", 3, "financial")]),
        ("a4", "hr", [("SUPPORTED", 2, "legal"), ("OUTDATED", 1, "general")]),
        ("a5", "hr", [("PARTIAL", 1, "financial"), ("UNSUPPORTED", 2, None)]),
        ("a6", "hr", [("SUPPORTED", 1, "general")]),
    ]]


def _expected(store, change, use_cases=()) -> tuple[Counter, Counter]:
    """The transitions by the pure scorer: each record scored as stored and with ``change(claim)`` applied."""
    profile = active_profile(store)
    bands, actions = Counter(), Counter()
    for record in RECORDS:
        if use_cases and record["use_case"] not in use_cases:
            continue
        changed = copy.deepcopy(record)
        for claim in changed["claims"]:
            claim["criticality"] = change(claim)
        before = score_response(Response.model_validate(record), profile, AS_OF)
        after = score_response(Response.model_validate(changed), profile, AS_OF)
        bands[(before.band, after.band)] += 1
        actions[(before.action, after.action)] += 1
    return bands, actions


def _got(result) -> tuple[Counter, Counter]:
    return (Counter({(a, b): int(n) for a, b, n in result.band_transitions.itertuples(index=False)}),
            Counter({(a, b): int(n) for a, b, n in result.action_transitions.itertuples(index=False)}))


def test_flattened_criticality_moves_answers_as_the_pure_scorer_does(store, tmp_path):
    import_records(store, tmp_path, RECORDS)
    result = criticality_sensitivity(store, flatten=True, as_of=AS_OF)
    bands, actions = _expected(store, lambda claim: 1)
    assert _got(result) == (bands, actions)
    assert result.answers == len(RECORDS)
    assert result.band_changes == sum(n for (a, b), n in bands.items() if a != b) > 0
    assert result.action_changes == sum(n for (a, b), n in actions.items() if a != b) > 0


def test_shifts_per_category_stay_within_bounds_and_follow_the_pure_scorer(store, tmp_path):
    import_records(store, tmp_path, RECORDS)
    shifts = {"legal": -5, "financial": 2, NO_CATEGORY: 1}
    result = criticality_sensitivity(store, shifts=shifts, as_of=AS_OF)

    def change(claim):
        amount = shifts.get(claim.get("category") or NO_CATEGORY, 0)
        return max(1, claim["criticality"] + amount)

    assert _got(result) == _expected(store, change)
    assert result.shifts == shifts and "legal -5" in result.scenario


def test_filters_count_only_the_answers_they_select(store, tmp_path):
    import_records(store, tmp_path, RECORDS)
    result = criticality_sensitivity(store, Filters(use_cases=("contracts",)), flatten=True, as_of=AS_OF)
    assert result.answers == 3
    assert _got(result) == _expected(store, lambda claim: 1, use_cases=("contracts",))


def test_nothing_is_written_and_the_claims_are_left_as_they_were(store, tmp_path):
    import_records(store, tmp_path, RECORDS)
    counts = "SELECT (SELECT count(*) FROM scores), (SELECT count(*) FROM audit_events), " \
             "(SELECT sum(criticality) FROM claims), (SELECT count(*) FROM duckdb_views() WHERE temporary)"
    before = store.query(counts)
    criticality_sensitivity(store, flatten=True, as_of=AS_OF)
    assert store.query(counts) == before
    with store.cursor() as cur:  # a fresh cursor reads the register's own claims
        assert cur.scalar("SELECT max(criticality) FROM claims") == 3


def test_matrices_are_square_with_zeros(store, tmp_path):
    import_records(store, tmp_path, RECORDS)
    result = criticality_sensitivity(store, flatten=True, as_of=AS_OF)
    bands = tuple(b.name for b in active_profile(store).bands)
    matrix = result.band_matrix(bands)
    assert list(matrix.index) == list(matrix.columns) == list(bands)
    assert int(matrix.to_numpy().sum()) == result.answers
    assert result.as_json()["band_transitions"][0]["answers"] >= 1


def test_bad_scenarios_are_refused(store):
    with pytest.raises(RegisterError, match="one of the two"):
        criticality_sensitivity(store)
    with pytest.raises(RegisterError, match="one of the two"):
        criticality_sensitivity(store, flatten=True, shifts={"legal": 1})
    with pytest.raises(RegisterError, match="'astrology'"):
        criticality_sensitivity(store, shifts={"astrology": 1})
    with pytest.raises(RegisterError, match="whole number"):
        criticality_sensitivity(store, shifts={"legal": 1.5})
    assert parse_shifts(["legal=+2", "general=-1"]) == {"legal": 2, "general": -1}
    with pytest.raises(RegisterError, match="CATEGORY=N"):
        parse_shifts(["legal"])
