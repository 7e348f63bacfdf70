"""Table-driven examples of ``score_response`` (DOMAIN.md sections 2 and 3, paper Tables III and IV)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from hri_core import Dimension, default_profile, parse_response, profile_from_dict, score_response
from hri_core.feedback import decay_factor

AS_OF = datetime(2026, 12, 1, tzinfo=UTC)


def iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def score(claims: list[dict], profile=None, as_of: datetime = AS_OF):
    record = {"response_id": "r", "claims": [{"claim_id": f"c{i}", **c} for i, c in enumerate(claims, start=1)]}
    return score_response(parse_response(record), profile or default_profile(), as_of)


def dims(result) -> dict[str, float]:
    return {d.value: v for d, v in result.dimensions.items()}


def nonzero(result) -> dict[str, float]:
    return {d: v for d, v in dims(result).items() if v}


# --- contributions: max per dimension, explicit dimensions, defaults ------------------------------

@pytest.mark.parametrize(
    ("claim", "expected"),
    [
        # PARTIAL defaults to U with 0.5
        ({"labels": ["PARTIAL"]}, {"U": 0.5}),
        # two labels on U: the larger counts, never the sum (0.75 + 0.6 would be 1.35)
        ({"labels": ["UNSUPPORTED", "ACCESS_GAP"], "dimensions": ["U"]}, {"U": 0.75}),
        ({"labels": ["ACCESS_GAP", "UNSUPPORTED"], "dimensions": ["U"]}, {"U": 0.75}),
        # a label repeated on one claim counts once
        ({"labels": ["OUTDATED", "OUTDATED"]}, {"O": 0.75}),
        # labels on different default dimensions each hit their own
        ({"labels": ["OUTDATED", "ACCESS_GAP"]}, {"O": 0.75, "P": 0.6}),
        # explicit dimensions replace the defaults
        ({"labels": ["PARTIAL"], "dimensions": ["C"]}, {"C": 0.5}),
        ({"labels": ["CONTRADICTED"], "dimensions": ["F", "C"]}, {"F": 1.0, "C": 1.0}),
        ({"labels": ["CONTRADICTED"]}, {"F": 1.0}),
        # explicit dimensions shared by two labels: still the max on each, not the sum
        ({"labels": ["UNSUPPORTED", "CONTRADICTED"], "dimensions": ["F", "U"]}, {"F": 1.0, "U": 1.0}),
        ({"labels": ["UNSUPPORTED", "ACCESS_GAP"], "dimensions": ["C"]}, {"C": 0.75}),
        # SUPPORTED adds nothing, even with explicit dimensions (it stands alone: tests/hri_core/test_label_sets.py)
        ({"labels": ["SUPPORTED"]}, {}),
        ({"labels": ["SUPPORTED"], "dimensions": ["F"]}, {}),
        # labels are read case-insensitively
        ({"labels": ["access_gap "]}, {"P": 0.6}),
    ],
)
def test_claim_contributions(claim, expected):
    result = score([claim])
    assert nonzero(result) == pytest.approx(expected, abs=1e-15)
    assert all(0.0 <= v <= 1.0 for v in dims(result).values())


def test_criticality_weights_the_mean():
    # U: (1 * 0.75 + 3 * 0.5) / 4; the criticality-3 PARTIAL pulls s_U towards 0.5
    result = score([{"labels": ["UNSUPPORTED"], "criticality": 1}, {"labels": ["PARTIAL"], "criticality": 3}])
    assert result.dimensions[Dimension.U] == pytest.approx((0.75 + 1.5) / 4, abs=1e-15)
    assert result.total_criticality == 4
    assert result.hri_add == pytest.approx(0.15 * 2.25 / 4, abs=1e-15)


def test_criticality_defaults_to_one():
    result = score([{"labels": ["UNSUPPORTED"]}, {"labels": ["SUPPORTED"]}])
    assert result.total_criticality == 2
    assert result.dimensions[Dimension.U] == pytest.approx(0.375, abs=1e-15)


# --- safety floors (Table IV) ---------------------------------------------------------------------

@pytest.mark.parametrize(
    ("label", "criticality", "rule_ids", "floor", "hri_add"),
    [
        ("CONTRADICTED", 1, [], 0.0, 0.25),
        ("CONTRADICTED", 2, ["contradicted-medium"], 0.50, 0.25),
        ("CONTRADICTED", 3, ["contradicted-high"], 0.70, 0.25),
        ("CONTRADICTED", 5, ["contradicted-high"], 0.70, 0.25),
        ("ACCESS_GAP", 1, [], 0.0, 0.06),
        ("ACCESS_GAP", 2, [], 0.0, 0.06),
        ("ACCESS_GAP", 3, ["access-gap-high"], 0.55, 0.06),
        ("ACCESS_GAP", 5, ["access-gap-high"], 0.55, 0.06),
        ("OUT_OF_SCOPE", 2, [], 0.0, 0.075),
        ("OUT_OF_SCOPE", 3, ["out-of-scope-high"], 0.55, 0.075),
        ("OUT_OF_SCOPE", 4, ["out-of-scope-high"], 0.55, 0.075),
        ("OUTDATED", 5, [], 0.0, 0.075),
        ("UNSUPPORTED", 5, [], 0.0, 0.1125),
        ("PARTIAL", 5, [], 0.0, 0.075),
    ],
)
def test_floor_boundaries(label, criticality, rule_ids, floor, hri_add):
    result = score([{"labels": [label], "criticality": criticality}])
    assert [f.rule_id for f in result.floors] == rule_ids
    assert all(f.claim_id == "c1" and f.criticality == criticality for f in result.floors)
    assert result.claims[0].floor == floor
    assert result.hri_add == pytest.approx(hri_add, abs=1e-15)
    assert result.hri == pytest.approx(max(hri_add, floor), abs=1e-15)
    assert (result.decisive_floor.rule_id if result.decisive_floor else None) == (rule_ids[0] if rule_ids else None)


def test_floor_reports_the_claim_and_the_highest_rule_decides():
    result = score([
        {"labels": ["ACCESS_GAP"], "criticality": 4},
        {"labels": ["SUPPORTED"], "criticality": 1},
        {"labels": ["CONTRADICTED"], "criticality": 2},
    ])
    assert [(f.claim_id, f.rule_id, f.value) for f in result.floors] == [
        ("c1", "access-gap-high", 0.55), ("c3", "contradicted-medium", 0.50)]
    assert result.hri == 0.55
    assert result.decisive_floor.claim_id == "c1"


def test_floor_below_additive_score_is_reported_but_not_decisive():
    # everything contradicted in F and C plus U: add = 0.25 + 0.20 + 0.15 = 0.60 > floor 0.50
    result = score([{"labels": ["CONTRADICTED"], "dimensions": ["F", "C", "U"], "criticality": 2}])
    assert result.hri_add == pytest.approx(0.60, abs=1e-15)
    assert [f.rule_id for f in result.floors] == ["contradicted-medium"]
    assert result.decisive_floor is None
    assert result.hri == result.hri_add


# --- validated negative feedback: decay and its floor ---------------------------------------------

@pytest.mark.parametrize(
    ("age_days", "expected"),
    [(0, 1.0), (30, 0.5), (60, 0.25), (90, 0.125), (15, 2 ** -0.5)],
)
def test_feedback_decays_with_a_30_day_half_life(age_days, expected):
    result = score([{"labels": ["VALIDATED_NEGATIVE_FEEDBACK"], "criticality": 1,
                     "feedback_at": iso(AS_OF - timedelta(days=age_days)), "feedback_count": 1,
                     "feedback_resolved": True}])
    assert result.claims[0].contributions[Dimension.H] == pytest.approx(expected, abs=1e-12)
    assert result.dimensions[Dimension.H] == pytest.approx(expected, abs=1e-12)
    assert result.hri_add == pytest.approx(0.10 * expected, abs=1e-12)
    assert result.floors == ()


def test_feedback_without_validation_time_counts_fully():
    result = score([{"labels": ["VALIDATED_NEGATIVE_FEEDBACK"], "feedback_count": 1, "feedback_resolved": True}])
    assert result.dimensions[Dimension.H] == 1.0


def test_feedback_after_as_of_contributes_nothing_and_fires_no_floor():
    result = score([{"labels": ["VALIDATED_NEGATIVE_FEEDBACK"], "criticality": 3,
                     "feedback_at": iso(AS_OF + timedelta(seconds=1)), "feedback_count": 5,
                     "feedback_resolved": False}])
    assert result.dimensions[Dimension.H] == 0.0
    assert result.floors == ()
    assert result.hri == 0.0
    # the same claim one day later counts (decayed by one second's worth) and fires its floor
    later = score([{"labels": ["VALIDATED_NEGATIVE_FEEDBACK"], "criticality": 3,
                    "feedback_at": iso(AS_OF + timedelta(seconds=1)), "feedback_count": 5,
                    "feedback_resolved": False}], as_of=AS_OF + timedelta(days=1))
    assert later.dimensions[Dimension.H] == pytest.approx(decay_factor(
        AS_OF + timedelta(seconds=1), AS_OF + timedelta(days=1), default_profile().decay_lambda), abs=1e-15)
    assert [f.rule_id for f in later.floors] == ["feedback-repeated-or-unresolved"]


@pytest.mark.parametrize(
    ("count", "resolved", "fires"),
    [
        (2, True, True),      # repeated
        (3, True, True),
        (1, False, True),     # unresolved
        (0, False, True),
        (1, None, True),      # resolution unknown counts as unresolved (fail closed)
        (None, None, True),
        (1, True, False),     # resolved and seen once: no floor
        (0, True, False),
        (None, True, False),
    ],
)
def test_feedback_floor_repeated_or_unresolved(count, resolved, fires):
    claim = {"labels": ["VALIDATED_NEGATIVE_FEEDBACK"], "feedback_at": iso(AS_OF - timedelta(days=10))}
    if count is not None:
        claim["feedback_count"] = count
    if resolved is not None:
        claim["feedback_resolved"] = resolved
    result = score([claim])
    assert [f.rule_id for f in result.floors] == (["feedback-repeated-or-unresolved"] if fires else [])
    expected_add = 0.10 * 2 ** (-10 / 30)
    assert result.hri_add == pytest.approx(expected_add, abs=1e-12)
    assert result.hri == pytest.approx(0.50 if fires else expected_add, abs=1e-12)


def test_feedback_fields_do_not_fire_the_feedback_floor_without_its_label():
    result = score([{"labels": ["UNSUPPORTED"], "feedback_count": 4, "feedback_resolved": False}])
    assert result.floors == ()


# --- bands ----------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("score_value", "band", "action"),
    [
        (0.0, "Low", "release"),
        (20.0, "Low", "release"),
        (20.000000000000004, "Low", "release"),  # 100 * (0.2 * 0.2 + 0.8 * 0.2) in floats
        (20.0000001, "Medium", "caution"),
        (50.0, "Medium", "caution"),
        (50.0000000004, "Medium", "caution"),    # float noise below 9 decimals is not a band change
        (50.000000001, "High", "review"),
        (75.0, "High", "review"),
        (75.0000001, "Critical", "block"),
        (100.0, "Critical", "block"),
    ],
)
def test_band_boundaries(score_value, band, action):
    chosen = default_profile().band_for(score_value)
    assert (chosen.name, chosen.action) == (band, action)


def weights(**overrides: float) -> dict[str, float]:
    """A full weight map: the named dimensions as given, the rest zero."""
    return {d.value: overrides.get(d.value, 0.0) for d in Dimension}


def test_score_of_exactly_twenty_built_through_weights_is_low():
    # w_F = 0.2, w_C = 0.8 and s_F = s_C = 1/5: HRI is 0.2 exactly on paper, but
    # 0.2 * 0.2 + 0.8 * 0.2 is 0.20000000000000004 in floats (score 20.000000000000004), and must stay Low
    profile = profile_from_dict({"weights": weights(F=0.2, C=0.8)})
    result = score([{"labels": ["CONTRADICTED"], "dimensions": ["F", "C"], "criticality": 1},
                    {"labels": ["SUPPORTED"], "criticality": 4}], profile)
    assert result.floors == ()
    assert result.dimensions[Dimension.F] == result.dimensions[Dimension.C] == 0.2
    assert result.hri == pytest.approx(0.2, abs=1e-15)
    assert result.score > 20.0  # the float artefact is really there...
    assert (result.band, result.action) == ("Low", "release")  # ...and does not move the band


def test_score_just_above_twenty_is_medium():
    profile = profile_from_dict({"weights": weights(F=0.200000001, C=0.799999999)})
    result = score([{"labels": ["CONTRADICTED"], "criticality": 1}], profile)
    assert (result.band, result.action) == ("Medium", "caution")


@pytest.mark.parametrize(
    ("floor_value", "band", "action"),
    [(0.5, "Medium", "caution"), (0.75, "High", "review"), (1.0, "Critical", "block"), (0.2, "Low", "release")],
)
def test_band_of_floored_scores_at_the_bounds(floor_value, band, action):
    profile = profile_from_dict({"floors": [{"rule_id": "x", "label": "OUTDATED", "value": floor_value}]})
    result = score([{"labels": ["OUTDATED"], "criticality": 1}], profile)
    assert result.hri == floor_value
    assert (result.band, result.action) == (band, action)


def test_response_with_no_claims_is_flagged_not_silently_low():
    profile = default_profile()
    result = score_response(parse_response({"response_id": "empty", "claims": []}), profile, AS_OF)
    assert result.no_claims is True
    assert (result.hri, result.hri_add, result.score) == (0.0, 0.0, 0.0)
    assert result.action == profile.no_claims_action == "review"
    assert result.to_output()["no_claims"] is True
    assert result.total_criticality == 0
    assert set(result.dimensions.values()) == {0.0}


def test_no_claims_action_comes_from_the_profile():
    profile = profile_from_dict({"no_claims_action": "block"})
    result = score_response(parse_response({"response_id": "empty", "claims": []}), profile, AS_OF)
    assert result.action == "block"


def test_all_supported_response_is_released_and_not_flagged():
    result = score([{"labels": ["SUPPORTED"], "criticality": 3}])
    assert result.no_claims is False
    assert (result.hri, result.band, result.action) == (0.0, "Low", "release")


def test_hri_add_is_capped_at_one():
    # weights within the 1e-9 tolerance but summing to slightly more than 1
    over = weights(F=0.25, C=0.20, U=0.15, O=0.10, S=0.10, P=0.10, H=0.1000000005)
    profile = profile_from_dict({"weights": over, "floors": []})
    claim = {"labels": ["CONTRADICTED"], "dimensions": [d.value for d in Dimension], "criticality": 2}
    result = score([claim], profile)
    assert all(v == 1.0 for v in result.dimensions.values())
    assert sum(over.values()) > 1.0
    assert result.hri_add == 1.0
    assert (result.score, result.band) == (100.0, "Critical")


def table_v_claims() -> list[dict]:
    return [
        {"labels": ["SUPPORTED"], "criticality": 1},
        {"labels": ["UNSUPPORTED"], "criticality": 2},
        {"labels": ["CONTRADICTED"], "dimensions": ["F", "C"], "criticality": 3},
        {"labels": ["OUTDATED"], "criticality": 2},
        {"labels": ["ACCESS_GAP"], "criticality": 2},
        {"labels": ["OUT_OF_SCOPE"], "criticality": 1},
    ]


@pytest.mark.parametrize(
    ("override", "hri_add", "hri", "band"),
    [
        # the paper's profile, for reference
        ({}, 1.92 / 11, 0.70, "High"),
        # partial weight override: F 0.5, H 0, the rest as given
        ({"weights": {"F": 0.5, "C": 0.1, "U": 0.1, "O": 0.1, "S": 0.1, "P": 0.1, "H": 0.0}}, 2.295 / 11, 0.70, "High"),
        # without floors the additive score stands: 17.45 -> Low
        ({"floors": []}, 1.92 / 11, 1.92 / 11, "Low"),
        # a lower CONTRADICTED floor and a harsher contribution for ACCESS_GAP (P: 2 * 1.0 / 11)
        ({"floors": [{"rule_id": "c", "label": "CONTRADICTED", "min_criticality": 3, "value": 0.4}],
          "contributions": {"ACCESS_GAP": 1.0}}, 2.0 / 11, 0.4, "Medium"),
        # moved band bounds: 70 is now Critical
        ({"bands": [{"name": "Low", "upper": 10, "action": "release"},
                    {"name": "Critical", "upper": 100, "action": "block"}]}, 1.92 / 11, 0.70, "Critical"),
    ],
)
def test_custom_profile_changes_the_result(override, hri_add, hri, band):
    profile = profile_from_dict(override)
    result = score(table_v_claims(), profile)
    assert result.hri_add == pytest.approx(hri_add, abs=1e-12)
    assert result.hri == pytest.approx(hri, abs=1e-12)
    assert result.band == band
    assert (result.profile_name, result.profile_version) == (profile.name, profile.version)


def test_custom_default_dimensions_change_where_a_label_lands():
    profile = profile_from_dict({"default_dimensions": {"PARTIAL": ["C"]}})
    result = score([{"labels": ["PARTIAL"]}], profile)
    assert nonzero(result) == {"C": 0.5}
    # an explicit list on the claim still wins over the profile's default
    explicit = score([{"labels": ["PARTIAL"], "dimensions": ["U"]}], profile)
    assert nonzero(explicit) == {"U": 0.5}


def test_custom_half_life():
    profile = profile_from_dict({"feedback_half_life_days": 10})
    result = score([{"labels": ["VALIDATED_NEGATIVE_FEEDBACK"], "feedback_count": 1, "feedback_resolved": True,
                     "feedback_at": iso(AS_OF - timedelta(days=20))}], profile)
    assert result.dimensions[Dimension.H] == pytest.approx(0.25, abs=1e-12)


def test_as_of_is_normalised_to_utc_and_kept():
    local = datetime(2026, 12, 1, 1, 0, tzinfo=timezone(timedelta(hours=1)))
    result = score([{"labels": ["VALIDATED_NEGATIVE_FEEDBACK"], "feedback_count": 1, "feedback_resolved": True,
                     "feedback_at": "2026-11-01T00:00:00Z"}], as_of=local)
    assert result.as_of == AS_OF
    assert result.dimensions[Dimension.H] == pytest.approx(0.5, abs=1e-12)
