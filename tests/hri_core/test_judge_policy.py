"""The judge policy (hri_core.judge_policy): what a rule covers, and what no rule may allow."""

from __future__ import annotations

import pytest

from hri_core.judge_policy import JudgePolicy, JudgePolicyError, judge_policy_from_dict
from hri_core.vocabulary import Label

RULE = {"profiles": ["llm-default@1"], "backends": ["llm"], "labels": ["SUPPORTED", "CONTRADICTED"],
        "min_confidence": 0.9, "categories": ["general", "health"], "stakes": ["low", "high"], "max_criticality": 3}
VERDICT = {"profile": "llm-default@1", "backend": "llm", "label": Label.SUPPORTED, "confidence": 0.95,
           "category": "health", "stakes": "high", "criticality": 3}


def test_an_empty_policy_applies_nothing():
    assert JudgePolicy(version=1).allows(**VERDICT) is None


def test_a_rule_applies_only_what_it_covers_in_every_respect():
    policy = judge_policy_from_dict({"version": 2, "rules": [RULE]})
    assert policy.allows(**VERDICT) == 0
    for change in ({"confidence": 0.89}, {"label": Label.PARTIAL}, {"category": "legal"}, {"stakes": "medium"},
                   {"criticality": 4}, {"profile": "llm-default@2"}, {"backend": "offline-lexical"},
                   {"label": None}):
        assert policy.allows(**(VERDICT | change)) is None, change
    assert policy.allows(**(VERDICT | {"category": None, "stakes": "low"})) == 0  # no category reads as general


def test_no_rule_lets_an_offline_judge_clear_critical_categories_or_high_stakes():
    for change in ({"categories": ["safety"]}, {"stakes": ["critical"]}):
        with pytest.raises(JudgePolicyError, match="never clear"):
            judge_policy_from_dict({"version": 1, "rules": [RULE | {"backends": ["offline-lexical"]} | change]})
    # UNSUPPORTED from an offline judge may be allowed there: it clears nothing
    rule = RULE | {"backends": ["offline-lexical"], "labels": ["UNSUPPORTED"]}
    policy = judge_policy_from_dict({"version": 1, "rules": [rule]})
    assert policy.allows(**(VERDICT | {"backend": "offline-lexical", "label": Label.UNSUPPORTED})) == 0


@pytest.mark.parametrize(("change", "field"), [
    ({"categories": []}, "categories"), ({"stakes": ["sky-high"]}, "stakes"), ({"labels": ["OUTDATED"]}, "labels"),
    ({"min_confidence": 0.3}, "min_confidence"), ({"colour": "red"}, "colour"),
])
def test_invalid_rules_are_refused_naming_the_field(change, field):
    with pytest.raises(JudgePolicyError, match=field):
        judge_policy_from_dict({"version": 1, "rules": [RULE | change]})
