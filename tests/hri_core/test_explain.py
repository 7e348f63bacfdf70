"""The plain-language explanation names what decided the band."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from hri_core import default_profile, parse_response, profile_from_dict, score_response
from hri_core.explain import explain
from tests.helpers.paths import REPO_ROOT

AS_OF = datetime(2026, 12, 1, tzinfo=UTC)


def _explain(record, profile=None):
    profile = profile or default_profile()
    response = parse_response(record)
    return explain(score_response(response, profile, AS_OF), response, profile)


def test_table_v_names_claim_3_the_floor_and_the_additive_score():
    record = json.loads((REPO_ROOT / "data" / "table_v_supplier_contract.jsonl").read_text())
    text = _explain(record)
    assert text.startswith("High because claim 3 (criticality 3) is CONTRADICTED by the retrieved context")
    assert "0.70 safety floor" in text and "additive 0.17" in text and text.endswith("Action: review.")


def test_contradiction_without_context_dimension_does_not_claim_retrieved_context():
    text = _explain({"response_id": "r", "claims": [{"labels": ["CONTRADICTED"], "criticality": 2}]})
    assert "is CONTRADICTED:" in text and "retrieved context" not in text and "0.50 safety floor" in text


def test_without_floor_the_two_largest_weighted_dimensions_are_named():
    text = _explain({"response_id": "r", "claims": [
        {"labels": ["UNSUPPORTED"]}, {"labels": ["OUTDATED"]}, {"labels": ["SUPPORTED"]}]})
    # U: 0.15 * 0.25 = 0.0375 ; O: 0.10 * 0.25 = 0.025
    assert "driven by U unsupportedness (0.037" in text or "driven by U unsupportedness (0.038" in text
    assert "O obsolescence (0.025)" in text and "no safety floor" in text


def test_weights_come_from_the_profile():
    profile = profile_from_dict({"weights": {"F": 0.05, "C": 0.05, "U": 0.05, "O": 0.65, "S": 0.1, "P": 0.05,
                                             "H": 0.05}})
    text = _explain({"response_id": "r", "claims": [{"labels": ["UNSUPPORTED"]}, {"labels": ["OUTDATED"]}]},
                    profile)
    assert text.index("O obsolescence") < text.index("U unsupportedness")


def test_no_claims_says_it_cannot_be_judged():
    text = _explain({"response_id": "r", "claims": []})
    assert text.startswith("No claims") and "review" in text


def test_all_supported():
    assert "every claim is supported" in _explain({"response_id": "r", "claims": [{"labels": ["SUPPORTED"]}]})
