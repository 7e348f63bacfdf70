"""Table VIII as the paper words it (rule version 2, ``PAPER_RULES_AS_WORDED``), one test per rule, and the
first reading (version 1) kept as it was: a new version, never an edited one."""

from __future__ import annotations

import pytest

from register import Actor
from register import governance as gov
from register.errors import ValidationFailed
from register.governance.evidence import (
    AS_WORDED_REASON,
    approve_rules,
    ensure_default_rules,
    evaluate_rules,
    list_rules,
    save_rules,
)
from register.governance.seed import seed_paper_register
from tests.helpers.actors import enrol

ROOT = Actor("root", "admin")
OTHER_ADMIN = Actor("olga", "admin")  # approves root's rule versions (four eyes)
ANN = Actor("ann", "reviewer")


@pytest.fixture
def store(store):
    """The shared register, with accounts for the actors (the register re-reads them on every write)."""
    enrol(store, ROOT, OTHER_ADMIN, ANN)
    return store


@pytest.fixture
def reg(store):
    ensure_default_rules(store, ROOT)
    return store


def add_sources(store, *rows) -> None:
    gov.save_sources(store, ANN, gov.RowChanges(inserts=[{"values": {"title": f"title of {r['source_id']}", **r}}
                                                          for r in rows]))


def add_claims(store, *rows) -> None:
    gov.save_claims(store, ANN, gov.RowChanges(inserts=[{"values": r} for r in rows]))


def claim(key, claim_type, sources=(), status="verified", **extra) -> dict:
    return {"claim_key": key, "statement": f"statement {key}", "claim_type": claim_type, "source_ids": list(sources),
            "verification_status": status, **extra}


def outcomes(store, version=None) -> dict:
    ev = evaluate_rules(store, version)
    return {r["claim_key"]: (r["outcome"], r["reason"]) for r in ev.to_dict("records")}


def test_a_fresh_register_gets_the_first_reading_then_the_worded_rules(reg):
    versions = gov.rule_versions(reg)
    assert versions["rule_version"].tolist() == [2, 1] and versions["reason"].iloc[0] == AS_WORDED_REASON
    assert ensure_default_rules(reg, ROOT) == 2  # idempotent
    assert list_rules(reg, 1)["handled_statuses"].isna().all()  # version 1 is untouched


def test_edited_rules_are_not_replaced_by_the_worded_ones(store):
    first = ensure_default_rules(store, ROOT)
    rules = list_rules(store, first).to_dict("records")
    rules[0]["guidance"] = "our own wording"
    mine = save_rules(store, ROOT, rules, "house rules")
    approve_rules(store, OTHER_ADMIN, mine, "house rules checked")  # a second admin puts them in force
    assert ensure_default_rules(store, ROOT) == mine


def test_an_unsourced_benchmark_number_complies_only_when_not_reported(reg):
    number = "benchmark property or number"
    add_claims(reg, claim("provisional", number, status="provisional (design parameter)"),
               claim("removed", number, status="removed"), claim("not-claimed", number, status="not claimed"))
    now = outcomes(reg)
    assert now["provisional"][0] == "violation"
    assert now["removed"][0] == now["not-claimed"][0] == "compliant"
    assert outcomes(reg, 1)["provisional"] == ("compliant", "handled: marked provisional (design parameter)")


def test_a_preprint_counts_only_when_the_claim_says_no_peer_reviewed_source_exists(reg):
    science = "scientific/methodological"
    add_sources(reg, {"source_id": "arxiv", "source_type": "preprint"},
                {"source_id": "journal", "source_type": "peer-reviewed publication"})
    add_claims(reg, claim("preprint", science, ["arxiv"]),
               claim("preprint-only", science, ["arxiv"], no_peer_reviewed_source="yes"),
               claim("journal", science, ["journal"]))
    now = outcomes(reg)
    assert now["preprint"][0] == "violation"
    assert "a preprint counts only when no peer-reviewed source exists (the claim does not say so): arxiv" \
        in now["preprint"][1]
    assert now["preprint-only"] == ("compliant", "acceptable source: arxiv")
    assert now["journal"] == ("compliant", "acceptable source: journal")
    assert outcomes(reg, 1)["preprint"][0] == "compliant"  # the first reading took any preprint
    assert gov.list_claims(reg).set_index("claim_key").loc["preprint-only", "no_peer_reviewed_source"] == True  # noqa: E712


