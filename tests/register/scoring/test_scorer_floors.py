"""Regression tests for the decisive floor of the bulk SQL scorer.

``score_query`` picks the decisive floor in the same GROUP BY as the dimension sums, as the max of an
exact integer key (floor value rank, then the earliest claim, then the earliest rule in profile order).
These cases pin the tie rules of ``hri_core.score_response`` (``max(fired, key=value)``: the first
fired floor in claim order, then profile order, among those with the top value) and the zero floor.
"""

from __future__ import annotations

from hri_core import FloorRule, default_profile, parse_response, score_response
from tests.helpers.parity import assert_matches, check_parity, score_in_fresh_db
from tests.helpers.strategies import AS_OF


def scored(records, profile):
    rows, floors = score_in_fresh_db(records, profile, AS_OF)
    for record in records:
        assert_matches(rows[record["response_id"]], score_response(parse_response(record), profile, AS_OF))
    return rows, floors


def claim(claim_id, labels, criticality=1, **extra):
    return {"claim_id": claim_id, "labels": labels, "criticality": criticality, **extra}


def test_equal_floor_values_on_two_claims_the_first_claim_decides():
    records = [
        # same rule, same value: the earlier claim
        {"response_id": "same-rule", "claims": [
            claim("a1", ["SUPPORTED"]), claim("a2", ["CONTRADICTED"], 3), claim("a3", ["CONTRADICTED"], 4)]},
        # different rules, equal values (0.55): the earlier claim, whatever the rule order
        {"response_id": "other-rules", "claims": [
            claim("b1", ["OUT_OF_SCOPE"], 3), claim("b2", ["ACCESS_GAP"], 5)]},
        # a higher floor on a later claim still beats a lower one on an earlier claim
        {"response_id": "higher-later", "claims": [
            claim("c1", ["CONTRADICTED"], 2), claim("c2", ["ACCESS_GAP"], 3), claim("c3", ["CONTRADICTED"], 3)]},
        # many claims: the claim index, not the claim id, orders the tie
        {"response_id": "many", "claims": [claim(f"z{99 - i:02d}", ["SUPPORTED"]) for i in range(40)] + [
            claim("z-late", ["ACCESS_GAP"], 3), claim("a-later", ["ACCESS_GAP"], 3)]},
    ]
    rows, _ = scored(records, default_profile())
    assert (rows["same-rule"]["decisive_claim_id"], rows["same-rule"]["decisive_rule_id"]) == (
        "a2", "contradicted-high")
    assert rows["same-rule"]["floors_fired"] == 2
    assert (rows["other-rules"]["decisive_claim_id"], rows["other-rules"]["decisive_rule_id"]) == (
        "b1", "out-of-scope-high")
    assert (rows["higher-later"]["decisive_claim_id"], rows["higher-later"]["decisive_rule_id"]) == (
        "c3", "contradicted-high")
    assert rows["higher-later"]["floors_fired"] == 3
    assert rows["many"]["decisive_claim_id"] == "z-late"


def test_two_rules_with_the_same_value_on_one_claim_the_first_rule_in_profile_order_decides():
    base = default_profile()
    wide = FloorRule(rule_id="contradicted-any", label="CONTRADICTED", min_criticality=1, value=0.7)
    feedback = FloorRule(rule_id="feedback-first", label="VALIDATED_NEGATIVE_FEEDBACK",
                         condition="repeated_or_unresolved", value=0.7)
    records = [{"response_id": "both", "claims": [claim("x1", ["SUPPORTED"]), claim("x2", ["CONTRADICTED"], 3)]},
               {"response_id": "static-and-feedback", "claims": [
                   claim("y1", ["CONTRADICTED", "VALIDATED_NEGATIVE_FEEDBACK"], 3,
                         feedback_at="2026-11-20T00:00:00Z", feedback_count=3)]}]
    # the new rule after the paper's rules: contradicted-high (first) decides
    after = base.model_copy(update={"floors": base.floors + (wide,)})
    rows, _ = scored(records, after)
    assert (rows["both"]["decisive_claim_id"], rows["both"]["decisive_rule_id"]) == ("x2", "contradicted-high")
    assert rows["both"]["floors_fired"] == 2
    # the same rule first: it decides
    before = base.model_copy(update={"floors": (wide,) + base.floors})
    rows, _ = scored(records, before)
    assert (rows["both"]["decisive_claim_id"], rows["both"]["decisive_rule_id"]) == ("x2", "contradicted-any")
    # a per-claim (feedback) rule and a per-shape rule of the same value on one claim: profile order
    feedback_first = base.model_copy(update={"floors": (feedback,) + base.floors})
    rows, _ = scored(records, feedback_first)
    assert (rows["static-and-feedback"]["decisive_claim_id"], rows["static-and-feedback"]["decisive_rule_id"]) == (
        "y1", "feedback-first")
    assert rows["static-and-feedback"]["floors_fired"] == 3
    feedback_last = base.model_copy(update={"floors": base.floors + (feedback,)})
    rows, _ = scored(records, feedback_last)
    assert rows["static-and-feedback"]["decisive_rule_id"] == "contradicted-high"


def test_a_floor_of_value_zero_fires_is_counted_and_never_decides():
    base = default_profile()
    zero = FloorRule(rule_id="supported-zero", label="SUPPORTED", value=0.0)
    records = [
        {"response_id": "only-zero", "claims": [claim("s1", ["SUPPORTED"]), claim("s2", ["SUPPORTED"], 2)]},
        {"response_id": "zero-and-real", "claims": [claim("t1", ["SUPPORTED"]), claim("t2", ["ACCESS_GAP"], 3)]},
    ]
    for floors in ((zero,) + base.floors, base.floors + (zero,), (zero,)):
        profile = base.model_copy(update={"floors": floors})
        rows, fired = scored(records, profile)
        only = rows["only-zero"]
        assert (only["hri"], only["floors_fired"], only["decisive_claim_id"], only["decisive_rule_id"]) == (
            0.0, 2, None, None)
        assert [f[1] for f in fired["only-zero"]] == ["supported-zero", "supported-zero"]
        assert rows["zero-and-real"]["floors_fired"] == (2 if len(floors) > 1 else 1)
    # all floors worth 0 and a feedback floor among them: still counted, never decisive
    zeros = tuple(r.model_copy(update={"value": 0.0}) for r in base.floors)
    check_parity([{"response_id": "fb", "claims": [
        claim("f1", ["VALIDATED_NEGATIVE_FEEDBACK", "CONTRADICTED"], 3, feedback_count=2)]}],
        base.model_copy(update={"floors": zeros}), AS_OF)


def test_profiles_without_floors_or_without_feedback_labels_bind_every_parameter():
    base = default_profile()
    records = [{"response_id": "r", "claims": [
        claim("r1", ["VALIDATED_NEGATIVE_FEEDBACK"], 2, feedback_at="2026-11-01T00:00:00Z"),
        claim("r2", ["CONTRADICTED"], 3), claim("r3", ["SUPPORTED"])]},
        {"response_id": "empty", "claims": []}]
    for floors in ((), tuple(r for r in base.floors if r.condition == "criticality"),
                   tuple(r for r in base.floors if r.condition != "criticality")):
        check_parity(records, base.model_copy(update={"floors": floors}), AS_OF)
