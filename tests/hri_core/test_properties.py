"""Properties of the HRI that hold for every response and every valid profile (Hypothesis)."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from hri_core import DIMENSIONS, default_profile, parse_response, score_response
from tests.helpers.strategies import AS_OF, claim_bodies, profiles, response_dicts, responses

SETTINGS = settings(max_examples=200, deadline=None)
DEFAULT = default_profile()


def scored(record: dict, profile=DEFAULT):
    return score_response(parse_response(record), profile, AS_OF)


def assert_bounded(result) -> None:
    assert 0.0 <= result.hri_add <= 1.0
    assert 0.0 <= result.hri <= 1.0
    assert 0.0 <= result.score <= 100.0
    for dim in DIMENSIONS:
        assert 0.0 <= result.dimensions[dim] <= 1.0, dim


@SETTINGS
@given(records=responses())
def test_hri_and_dimensions_stay_in_unit_interval(records):
    for record in records:
        assert_bounded(scored(record))


@SETTINGS
@given(record=response_dicts(), profile=profiles())
def test_random_profiles_keep_hri_in_unit_interval(record, profile):
    result = scored(record, profile)
    assert_bounded(result)
    assert result.band in {b.name for b in profile.bands}


@SETTINGS
@given(record=response_dicts(), profile=hs.sampled_from([DEFAULT]) | profiles())
def test_floors_never_lower_a_score(record, profile):
    result = scored(record, profile)
    assert result.hri >= result.hri_add
    top = max((f.value for f in result.floors), default=0.0)
    assert result.hri == max(result.hri_add, top)
    if result.decisive_floor is not None:
        assert result.decisive_floor.value == result.hri > result.hri_add


@SETTINGS
@given(record=response_dicts(min_claims=1), profile=hs.sampled_from([DEFAULT]) | profiles(), data=hs.data())
def test_claim_order_never_matters(record, profile, data):
    shuffled = dict(record, claims=data.draw(hs.permutations(record["claims"])))
    a, b = scored(record, profile), scored(shuffled, profile)
    for dim in DIMENSIONS:
        assert a.dimensions[dim] == pytest.approx(b.dimensions[dim], abs=1e-12)
    assert a.hri_add == pytest.approx(b.hri_add, abs=1e-12)
    assert a.hri == pytest.approx(b.hri, abs=1e-12)
    assert (a.band, a.action) == (b.band, b.action)
    assert sorted((f.claim_id, f.rule_id) for f in a.floors) == sorted((f.claim_id, f.rule_id) for f in b.floors)


@SETTINGS
@given(record=response_dicts(min_claims=1), profile=hs.sampled_from([DEFAULT]) | profiles(),
       extra=claim_bodies(labels=hs.just(["SUPPORTED"])))
def test_adding_a_supported_claim_never_raises_a_dimension(record, profile, extra):
    before = scored(record, profile)
    more = dict(record, claims=[*record["claims"], {"claim_id": "extra-supported", **extra}])
    after = scored(more, profile)
    for dim in DIMENSIONS:
        assert after.dimensions[dim] <= before.dimensions[dim], dim
    assert after.hri_add <= before.hri_add
    if profile is DEFAULT:  # (a custom profile may put a floor on SUPPORTED; the paper's has none)
        assert after.floors == before.floors
        assert after.hri <= before.hri


@SETTINGS
@given(record=response_dicts(min_claims=1), profile=hs.sampled_from([DEFAULT]) | profiles(),
       factor=hs.integers(2, 20))
def test_scaling_criticalities_leaves_dimensions_unchanged(record, profile, factor):
    scaled = dict(record, claims=[dict(c, criticality=c["criticality"] * factor) for c in record["claims"]])
    a, b = scored(record, profile), scored(scaled, profile)
    assert b.total_criticality == factor * a.total_criticality
    for dim in DIMENSIONS:
        assert b.dimensions[dim] == pytest.approx(a.dimensions[dim], abs=1e-12), dim
    assert b.hri_add == pytest.approx(a.hri_add, abs=1e-12)


@SETTINGS
@given(record=response_dicts(), profile=profiles())
def test_score_matches_its_definition(record, profile):
    """Recompute s_k and HRI_add from the claims' m_ik (s_k with exact fractions)."""
    result = scored(record, profile)
    total = sum(c.criticality for c in result.claims)
    assert total == result.total_criticality
    if total == 0:
        assert result.no_claims and result.hri == 0.0 and result.action == profile.no_claims_action
        return
    for dim in DIMENSIONS:
        exact = sum(Fraction(c.criticality) * Fraction(c.contributions[dim]) for c in result.claims) / total
        assert math.isclose(result.dimensions[dim], float(exact), rel_tol=0, abs_tol=1e-12)
    expected_add = min(1.0, sum(profile.weights[d] * result.dimensions[d] for d in DIMENSIONS))
    assert result.hri_add == pytest.approx(expected_add, abs=1e-12)
    assert result.band == profile.band_for(result.score).name
