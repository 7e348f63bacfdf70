"""The labelling rubric as data (issue 11 section 2): the shipped version 1 is complete, quotes the paper,
agrees with the scoring profile, sets minimum criticalities for the critical categories and flags the
claims below them; a malformed rubric names its field."""

from __future__ import annotations

import copy
import json

import pytest

from hri_core import default_profile, parse_response, profile_from_dict
from hri_core.profile import recommended_profile
from hri_core.rubric import (
    DEFAULT_RUBRIC_FILE,
    RubricError,
    criticality_flags,
    profile_mismatches,
    rubric_from_dict,
)
from hri_core.vocabulary import CATEGORIES, CRITICAL_INFORMATION_CATEGORIES, LABELS
from tests.helpers.paths import REPO_ROOT


def shipped() -> dict:
    return json.loads((REPO_ROOT / DEFAULT_RUBRIC_FILE).read_text(encoding="utf-8"))


RUBRIC = rubric_from_dict(shipped())


def test_shipped_rubric_is_version_1_and_complete():
    assert (RUBRIC.name, RUBRIC.version) == ("paper-provisional", 1)
    assert [g.label for g in RUBRIC.labels] == list(LABELS)
    assert [g.category for g in RUBRIC.categories] == list(CATEGORIES)
    assert all(g.definition and g.paper and g.examples for g in RUBRIC.labels if g.label.value != "SUPPORTED")
    assert sorted(RUBRIC.criticality_scale) == [1, 2, 3]
    assert RUBRIC.min_agreement_alpha == 0.667


@pytest.mark.parametrize(("label", "words"), [
    ("UNSUPPORTED", "Claim lacks explicit evidence."),
    ("CONTRADICTED", "(F), and (C) if contradicted by context"),
    ("CONTRADICTED", "Claim contradicts a reliable source."),
    ("OUTDATED", "Claim depends on data that may be stale."),
    ("OUT_OF_SCOPE", "Claim or request is outside the approved use case."),
    ("ACCESS_GAP", "Relevant evidence exists but cannot be accessed or used."),
    ("VALIDATED_NEGATIVE_FEEDBACK", "feedback confirmed by a reviewer, source check, or adjudication process"),
])
def test_label_guides_quote_the_paper(label, words):
    assert words in RUBRIC.label_guide(label).paper


def test_shipped_rubric_agrees_with_the_default_and_recommended_profiles():
    assert profile_mismatches(RUBRIC, default_profile()) == []
    assert profile_mismatches(RUBRIC, recommended_profile()) == []


def test_a_profile_that_moved_a_default_dimension_is_named():
    moved = profile_from_dict({"default_dimensions": {"PARTIAL": ["C"]}, "context_contradiction_dimensions": ["F"]})
    problems = profile_mismatches(RUBRIC, moved)
    assert [p.loc for p in problems] == [f"labels[{LABELS.index('PARTIAL')}].default_dimensions",
                                         "context_contradiction_dimensions"]
    assert "rubric says U" in problems[0].message and "says C" in problems[0].message


def test_critical_categories_carry_a_minimum_criticality():
    for guide in RUBRIC.categories:
        assert guide.critical_information == (guide.category in CRITICAL_INFORMATION_CATEGORIES)
        if guide.category == "general":
            assert guide.min_criticality is None and guide.suggested_criticality == 1
        else:
            assert guide.min_criticality is not None and guide.min_criticality >= 2
    # the paper's "legal, financial, safety, contractual, or compliance-critical claims" are high (3)
    for category in ("legal", "financial", "safety", "contractual", "compliance"):
        assert RUBRIC.category_guide(category).min_criticality == 3


def test_claims_below_their_category_minimum_are_flagged():
    response = parse_response({"response_id": "r", "claims": [
        {"labels": ["SUPPORTED"], "category": "legal", "criticality": 2},
        {"labels": ["SUPPORTED"], "category": "legal", "criticality": 3},
        {"labels": ["SUPPORTED"], "category": "health", "criticality": 1},
        {"labels": ["SUPPORTED"], "category": "general", "criticality": 1},
        {"labels": ["SUPPORTED"], "criticality": 1}]})
    flags = criticality_flags(response, RUBRIC)
    assert [(f.claim_id, f.category, f.criticality, f.min_criticality) for f in flags] == [
        ("r-1", "legal", 2, 3), ("r-3", "health", 1, 2)]
    assert flags[0].message == "a legal claim has criticality 2; rubric v1 requires at least 3"


def test_fingerprint_tracks_content_not_name():
    data = shipped()
    renamed = rubric_from_dict({**data, "name": "copy", "version": 2})
    assert renamed.fingerprint() == RUBRIC.fingerprint()
    data["categories"][0]["min_criticality"] = 2
    assert rubric_from_dict(data).fingerprint() != RUBRIC.fingerprint()


def broken(change) -> list[str]:
    data = copy.deepcopy(shipped())
    change(data)
    with pytest.raises(RubricError) as caught:
        rubric_from_dict(data)
    return [p["field"] for p in caught.value.as_dict()["problems"]]


def test_malformed_rubrics_name_the_field():
    assert broken(lambda d: d["labels"].pop()) == ["labels"]
    assert broken(lambda d: d["labels"].append(copy.deepcopy(d["labels"][0]))) == ["labels[8].label"]
    assert broken(lambda d: d["categories"][2].update(category="weather")) == ["categories[2].category"]
    assert broken(lambda d: d["categories"][0].update(min_criticality=0)) == ["categories[0].min_criticality"]
    assert broken(lambda d: d["categories"][9].update(min_criticality=2)) == ["categories[9].suggested_criticality"]
    assert broken(lambda d: d["labels"][3].update(default_dimensions=["Z"])) == ["labels[3].default_dimensions[0]"]
    assert broken(lambda d: d.pop("criticality_scale")) == ["criticality_scale"]
    assert broken(lambda d: d.update(criticality_scale={"2": "x"})) == ["criticality_scale"]
