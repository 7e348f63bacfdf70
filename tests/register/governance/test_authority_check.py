"""Checklist check 8 (CLAIM's Authority step on the scored answers): each of allowed / current /
authoritative failing on a SUPPORTED answer claim is an offending row with its proposed label; unknown
sources and claims not SUPPORTED are only counted in the note."""

from __future__ import annotations

from register import SYSTEM
from register.governance.checks import run_checks
from register.governance.registers import RowChanges, list_sources, save_sources
from register.scoring.authority_rules import save_use_cases
from tests.helpers.authority import load_authority_register


def check_8(store) -> dict:
    return next(c for c in run_checks(store)["checks"] if c["no"] == 8)


def test_each_failed_check_is_an_offending_answer_with_its_proposed_label(store, tmp_path):
    load_authority_register(store, tmp_path)
    result = check_8(store)
    assert result["status"] == "fail"
    reasons = {f["entity_id"]: f["reason"] for f in result["offending"]}
    assert set(reasons) == {"au-stale", "au-expired", "au-restricted", "au-weak"}
    assert reasons["au-stale"] == "stale source src-old (superseded by src-ok), proposed OUTDATED"
    assert reasons["au-restricted"].startswith("forbidden source src-legal-only (restricted to reviewer")
    assert reasons["au-restricted"].endswith("proposed ACCESS_GAP")
    assert reasons["au-weak"].startswith("insufficient authority src-blog (tier 4 is weaker")
    assert all(f["entity_type"] == "response" and f["label"].startswith("claim c1: ") for f in result["offending"])
    # au-unknown (an unknown source) and au-contra (CONTRADICTED on a stale source) are counted, not offending
    assert "besides, 2 check(s) unknown or undecided or on claims not SUPPORTED" in result["note"]


def test_the_check_passes_once_the_register_is_repaired(store, tmp_path):
    load_authority_register(store, tmp_path)
    save_use_cases(store, SYSTEM, [{"use_case": "helpdesk", "requester_roles": ["viewer", "reviewer"]}], "legal too")
    sources = list_sources(store).set_index("source_id")
    deletes = [{"key": k, "row_version": int(sources.loc[k, "row_version"])}
               for k in ("src-old", "src-expiring", "src-blog")]
    save_sources(store, SYSTEM, RowChanges(deletes=deletes))  # their claims now cite unknown sources: counted
    result = check_8(store)
    assert result["status"] == "pass" and result["offending"] == []
    assert "unknown or undecided" in result["note"]
