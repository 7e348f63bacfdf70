"""Scoring profiles: partial overrides, validation that names every problem with its path, fingerprints."""

from __future__ import annotations

import pytest

from hri_core import Dimension, Label, ProfileError, default_profile, profile_from_dict, recommended_profile
from hri_core.profile import RECOMPUTABLE_FIELDS, ScoringProfile, rescore_fields

DEFAULT = default_profile()


def problem_fields(data: dict) -> list[str]:
    with pytest.raises(ProfileError) as caught:
        profile_from_dict(data)
    shape = caught.value.as_dict()
    assert shape["error"] == "ProfileError"
    return [p["field"] for p in shape["problems"]]


# --- defaults and partial overrides ---------------------------------------------------------------

def test_default_profile_holds_the_papers_numbers():
    assert {d.value: w for d, w in DEFAULT.weights.items()} == {
        "F": 0.25, "C": 0.20, "U": 0.15, "O": 0.10, "S": 0.10, "P": 0.10, "H": 0.10}
    assert {label.value: m for label, m in DEFAULT.contributions.items()} == {
        "SUPPORTED": 0.0, "PARTIAL": 0.5, "UNSUPPORTED": 0.75, "CONTRADICTED": 1.0, "OUTDATED": 0.75,
        "OUT_OF_SCOPE": 0.75, "ACCESS_GAP": 0.6, "VALIDATED_NEGATIVE_FEEDBACK": 1.0}
    assert [(b.name, b.upper, b.action) for b in DEFAULT.bands] == [
        ("Low", 20, "release"), ("Medium", 50, "caution"), ("High", 75, "review"), ("Critical", 100, "block")]
    assert sorted((f.label.value, f.min_criticality, f.max_criticality, f.value) for f in DEFAULT.floors) == sorted([
        ("CONTRADICTED", 3, None, 0.70), ("CONTRADICTED", 2, 2, 0.50), ("ACCESS_GAP", 3, None, 0.55),
        ("OUT_OF_SCOPE", 3, None, 0.55), ("VALIDATED_NEGATIVE_FEEDBACK", 1, None, 0.50)])
    assert DEFAULT.feedback_half_life_days == 30.0
    assert DEFAULT.no_claims_action == "review"


def test_partial_weight_override_keeps_every_other_default():
    profile = profile_from_dict({"weights": {"F": 0.30, "C": 0.15}})
    assert profile.weights[Dimension.F] == 0.30 and profile.weights[Dimension.C] == 0.15
    for dim in ("U", "O", "S", "P", "H"):
        assert profile.weights[Dimension(dim)] == DEFAULT.weights[Dimension(dim)]
    assert profile.contributions == DEFAULT.contributions
    assert profile.default_dimensions == DEFAULT.default_dimensions
    assert profile.floors == DEFAULT.floors
    assert profile.bands == DEFAULT.bands
    assert profile.feedback_half_life_days == DEFAULT.feedback_half_life_days


def test_partial_contribution_override_keeps_the_other_labels():
    profile = profile_from_dict({"contributions": {"PARTIAL": 0.4}})
    assert profile.contributions[Label.PARTIAL] == 0.4
    assert {k: v for k, v in profile.contributions.items() if k != Label.PARTIAL} == {
        k: v for k, v in DEFAULT.contributions.items() if k != Label.PARTIAL}
    assert profile.weights == DEFAULT.weights


def test_override_is_laid_over_the_given_base():
    base = profile_from_dict({"feedback_half_life_days": 7, "name": "team", "version": 3})
    profile = profile_from_dict({"contributions": {"ACCESS_GAP": 0.9}}, base=base)
    assert (profile.feedback_half_life_days, profile.name, profile.version) == (7, "team", 3)
    assert profile.contributions[Label.ACCESS_GAP] == 0.9


def test_to_dict_round_trips():
    profile = profile_from_dict({"weights": {"F": 0.35, "H": 0.0}, "floors": []})
    assert profile_from_dict(profile.to_dict()) == profile


# --- validation -----------------------------------------------------------------------------------

def test_several_wrong_fields_give_several_problems_each_with_its_path():
    fields = problem_fields({
        "weights": {"F": -0.1},
        "contributions": {"PARTIAL": 1.5},
        "floors": [{"rule_id": "x", "label": "CONTRADICTED", "value": 1.5}],
        "bands": [{"name": "Low", "upper": 50, "action": "release"},
                  {"name": "High", "upper": 40, "action": "review"}],
        "feedback_half_life_days": 0,
    })
    assert set(fields) >= {"weights.F", "weights", "contributions.PARTIAL", "floors[0].value", "bands[1].upper",
                           "feedback_half_life_days"}


def test_unknown_top_level_field_is_reported_with_the_other_problems():
    fields = problem_fields({"wieghts": {"F": 1.0}, "contributions": {"PARTIAL": -0.5}})
    assert set(fields) == {"wieghts", "contributions.PARTIAL"}


