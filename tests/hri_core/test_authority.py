"""CLAIM's Authority step, pure part: allowed / current / authoritative for a claim's source, each alone
and combined, the inclusive UTC reading of ``valid_until``, unknown sources, and the *proposed* labels
of SUPPORTED claims (never applied)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

import pytest

from hri_core import parse_response
from hri_core.authority import (
    FAILURES,
    AuthorityRulesError,
    SourceRecord,
    authority_rules_from_dict,
    check_claim,
    check_response,
    default_authority_rules,
    expiry,
)
from hri_core.models import Claim
from hri_core.vocabulary import CATEGORIES, Label

AT = datetime(2026, 6, 15, 12, 0, tzinfo=UTC)
RULES = default_authority_rules()


def supported(category: str | None = "general", labels=("SUPPORTED",)) -> Claim:
    return Claim(claim_id="c1", labels=labels, source_id="s1", category=category)


def source(**fields) -> SourceRecord:
    return SourceRecord(source_id="s1", **{"authority_tier": 1, **fields})


def check(claim=None, src=None, roles=("analyst",), at=AT, rules=RULES):
    return check_claim(claim or supported(), src if src is not None else source(), at=at, requester_roles=roles,
                       rules=rules)


def proposals(result) -> list[str]:
    return [p.proposal for p in result.proposals]


def test_a_good_source_passes_everything_and_proposes_nothing():
    result = check()
    assert (result.allowed.passed, result.current.passed, result.authoritative.passed) == (True, True, True)
    assert result.passes and result.failures == () and result.proposals == ()


# --- allowed ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("restricted", "roles", "passed"), [
    ((), ("viewer",), True),
    (("reviewer", "admin"), ("viewer", "admin"), True),
    (("reviewer",), ("viewer",), False),
    (("reviewer",), (), False),
    (("reviewer",), None, None),  # requesters unknown: undecided, never allowed
    ((), None, True),  # unrestricted needs no requester
])
def test_allowed(restricted, roles, passed):
    result = check(src=source(restricted_to=restricted), roles=roles)
    assert result.allowed.passed is passed
    assert result.current.passed and result.authoritative.passed
    if passed is False:
        assert result.failures == ("not allowed",) and proposals(result) == ["ACCESS_GAP"]
        assert "reviewer" in result.proposals[0].reason
    elif passed is None:
        assert result.failures == ("access unknown",) and proposals(result) == ["needs review"]
    else:
        assert result.passes


# --- current ----------------------------------------------------------------------------------------------

def test_superseded_is_stale_whenever_the_answer_was_given():
    result = check(src=source(superseded_by="s2"))
    assert result.current.passed is False and "superseded by s2" in result.current.reason
    assert result.failures == ("stale",) and proposals(result) == ["OUTDATED"]


@pytest.mark.parametrize(("at", "current"), [
    (datetime(2026, 3, 31, 0, 0, tzinfo=UTC), True),
    (datetime(2026, 3, 31, 23, 59, 59, 999999, tzinfo=UTC), True),  # the whole last day, UTC
    (datetime(2026, 4, 1, 0, 0, tzinfo=UTC), False),
    # 2026-04-01 01:30 in Paris is 2026-03-31 23:30 UTC: still current
    (datetime(2026, 4, 1, 1, 30, tzinfo=timezone(timedelta(hours=2))), True),
    # 2026-03-31 20:30 in New York is 2026-04-01 00:30 UTC: stale
    (datetime(2026, 3, 31, 20, 30, tzinfo=timezone(timedelta(hours=-4))), False),
    (datetime(2026, 3, 31, 23, 0), True),  # naive = UTC
    (datetime(2026, 4, 1, 0, 0), False),
])
def test_valid_until_is_inclusive_in_utc(at, current):
    result = check(src=source(valid_until=date(2026, 3, 31)), at=at)
    assert result.current.passed is current
    assert result.at.tzinfo is not None and result.at.utcoffset() == timedelta(0)
    assert proposals(result) == ([] if current else ["OUTDATED"])


def test_valid_until_can_be_read_exclusive():
    exclusive = RULES.model_copy(update={"valid_until_inclusive": False})
    last_day = datetime(2026, 3, 31, 12, 0, tzinfo=UTC)
    assert check(src=source(valid_until=date(2026, 3, 31)), at=last_day, rules=exclusive).current.passed is False
    assert check(src=source(valid_until=date(2026, 3, 31)), at=last_day).current.passed is True
    assert expiry(date(2026, 3, 31), inclusive=True) == datetime(2026, 4, 1, tzinfo=UTC)
    assert expiry(date(2026, 3, 31), inclusive=False) == datetime(2026, 3, 31, tzinfo=UTC)


def test_superseded_and_expired_say_both():
    result = check(src=source(superseded_by="s9", valid_until=date(2026, 1, 1)))
    assert "superseded by s9" in result.current.reason and "expired" in result.current.reason
    assert result.failures == ("stale",)


# --- authoritative ----------------------------------------------------------------------------------------

@pytest.mark.parametrize(("category", "tier", "passed"), [
    ("financial", 2, True), ("financial", 3, False), ("legal", 1, True), ("health", 4, False),
    ("general", 4, True), ("general", 5, False), (None, 3, True), (None, 4, False),
    ("financial", None, None),
])
def test_authoritative_by_category_tier(category, tier, passed):
    result = check(claim=supported(category), src=source(authority_tier=tier))
    assert result.authoritative.passed is passed
    assert result.category_rule == (category or "uncategorised")
    if passed is False:
        assert result.failures == ("insufficient authority",) and proposals(result) == ["needs review"]
        assert f"tier {tier}" in result.proposals[0].reason
    elif passed is None:
        assert result.failures == ("authority unknown",) and proposals(result) == ["needs review"]


def test_a_rule_with_source_types_and_a_tier_needs_both():
    rules = authority_rules_from_dict({"version": 3, "rules": {
        "health": {"max_tier": 2, "source_types": ["peer-reviewed publication", "official framework"]}},
        "uncategorised": {"max_tier": 5}})
    ok = source(source_type="peer-reviewed publication", authority_tier=1)
    assert check(claim=supported("health"), src=ok, rules=rules).authoritative.passed is True
    wrong_type = source(source_type="web page", authority_tier=1)
    result = check(claim=supported("health"), src=wrong_type, rules=rules)
    assert result.authoritative.passed is False and "web page" in result.authoritative.reason
    no_type = source(authority_tier=1)
    assert check(claim=supported("health"), src=no_type, rules=rules).authoritative.passed is None
    assert check(claim=supported("legal"), src=wrong_type, rules=rules).category_rule == "uncategorised"
    assert check(claim=supported("health"), src=ok, rules=rules).rules_version == 3


# --- combinations -----------------------------------------------------------------------------------------

def test_every_failure_at_once():
    src = source(restricted_to=("admin",), superseded_by="s2", authority_tier=5)
    result = check(claim=supported("legal"), src=src, roles=("viewer",))
    assert result.failures == ("not allowed", "stale", "insufficient authority")
    assert proposals(result) == ["ACCESS_GAP", "OUTDATED", "needs review"]
    assert not result.passes and set(result.failures) <= set(FAILURES)


def test_stale_and_forbidden_but_authoritative():
    result = check(src=source(restricted_to=("admin",), valid_until=date(2026, 1, 31)), roles=("viewer",))
    assert (result.allowed.passed, result.current.passed, result.authoritative.passed) == (False, False, True)
    assert proposals(result) == ["ACCESS_GAP", "OUTDATED"]


def test_unknown_source_is_flagged_and_undecided():
    result = check_claim(supported(), None, at=AT, requester_roles=("analyst",), rules=RULES)
    assert result.unknown_source and result.failures == ("unknown source",)
    assert (result.allowed.passed, result.current.passed, result.authoritative.passed) == (None, None, None)
    assert proposals(result) == ["needs review"] and "not in the source register" in result.proposals[0].reason


# --- proposals only for SUPPORTED claims, never a relabel -------------------------------------------------

def test_only_supported_claims_get_proposals_and_labels_are_untouched():
    stale = source(superseded_by="s2")
    contradicted = Claim(claim_id="c1", labels=("CONTRADICTED",), source_id="s1")
    result = check(claim=contradicted, src=stale)
    assert result.failures == ("stale",) and result.proposals == ()
    # SUPPORTED stands alone now; a record stored before that rule may still carry both
    already = Claim.model_construct(claim_id="c1", labels=(Label.SUPPORTED, Label.OUTDATED), source_id="s1",
                                    category="general")
    assert check(claim=already, src=stale).proposals == ()  # the label is already there
    claim = supported()
    check(claim=claim, src=stale)
    assert claim.labels == ("SUPPORTED",)


def test_check_response_uses_the_answer_time_then_the_scoring_time():
    sources = {"s1": source(valid_until=date(2026, 3, 31))}
    record = {"response_id": "r", "claims": [{"labels": ["SUPPORTED"], "source_id": "s1"},
                                             {"labels": ["SUPPORTED"]},
                                             {"labels": ["SUPPORTED"], "source_id": "ghost"}]}
    answered_in_march = parse_response({**record, "created_at": "2026-03-30T10:00:00Z"})
    results = check_response(answered_in_march, sources, as_of=AT, requester_roles=None)
    assert [r.claim_id for r in results] == ["r-1", "r-3"]  # claims without a source are not checked
    assert results[0].current.passed is True and results[0].at == datetime(2026, 3, 30, 10, tzinfo=UTC)
    assert results[1].unknown_source
    undated = check_response(parse_response(record), sources, as_of=AT, requester_roles=None)
    assert undated[0].current.passed is False and undated[0].at == AT


def test_a_claim_without_a_source_cannot_be_checked():
    with pytest.raises(ValueError, match="no source_id"):
        check_claim(Claim(claim_id="c", labels=("SUPPORTED",)), source(), at=AT, requester_roles=(), rules=RULES)


# --- the rule table as data -------------------------------------------------------------------------------

def test_default_rules_cover_every_category():
    assert set(RULES.rules) == set(CATEGORIES)
    assert all(RULES.rules[c].max_tier == 2 for c in CATEGORIES if c != "general")
    assert RULES.fingerprint() == default_authority_rules().fingerprint()
    assert authority_rules_from_dict(RULES.model_dump(mode="json")) == RULES


@pytest.mark.parametrize(("data", "fields"), [
    ({"rules": {"legal": {}}, "uncategorised": {"max_tier": 3}}, ["rules.legal.max_tier"]),
    ({"rules": {"legal": {"max_tier": 0}}, "uncategorised": {"max_tier": 3}}, ["rules.legal.max_tier"]),
    ({"rules": {}}, ["uncategorised"]),
    ({"rules": {}, "uncategorised": {"max_tier": 3}, "extra": 1}, ["extra"]),
])
def test_bad_rule_tables_name_the_field(data, fields):
    with pytest.raises(AuthorityRulesError) as caught:
        authority_rules_from_dict(data)
    assert [p["field"] for p in caught.value.as_dict()["problems"]] == fields
