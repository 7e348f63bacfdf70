"""Issue 12 section 4 and the context-contradiction rule in the register: floors that carry a minimum action
(Table IV's "Confirmed contradiction requiring review"), the seeded review-floors profile version, its impact
preview on the demo set, and a contradiction by the retrieved context counted in C as well as F."""

from __future__ import annotations

import json

import pytest

from hri_core import default_profile, parse_response, recommended_profile, score_response
from hri_core.profile import REVIEW_FLOOR_IDS
from hri_core.synthetic import generate_responses
from register import SYSTEM, Store
from register.db.store import Change
from register.demo import SYNTHETIC_SEED, demo_sources
from register.scoring.impact import impact_preview
from register.scoring.profiles import (
    ensure_review_floors_profile,
    get_profile,
    insert_profile,
    list_profiles,
    profile_meta,
)
from register.scoring.reproduce import reproduce
from register.scoring.scorer import rescore
from tests.helpers.parity import assert_matches, bulk_scores, check_parity, load
from tests.helpers.strategies import AS_OF

CONTRADICTED_MEDIUM = {"response_id": "cm", "claims": [
    {"claim_id": "cm-1", "labels": ["SUPPORTED"], "criticality": 2},
    {"claim_id": "cm-2", "labels": ["CONTRADICTED"], "criticality": 2}]}


def test_a_floor_minimum_action_routes_a_medium_contradiction_to_review(store):
    """Under the paper's profile a CONTRADICTED claim of criticality 2 scores 50: Medium, caution. With the
    floor's minimum action the band stays Medium and the action is review, naming the floor."""
    load(store, [CONTRADICTED_MEDIUM])
    paper = bulk_scores(store, default_profile(), AS_OF)["cm"]
    review = bulk_scores(store, recommended_profile(), AS_OF)["cm"]
    assert (paper["score"], paper["band"], paper["action"]) == (pytest.approx(50.0), "Medium", "caution")
    assert (review["score"], review["band"], review["action"]) == (pytest.approx(50.0), "Medium", "review")
    assert (review["action_floor_claim_id"], review["action_floor_rule_id"]) == ("cm-2", "contradicted-medium")
    assert paper["action_floor_rule_id"] is None
    assert_matches(review, score_response(parse_response(CONTRADICTED_MEDIUM), recommended_profile(), AS_OF))


def test_a_minimum_action_never_lowers_a_stricter_band_and_counts_when_not_decisive():
    high = {"response_id": "hi", "claims": [
        {"claim_id": "hi-1", "labels": ["CONTRADICTED"], "criticality": 3},  # 0.70: High, review
        {"claim_id": "hi-2", "labels": ["CONTRADICTED"], "criticality": 2}]}
    block = recommended_profile().model_copy(update={"floors": tuple(
        f.model_copy(update={"min_action": "block"}) if f.rule_id == "contradicted-medium" else f
        for f in recommended_profile().floors)})
    feedback = {"response_id": "fb", "claims": [
        {"claim_id": "fb-1", "labels": ["VALIDATED_NEGATIVE_FEEDBACK"], "feedback_at": "2026-11-30T00:00:00Z",
         "feedback_count": 3, "feedback_resolved": True}]}
    release = {"response_id": "ok", "claims": [{"claim_id": "ok-1", "labels": ["SUPPORTED"]}]}
    for profile in (recommended_profile(), block):
        check_parity([high, feedback, release, CONTRADICTED_MEDIUM], profile, AS_OF)
    expected = score_response(parse_response(high), block, AS_OF)
    # the decisive floor is hi-1's (0.70); the action comes from hi-2's minimum, not the decisive one
    assert (expected.action, expected.decisive_floor.claim_id, expected.action_floor.claim_id) == (
        "block", "hi-1", "hi-2")
    assert score_response(parse_response(feedback), recommended_profile(), AS_OF).action == "review"


@pytest.mark.parametrize(("contradicted_by", "dimensions", "s_c"), [
    ("context", None, 2 / 3), ("world", None, 0.0), (None, None, 0.0), ("context", ["F"], 0.0)])
