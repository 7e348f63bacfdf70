"""The labelling rubric as versioned data: the shipped file is version 1, a change is a new version in force,
an invalid or inconsistent rubric is refused naming the field, and claims below their category's minimum
criticality are flagged."""

from __future__ import annotations

import json

import pytest

from hri_core.rubric import rubric_from_dict
from register.errors import LabellingError, PermissionDenied
from register.labels import rubrics
from tests.helpers.labelling import ADA, RITA


def _shipped() -> dict:
    return json.loads(rubrics.DEFAULT_RUBRIC_PATH.read_text(encoding="utf-8"))


def test_the_shipped_rubric_is_version_1_and_a_change_is_a_new_version_in_force(lab):
    assert rubrics.current_rubric_version(lab) == 1
    assert rubrics.current_rubric(lab).fingerprint() == rubric_from_dict(_shipped()).fingerprint()
    changed = _shipped()
    changed["min_agreement_alpha"] = 0.8
    assert rubrics.publish_rubric(lab, ADA, changed, "stricter agreement") == 2
    assert rubrics.current_rubric(lab).min_agreement_alpha == 0.8
    assert rubrics.get_rubric(lab, 1).min_agreement_alpha == 0.667  # the old version is kept
    versions = rubrics.rubric_versions(lab)
    assert versions["rubric_version"].tolist() == [2, 1]
    assert versions.loc[0, "reason"] == "stricter agreement" and versions.loc[0, "created_by"] == "ada"
    event = lab.one("SELECT entity_id, after FROM audit_events WHERE action = 'rubric.publish' ORDER BY seq DESC")
    assert event["entity_id"] == "2" and json.loads(event["after"])["min_agreement_alpha"] == 0.8


def test_an_invalid_rubric_is_refused_naming_the_field_and_nothing_is_stored(lab):
    bad = _shipped()
    bad["categories"] = bad["categories"][:-1]
    with pytest.raises(LabellingError, match="categories: missing general"):
        rubrics.publish_rubric(lab, ADA, bad, "drop general")
    mismatch = _shipped()
    mismatch["labels"][2]["default_dimensions"] = ["F"]  # UNSUPPORTED counts in U in the profile
    with pytest.raises(LabellingError, match=r"labels\[2\].default_dimensions"):
        rubrics.publish_rubric(lab, ADA, mismatch, "wrong dimension")
    with pytest.raises(LabellingError, match="reason"):
        rubrics.publish_rubric(lab, ADA, _shipped(), "  ")
    assert rubrics.current_rubric_version(lab) == 1


def test_only_an_admin_publishes_a_rubric_and_a_refusal_is_audited(lab):
    with pytest.raises(PermissionDenied):
        rubrics.publish_rubric(lab, RITA, _shipped(), "try")
    assert lab.scalar("SELECT count(*) FROM audit_events WHERE action = 'denied' AND actor_name = 'rita'") == 1


def test_claims_below_their_categorys_minimum_criticality_are_flagged(lab):
    flags = rubrics.criticality_flags(lab)
    # r1-2 is contractual with criticality 1 (minimum 3); r1-1 has 3; r2/r3 have no category
    assert flags[["response_id", "claim_id", "category", "criticality", "min_criticality"]].values.tolist() == [
        ["r1", "r1-2", "contractual", 1, 3]]
    assert flags.loc[0, "message"] == "a contractual claim has criticality 1; rubric v1 requires at least 3"
    relaxed = _shipped()
    next(c for c in relaxed["categories"] if c["category"] == "contractual")["min_criticality"] = None
    rubrics.publish_rubric(lab, ADA, relaxed, "contracts without a minimum")
    assert rubrics.criticality_flags(lab).empty
