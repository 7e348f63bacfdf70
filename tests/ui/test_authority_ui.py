"""The Source authority page's pure helpers: the overview figure and the rule editor's rows and JSON."""

from __future__ import annotations

import pandas as pd

from hri_core.authority import authority_rules_from_dict, default_authority_rules
from ui.features.authority import authority_figure, failed_reasons, rule_rows, rules_json


def test_the_figure_puts_the_failures_first_coloured_and_escapes_nothing_unsafe():
    by_problem = pd.DataFrame({"problem": ["unknown source", "forbidden source", "access undecided", "stale source",
                                           "insufficient authority", "authority undecided"],
                               "claims": [5, 1, 0, 3, 2, 0]})
    fig = authority_figure({"supported_sourced": 20, "flagged": 6, "responses": 5, "by_problem": by_problem})
    bar = fig.data[0]
    assert list(bar.x[:3]) == ["stale source", "insufficient authority", "forbidden source"]
    assert list(bar.y[:3]) == [3, 2, 1] and bar.marker.color[3] == "#90A4AE"
    assert list(bar.customdata[:1]) == [15.0]  # 3 of 20 sourced supported claims
    assert "stale or unauthoritative" in fig.layout.title.text


def test_the_figure_is_empty_without_sourced_supported_claims():
    fig = authority_figure({"supported_sourced": 0, "by_problem": pd.DataFrame(columns=["problem", "claims"])})
    assert not fig.data


def test_editor_rows_round_trip_to_the_same_rules():
    rules = default_authority_rules()
    rows = rule_rows(rules).to_dict("records")
    assert rows[-1]["category"] == "uncategorised" and rows[-1]["max_tier"] == 3
    back = authority_rules_from_dict(rules_json(rows, rules.valid_until_inclusive, rules.name))
    assert back.fingerprint() == rules.fingerprint()


def test_editor_rows_drop_blank_categories_and_read_empty_types_as_none():
    rows = [{"category": "legal", "max_tier": 1, "source_types": [], "note": " "},
            {"category": None, "max_tier": 2, "source_types": None, "note": None},
            {"category": "uncategorised", "max_tier": pd.NA, "source_types": ["web page"], "note": "x"}]
    data = rules_json(rows, False, "mine")
    assert data["rules"] == {"legal": {"max_tier": 1, "source_types": None, "note": None}}
    assert data["uncategorised"] == {"max_tier": None, "source_types": ["web page"], "note": "x"}
    assert data["valid_until_inclusive"] is False


def test_a_reason_shared_by_several_failed_checks_is_said_once():
    missing = "source 'contract-2024-07' is not in the source register"
    claim = {"allowed": False, "allowed_reason": missing, "current": None, "current_reason": missing,
             "authoritative": False, "authoritative_reason": missing}
    assert failed_reasons(claim) == missing


def test_distinct_reasons_keep_the_check_order_and_passed_checks_say_nothing():
    claim = {"allowed": False, "allowed_reason": "a blog is not acceptable for legal claims",
             "current": True, "current_reason": "valid until 2027-01-01",
             "authoritative": None, "authoritative_reason": "no authority tier recorded"}
    assert failed_reasons(claim) == "a blog is not acceptable for legal claims; no authority tier recorded"
    assert failed_reasons({**claim, "allowed": True, "authoritative": True}) == ""
