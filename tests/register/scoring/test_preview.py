"""decision_of: the pure path on the register's current settings gives the one decision and its reasons; lowers
compares two decisions by severity."""

from __future__ import annotations

from datetime import UTC, datetime

from hri_core import parse_response
from hri_core.decision import Decision
from register.scoring.preview import decision_of, lowers, register_settings

AS_OF = datetime(2026, 12, 1, tzinfo=UTC)


def _answer(label: str, criticality: int):
    return parse_response({"response_id": "r", "answer": "a", "stakes": "high", "created_at": "2026-11-01T00:00:00Z",
                           "claims": [{"claim_id": "c1", "text": "t", "labels": [label], "criticality": criticality}]})


def test_a_contradicted_serious_claim_needs_a_person_and_a_supported_one_does_not(store):
    contradicted = decision_of(store, _answer("CONTRADICTED", 3), as_of=AS_OF)
    supported = decision_of(store, _answer("SUPPORTED", 3), as_of=AS_OF)
    assert contradicted.decision in ("review", "block") and contradicted.reasons[0].startswith("band ")
    assert any(r.startswith("mitigation ") for r in contradicted.reasons)
    assert lowers(contradicted, supported) and not lowers(supported, contradicted)


def test_settings_read_once_give_the_same_decision(store):
    answer = _answer("UNSUPPORTED", 2)
    assert decision_of(store, answer, as_of=AS_OF, settings=register_settings(store, [answer])) == \
        decision_of(store, answer, as_of=AS_OF)


def test_lowers_is_strict():
    review = Decision(decision="review", reasons=())
    assert not lowers(review, review) and lowers(review, Decision(decision="caution", reasons=()))