@pytest.mark.parametrize(
    ("data", "fields"),
    [
        ({"weights": {"F": 0.35}}, ["weights"]),  # sums to 1.1
        ({"weights": {"H": 0.0}}, ["weights"]),  # sums to 0.9
        ({"weights": {"F": -0.05, "C": 0.5}}, ["weights.F"]),  # sums to 1 but a weight is negative
        ({"weights": {"F": float("inf")}}, ["weights.F", "weights"]),
        ({"weights": {"F": float("nan")}}, ["weights.F"]),
    ],
)
def test_weights_must_be_non_negative_and_sum_to_one(data, fields):
    assert problem_fields(data) == fields


def test_weights_within_tolerance_are_accepted():
    profile = profile_from_dict({"weights": {"F": 0.25 + 5e-10}})
    assert profile.weights[Dimension.F] == 0.25 + 5e-10


@pytest.mark.parametrize(
    ("bands", "fields"),
    [
        # not ordered
        ([{"name": "Low", "upper": 50, "action": "release"}, {"name": "High", "upper": 20, "action": "review"},
          {"name": "Critical", "upper": 100, "action": "block"}], ["bands[1].upper"]),
        # equal bounds are not ordered either
        ([{"name": "Low", "upper": 50, "action": "release"}, {"name": "High", "upper": 50, "action": "review"},
          {"name": "Critical", "upper": 100, "action": "block"}], ["bands[1].upper"]),
        # does not reach 100
        ([{"name": "Low", "upper": 20, "action": "release"}, {"name": "High", "upper": 90, "action": "review"}],
         ["bands[1].upper"]),
        # beyond the 0-100 scale
        ([{"name": "Low", "upper": 20, "action": "release"}, {"name": "High", "upper": 120, "action": "review"}],
         ["bands[1].upper"]),
        ([{"name": "Low", "upper": -1, "action": "release"}, {"name": "High", "upper": 100, "action": "review"}],
         ["bands[0].upper"]),
        # no bands at all
        ([], ["bands"]),
        # duplicate names
        ([{"name": "Low", "upper": 20, "action": "release"}, {"name": "Low", "upper": 100, "action": "block"}],
         ["bands[1].name"]),
        # unknown action
        ([{"name": "Low", "upper": 20, "action": "ship-it"}, {"name": "High", "upper": 100, "action": "block"}],
         ["bands[0].action"]),
    ],
)
def test_bands_must_be_ordered_and_end_at_100(bands, fields):
    assert problem_fields({"bands": bands}) == fields


def test_a_single_band_ending_at_100_is_valid():
    profile = profile_from_dict({"bands": [{"name": "All", "upper": 100, "action": "review"}]})
    assert profile.band_for(0).name == profile.band_for(100).name == "All"


@pytest.mark.parametrize(
    ("data", "fields"),
    [
        ({"contributions": {"PARTIAL": 1.01}}, ["contributions.PARTIAL"]),
        ({"contributions": {"ACCESS_GAP": -0.01}}, ["contributions.ACCESS_GAP"]),
        ({"floors": [{"rule_id": "a", "label": "CONTRADICTED", "value": 1.01}]}, ["floors[0].value"]),
        ({"floors": [{"rule_id": "a", "label": "CONTRADICTED", "value": -0.01}]}, ["floors[0].value"]),
        ({"floors": [{"rule_id": "a", "label": "CONTRADICTED", "min_criticality": 0, "value": 0.5}]},
         ["floors[0].min_criticality"]),
        ({"floors": [{"rule_id": "a", "label": "CONTRADICTED", "min_criticality": 3, "max_criticality": 2,
                      "value": 0.5}]}, ["floors[0].max_criticality"]),
        ({"floors": [{"rule_id": "a", "label": "CONTRADICTED", "value": 0.5},
                     {"rule_id": "a", "label": "OUTDATED", "value": 0.5}]}, ["floors[1].rule_id"]),
        ({"floors": [{"rule_id": "a", "label": "CONTRADICTED", "value": 0.5, "colour": "red"}]},
         ["floors[0].colour"]),
        ({"floors": [{"rule_id": "a", "label": "CONTRADICTED"}]}, ["floors[0].value"]),
        ({"feedback_half_life_days": 0}, ["feedback_half_life_days"]),
        ({"no_claims_action": "ignore"}, ["no_claims_action"]),
    ],
)
def test_floors_and_contributions_stay_in_unit_interval(data, fields):
    assert problem_fields(data) == fields


@pytest.mark.parametrize(
    ("data", "fields"),
    [
        ({"weights": {"X": 0.0}}, ["weights.X"]),
        ({"contributions": {"HALLUCINATED": 0.5}}, ["contributions.HALLUCINATED"]),
        ({"default_dimensions": {"HALLUCINATED": ["F"]}}, ["default_dimensions.HALLUCINATED"]),
        ({"default_dimensions": {"PARTIAL": ["Z"]}}, ["default_dimensions.PARTIAL[0]"]),
        ({"floors": [{"rule_id": "a", "label": "HALLUCINATED", "value": 0.5}]}, ["floors[0].label"]),
        ({"thresholds": {"Low": 20}}, ["thresholds"]),
    ],
)
def test_unknown_dimension_and_label_keys_are_rejected(data, fields):
    assert problem_fields(data) == fields