def test_a_contradiction_by_the_retrieved_context_counts_in_c(store, contradicted_by, dimensions, s_c):
    """Table III: CONTRADICTED hits F, "and (C) if contradicted by context"; explicit dimensions still win."""
    claim = {"claim_id": "x-1", "labels": ["CONTRADICTED"], "criticality": 2}
    if contradicted_by:
        claim["contradicted_by"] = contradicted_by
    if dimensions:
        claim["dimensions"] = dimensions
    record = {"response_id": "x", "claims": [claim, {"claim_id": "x-2", "labels": ["SUPPORTED"]}]}
    load(store, [record])
    row = bulk_scores(store, default_profile(), AS_OF)["x"]
    assert (row["s_f"], row["s_c"]) == (pytest.approx(2 / 3), pytest.approx(s_c))
    assert_matches(row, score_response(parse_response(record), default_profile(), AS_OF))
    # a profile that turns the rule off (context dimensions = CONTRADICTED's defaults) counts F alone
    off = default_profile().model_copy(update={"context_contradiction_dimensions": ("F",)})
    assert bulk_scores(store, off, AS_OF)["x"]["s_c"] == 0.0


def test_the_review_floors_version_is_seeded_once_as_a_draft_in_a_register_of_the_plain_paper(tmp_path):
    """A register made before version 1 carried the review floors (its version 1 is the plain paper profile)."""
    store = Store(tmp_path / "older.duckdb")
    try:
        store.write(SYSTEM, "profile.create_default", lambda tx: Change(
            "scoring_profile", "1", None, {"status": "active"},
            result=insert_profile(tx, default_profile(), "active", SYSTEM, None, "paper defaults")))
        version = ensure_review_floors_profile(store, SYSTEM)
        assert ensure_review_floors_profile(store, SYSTEM) == version  # found by its fingerprint
        meta = profile_meta(store, version)
        assert (meta["status"], meta["based_on"], meta["fingerprint"]) == (
            "draft", 1, recommended_profile().fingerprint())
        assert "Confirmed contradiction requiring review" in meta["reason"]
        stored = get_profile(store, version)
        assert {f.rule_id: f.min_action for f in stored.floors} == {
            f.rule_id: ("review" if f.rule_id in REVIEW_FLOOR_IDS else None) for f in default_profile().floors}
        assert [r["status"] for r in list_profiles(store)] == ["active", "draft"]
    finally:
        store.close()


def _demo_records(synthetic: int) -> list[dict]:
    records = []
    for path in demo_sources():
        records += [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return records + list(generate_responses(synthetic, seed=SYNTHETIC_SEED))


def test_the_impact_preview_counts_the_answers_the_review_floors_route_to_review(demo_store):
    """The demo set, the plain paper profile previewed against the active version 1 (the review floors): the only
    change is review -> caution, as many answers as the reference scorer moves the other way, no band changes."""
    assert ensure_review_floors_profile(demo_store, SYSTEM) == 1  # a new register's version 1
    preview = impact_preview(demo_store, default_profile(), as_of=AS_OF)
    moved = 0
    for record in _demo_records(120):
        response = parse_response(record)
        plain = score_response(response, default_profile(), AS_OF)
        floors = score_response(response, recommended_profile(), AS_OF)
        assert floors.band == plain.band
        moved += (plain.action, floors.action) == ("caution", "review")
    assert moved > 0
    assert preview.action_moves("review", "caution") == moved
    assert preview.action_lines() == [f"{moved:,} review -> caution"]
    assert (preview.band_changes, preview.action_changes) == (0, moved)


def test_publishing_the_review_floors_reproduces_the_raised_actions(demo_store):
    version = ensure_review_floors_profile(demo_store, SYSTEM)
    rescore(demo_store, SYSTEM, get_profile(demo_store, version), as_of=AS_OF)
    raised = demo_store.query("SELECT response_id, action_floor_rule_id FROM scores WHERE is_current "
                              "AND action_floor_rule_id IS NOT NULL ORDER BY response_id LIMIT 5")
    assert raised and {rule for _, rule in raised} <= set(REVIEW_FLOOR_IDS)
    for rid, _ in raised:
        assert reproduce(demo_store, rid).matches, rid
