"""Floors that carry a minimum action (DOMAIN.md "Floors may carry a minimum action"; issue 12 section 4):
the action is the stricter of the band's and every fired floor's minimum, the band never changes, the
rule that raised the action is recorded, and the default profile is untouched."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from hri_core import ProfileError, default_profile, parse_response, profile_from_dict, score_response
from hri_core.explain import explain
from hri_core.profile import ACTIONS, REVIEW_FLOOR_IDS, recommended_profile, stricter_action

AS_OF = datetime(2026, 12, 1, tzinfo=UTC)


def score(claims: list[dict], profile):
    record = {"response_id": "r", "claims": [{"claim_id": f"c{i}", **c} for i, c in enumerate(claims, start=1)]}
    return score_response(parse_response(record), profile, AS_OF)


def floors_with(*minimums: tuple[str, str | None]) -> dict:
    """Default floors with ``min_action`` set per rule id."""
    wanted = dict(minimums)
    return {"floors": [{**rule.model_dump(mode="json"), "min_action": wanted.get(rule.rule_id)}
                       for rule in default_profile().floors]}


CONTRADICTED_2 = {"labels": ["CONTRADICTED"], "criticality": 2}
FEEDBACK_UNRESOLVED = {"labels": ["VALIDATED_NEGATIVE_FEEDBACK"], "feedback_resolved": False,
                       "feedback_at": (AS_OF - timedelta(days=90)).isoformat()}


def test_stricter_action_orders_release_caution_review_block():
    assert ACTIONS == ("release", "caution", "review", "block")
    for i, low in enumerate(ACTIONS):
        for high in ACTIONS[i:]:
            assert stricter_action(low, high) == high and stricter_action(high, low) == high


def test_default_profile_has_no_minimum_actions_and_keeps_its_dump():
    profile = default_profile()
    assert all(rule.min_action is None for rule in profile.floors)
    assert all("min_action" not in rule for rule in profile.to_dict()["floors"])
    result = score([CONTRADICTED_2], profile)
    assert (result.score, result.band, result.action, result.action_floor) == (50.0, "Medium", "caution", None)


def test_recommended_profile_routes_the_papers_review_floors_to_review():
    profile = recommended_profile()
    assert {r.rule_id: r.min_action for r in profile.floors} == {
        "contradicted-high": None, "contradicted-medium": "review", "access-gap-high": None,
        "out-of-scope-high": None, "feedback-repeated-or-unresolved": "review"}
    assert set(REVIEW_FLOOR_IDS) == {r.rule_id for r in profile.floors if r.min_action}
    assert profile.model_dump(exclude={"floors", "version"}) == default_profile().model_dump(
        exclude={"floors", "version"})
    for claims in ([CONTRADICTED_2], [FEEDBACK_UNRESOLVED]):
        result = score(claims, profile)
        assert (result.band, result.band_action, result.action) == ("Medium", "caution", "review")
        assert result.action_floor is not None and result.action_floor.rule_id in REVIEW_FLOOR_IDS


def test_the_band_is_never_changed_only_the_action():
    result = score([CONTRADICTED_2], recommended_profile())
    assert result.score == 50.0 and result.band == "Medium"


def test_a_minimum_below_the_bands_action_changes_nothing():
    profile = profile_from_dict(floors_with(("contradicted-high", "caution")))
    result = score([{"labels": ["CONTRADICTED"], "criticality": 3}], profile)
    assert (result.band, result.action, result.action_floor) == ("High", "review", None)


def test_every_fired_floor_counts_not_only_the_decisive_one():
    # the ACCESS_GAP floor (0.55, no minimum) is decisive; the CONTRADICTED v=2 floor (0.50) asks for block
    profile = profile_from_dict(floors_with(("contradicted-medium", "block")))
    result = score([CONTRADICTED_2, {"labels": ["ACCESS_GAP"], "criticality": 3}], profile)
    assert result.decisive_floor.rule_id == "access-gap-high"
    assert (result.band, result.band_action, result.action) == ("High", "review", "block")
    assert (result.action_floor.claim_id, result.action_floor.rule_id) == ("c1", "contradicted-medium")


def test_a_minimum_applies_when_the_additive_score_beats_every_floor():
    # a tiny floor value: it fires but does not decide the score; its minimum action still counts
    floors = [{**rule, "value": 0.01} if rule["rule_id"] == "contradicted-medium" else rule
              for rule in floors_with(("contradicted-medium", "block"))["floors"]]
    result = score([CONTRADICTED_2], profile_from_dict({"floors": floors}))
    assert result.hri_add > 0.01 and result.decisive_floor is None and len(result.floors) == 1
    assert (result.band_action, result.action, result.action_floor.rule_id) == (
        "caution", "block", "contradicted-medium")


def test_the_strictest_minimum_wins_and_the_first_keeps_a_tie():
    profile = profile_from_dict(floors_with(("contradicted-medium", "review"), ("feedback-repeated-or-unresolved",
                                                                                "review")))
    result = score([FEEDBACK_UNRESOLVED, CONTRADICTED_2], profile)
    assert (result.action, result.action_floor.claim_id, result.action_floor.rule_id) == (
        "review", "c1", "feedback-repeated-or-unresolved")
    stricter = profile_from_dict(floors_with(("contradicted-medium", "block"), ("feedback-repeated-or-unresolved",
                                                                                "review")))
    result = score([FEEDBACK_UNRESOLVED, CONTRADICTED_2], stricter)
    assert (result.action, result.action_floor.claim_id) == ("block", "c2")


def test_a_floor_that_does_not_fire_raises_nothing():
    resolved = {**FEEDBACK_UNRESOLVED, "feedback_resolved": True, "feedback_count": 1}
    result = score([resolved], recommended_profile())
    assert result.floors == () and result.action == result.band_action == "release"


def test_no_claims_keeps_the_no_claims_action():
    result = score([], recommended_profile())
    assert (result.no_claims, result.action, result.action_floor) == (True, "review", None)


def test_output_and_explanation_name_the_rule_that_raised_the_action():
    profile = recommended_profile()
    record = parse_response({"response_id": "r", "claims": [{"labels": ["SUPPORTED"]}, CONTRADICTED_2]})
    result = score_response(record, profile, AS_OF)
    assert result.to_output()["action_floor"] == {"claim_id": "r-2", "rule_id": "contradicted-medium"}
    assert result.floors[0].min_action == "review"
    text = explain(result, record, profile)
    assert "Action: review, raised from the band's caution" in text and "claim 2" in text
    plain = score_response(record, default_profile(), AS_OF)
    assert plain.to_output()["action_floor"] is None and explain(plain, record, default_profile()).endswith(
        "Action: caution.")


def test_min_action_round_trips_and_changes_the_fingerprint():
    profile = recommended_profile()
    assert profile_from_dict(profile.to_dict()) == profile
    assert profile.fingerprint() != default_profile().fingerprint()
    assert profile_from_dict(default_profile().to_dict()).fingerprint() == default_profile().fingerprint()


@pytest.mark.parametrize("bad", ["panic", "Review", 3])
def test_unknown_min_action_is_named(bad):
    with pytest.raises(ProfileError) as caught:
        profile_from_dict({"floors": [{"rule_id": "x", "label": "CONTRADICTED", "value": 0.5, "min_action": bad}]})
    assert [p["field"] for p in caught.value.as_dict()["problems"]] == ["floors[0].min_action"]