def test_profile_must_be_an_object():
    with pytest.raises(ProfileError) as caught:
        profile_from_dict([("weights", {})])  # type: ignore[arg-type]
    assert [p["field"] for p in caught.value.as_dict()["problems"]] == [""]


# --- fingerprint ----------------------------------------------------------------------------------

def test_fingerprint_is_stable_across_key_order():
    weights = {"F": 0.25, "C": 0.20, "U": 0.15, "O": 0.10, "S": 0.10, "P": 0.10, "H": 0.10}
    reversed_weights = dict(reversed(list(weights.items())))
    a = profile_from_dict({"weights": weights, "contributions": {"PARTIAL": 0.5, "SUPPORTED": 0.0}})
    b = profile_from_dict({"contributions": {"SUPPORTED": 0.0, "PARTIAL": 0.5}, "weights": reversed_weights})
    assert a.fingerprint() == b.fingerprint() == DEFAULT.fingerprint()
    assert profile_from_dict(DEFAULT.to_dict()).fingerprint() == DEFAULT.fingerprint()
    assert len(DEFAULT.fingerprint()) == 64


def test_fingerprint_changes_when_a_weight_changes():
    moved = profile_from_dict({"weights": {"F": 0.20, "C": 0.25}})
    assert moved.fingerprint() != DEFAULT.fingerprint()
    assert profile_from_dict({"weights": {"F": 0.25 + 1e-10}}).fingerprint() != DEFAULT.fingerprint()


@pytest.mark.parametrize(
    "override",
    [
        {"contributions": {"ACCESS_GAP": 0.61}},
        {"floors": []},
        {"bands": [{"name": "Low", "upper": 25, "action": "release"},
                   {"name": "Medium", "upper": 50, "action": "caution"},
                   {"name": "High", "upper": 75, "action": "review"},
                   {"name": "Critical", "upper": 100, "action": "block"}]},
        {"feedback_half_life_days": 31},
        {"default_dimensions": {"PARTIAL": ["C"]}},
        {"no_claims_action": "block"},
    ],
)
def test_fingerprint_covers_every_parameter(override):
    assert profile_from_dict(override).fingerprint() != DEFAULT.fingerprint()


def test_fingerprint_ignores_name_and_version():
    renamed = profile_from_dict({"name": "copy", "version": 2})
    assert renamed.fingerprint() == DEFAULT.fingerprint()


# --- what stored score rows can absorb (the impact preview's fast path) --------------------------------

def test_weights_bands_and_the_no_claims_action_need_no_rescore():
    draft = profile_from_dict({
        "weights": {"F": 0.4, "C": 0.1, "U": 0.2, "O": 0.1, "S": 0.1, "P": 0.05, "H": 0.05},
        "bands": [{"name": "Ok", "upper": 30, "action": "release"}, {"name": "Bad", "upper": 100, "action": "block"}],
        "no_claims_action": "block", "name": "renamed"}).model_copy(update={"version": 9})
    assert rescore_fields(draft, DEFAULT) == ()
    assert rescore_fields(DEFAULT, DEFAULT) == ()


@pytest.mark.parametrize(("override", "field"), [
    ({"contributions": {"PARTIAL": 0.4}}, "contributions"),
    ({"default_dimensions": {"PARTIAL": ["U", "F"]}}, "default_dimensions"),
    ({"floors": [{"rule_id": "contradicted-high", "label": "CONTRADICTED", "min_criticality": 3, "value": 0.71}]},
     "floors"),
    ({"feedback_half_life_days": 29.0}, "feedback_half_life_days"),
    ({"context_contradiction_dimensions": ["F"]}, "context_contradiction_dimensions"),
])
def test_every_other_change_needs_a_rescore(override, field):
    draft = profile_from_dict({**override, "weights": {"F": 0.3, "C": 0.15}})
    assert rescore_fields(draft, DEFAULT) == (field,)
    assert rescore_fields(DEFAULT, draft) == (field,)


def test_a_floors_minimum_action_or_order_needs_a_rescore():
    assert rescore_fields(recommended_profile(), DEFAULT) == ("floors",)  # min_action only
    reordered = DEFAULT.model_copy(update={"floors": tuple(reversed(DEFAULT.floors))})
    assert rescore_fields(reordered, DEFAULT) == ("floors",)


def test_a_field_added_later_needs_a_rescore_unless_listed():
    # the recomputable fields are an allow-list: any other parameter of the profile counts as a change
    others = set(ScoringProfile.model_fields) - RECOMPUTABLE_FIELDS - {"name", "version"}
    assert others == {"contributions", "default_dimensions", "floors", "feedback_half_life_days",
                      "feedback_repeat_window_days", "context_contradiction_dimensions"}
    # the feedback floor's window changes which claims fire it: a rescore
    windowed = DEFAULT.model_copy(update={"feedback_repeat_window_days": 10.0})
    assert rescore_fields(windowed, DEFAULT) == ("feedback_repeat_window_days",)
