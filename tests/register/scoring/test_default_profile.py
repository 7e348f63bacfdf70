"""A new register's first active profile carries Table IV's review rationale (issue 33, item 7).

Table IV calls a CONTRADICTED claim of criticality 2 a "Confirmed contradiction requiring review", yet the
paper's plain parameters give it 50, Medium, caution: a new register released it. Version 1 is now
``hri_core.recommended_profile()``; the plain parameters stay available as ``hri_core.default_profile()``.
"""

from __future__ import annotations

import json

from hri_core import default_profile, parse_response, score_response
from hri_core.profile import REVIEW_FLOOR_IDS, recommended_profile
from register import SYSTEM
from register.scoring.profiles import (
    active_profile,
    create_draft,
    ensure_review_floors_profile,
    list_profiles,
    profile_meta,
)
from register.scoring.scorer import rescore
from tests.helpers.actors import ANN
from tests.helpers.parity import load, stored_scores
from tests.helpers.strategies import AS_OF


def test_version_1_is_the_paper_with_table_iv_review_floors(store):
    profile = active_profile(store)
    assert profile.version == 1
    assert profile.fingerprint() == recommended_profile().fingerprint()
    assert {f.rule_id for f in profile.floors if f.min_action == "review"} == set(REVIEW_FLOOR_IDS)
    meta = profile_meta(store, 1)
    assert meta["status"] == "active"
    assert "Confirmed contradiction requiring review" in meta["reason"]
    assert "Confirmed unresolved feedback indicates persistent system risk" in meta["reason"]


def test_a_medium_contradiction_goes_to_review_in_a_new_register(store):
    record = {"response_id": "medium", "claims": [
        {"claim_id": "c1", "labels": ["CONTRADICTED"], "criticality": 2},
        {"claim_id": "c2", "labels": ["SUPPORTED"], "criticality": 3}]}
    load(store, [record])
    rescore(store, SYSTEM, active_profile(store), as_of=AS_OF)
    row = stored_scores(store)["medium"][-1]
    assert (row["score"], row["band"], row["action"], row["action_floor_rule_id"]) == (
        50.0, "Medium", "review", "contradicted-medium")
    # the plain paper parameters would have released it with caution
    plain = score_response(parse_response(json.loads(json.dumps(record))), default_profile(), AS_OF)
    assert plain.action == "caution"


def test_the_review_floors_draft_is_version_1_and_the_plain_paper_stays_available(store):
    assert ensure_review_floors_profile(store, SYSTEM) == 1  # nothing written: version 1 has them
    assert [r["profile_version"] for r in list_profiles(store)] == [1]
    plain = create_draft(store, ANN, {"floors": [f.model_dump(mode="json") for f in default_profile().floors]})
    assert profile_meta(store, plain)["fingerprint"] == default_profile().fingerprint()