def test_the_peer_review_field_is_validated_naming_the_row_and_field(reg):
    with pytest.raises(ValidationFailed, match="no_peer_reviewed_source"):
        add_claims(reg, claim("x", "scientific/methodological", no_peer_reviewed_source="perhaps"))


def test_a_vendor_capability_needs_official_vendor_documentation_not_any_web_page(reg):
    vendor = "vendor capability"
    add_sources(reg, {"source_id": "docs", "source_type": "vendor documentation", "access_date": "2026-10-01"},
                {"source_id": "blog", "source_type": "web page", "access_date": "2026-10-01"})
    add_claims(reg, claim("docs", vendor, ["docs"]), claim("blog", vendor, ["blog"]))
    now = outcomes(reg)
    assert now["docs"] == ("compliant", "acceptable source: docs")
    assert now["blog"][0] == "violation" and "needs one of: vendor documentation" in now["blog"][1]
    assert outcomes(reg, 1)["blog"][0] == "compliant"


def test_a_rule_that_needs_access_dates_refuses_an_undated_source(reg):
    rules = list_rules(reg).to_dict("records")
    for rule in rules:
        if rule["claim_type"] == "governance framework":
            rule["needs_access_date"] = True
    version = save_rules(reg, ROOT, rules, "frameworks change: record when we read them")
    add_sources(reg, {"source_id": "rmf", "source_type": "official framework"},
                {"source_id": "rmf-read", "source_type": "official framework", "access_date": "2026-09-01"})
    add_claims(reg, claim("undated", "governance framework", ["rmf"]),
               claim("dated", "governance framework", ["rmf-read"]))
    now = outcomes(reg, version)
    assert now["undated"][0] == "violation" and "without an access date: rmf" in now["undated"][1]
    assert now["dated"] == ("compliant", "acceptable source: rmf-read")
    vendor = next(r for r in list_rules(reg, 2).to_dict("records") if r["claim_type"] == "vendor capability")
    assert vendor["needs_access_date"] is True  # Table VIII: "product page with access date"


@pytest.mark.parametrize("status, outcome", [("ACCESS_GAP", "compliant"), ("UNKNOWN", "compliant"),
                                             ("verified", "violation"), ("unverified", "violation")])
def test_internal_policy_without_approved_evidence_is_recorded_as_access_gap_or_unknown(reg, status, outcome):
    add_claims(reg, claim("perm", "internal policy/permission", status=status))
    assert outcomes(reg)["perm"][0] == outcome
    if outcome == "compliant":
        assert outcomes(reg)["perm"][1] == f"handled: marked {status}"


def test_the_papers_own_contribution_is_not_a_literature_claim_not_verified(reg):
    design = "original design choice"
    add_sources(reg, {"source_id": "this-paper", "source_type": "original proposal"})
    add_claims(reg, claim("verified", design, ["this-paper"]),
               claim("own", design, ["this-paper"], status="not a literature claim"))
    now = outcomes(reg)
    assert now["verified"][0] == "violation"
    assert "an original contribution is not a literature claim" in now["verified"][1]
    assert now["own"] == ("compliant", "acceptable source: this-paper")
    assert outcomes(reg, 1)["verified"][0] == "compliant"


def test_the_paper_register_marks_its_contribution_and_complies(store):
    seed_paper_register(store, ROOT)
    claims = gov.list_claims(store).set_index("claim_key")
    assert claims.loc["vii-6", "verification_status"] == "not a literature claim"
    assert (evaluate_rules(store)["outcome"] == "compliant").all()


def test_rule_statuses_are_validated(reg):
    rules = list_rules(reg).to_dict("records")
    rules[0]["handled_statuses"] = ["provisionally fine"]
    with pytest.raises(ValidationFailed, match="handled_statuses"):
        save_rules(reg, ROOT, rules, "typo")
