"""CLAIM's Authority step over the register: allowed / current / authoritative for each sourced claim of the
current answers, computed in SQL against the current source register, with proposed labels that never
rewrite a claim's labels; held equal to the pure ``hri_core.authority`` on a seeded random register."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta

import pytest

from hri_core import parse_response
from hri_core.authority import SourceRecord, check_claim, default_authority_rules
from register import SYSTEM
from register.errors import PermissionDenied, ValidationFailed
from register.governance.registers import RowChanges, add_row, list_sources, save_sources
from register.ingest.importer import import_path
from register.scoring.authority import claim_checks, findings
from register.scoring.authority_rules import (
    approve_authority_rules,
    approve_use_cases,
    authority_rule_versions,
    authority_rules,
    list_use_cases,
    requester_roles,
    save_authority_rules,
    save_use_cases,
)
from register.scoring.profiles import active_profile
from register.scoring.scorer import rescore
from tests.helpers.actors import ANN, BOB, REVIEWER, enrol
from tests.helpers.authority import load_authority_register


@pytest.fixture
def register(store, tmp_path):
    enrol(store, BOB)  # approves ANN's versions (four eyes)
    return load_authority_register(store, tmp_path)


def by_response(frame) -> dict:
    return {r["response_id"]: r for r in frame.to_dict("records")}


def supersede(store, source_id: str, by: str) -> None:
    row = list_sources(store).set_index("source_id").loc[source_id]
    values = {c: row[c] for c in ("title", "ref", "source_type", "authority_tier", "publisher", "access_date",
                                  "valid_until", "restricted_to", "archive_url", "content_hash", "notes")
              if c in row}
    save_sources(store, SYSTEM, RowChanges(updates=[{"key": source_id, "row_version": int(row["row_version"]),
                                                     "values": {"source_id": source_id, **values,
                                                                "superseded_by": by}}]))


# --- each check alone ----------------------------------------------------------------------------------


def test_a_current_unrestricted_strong_source_passes_every_check(register):
    ok = by_response(claim_checks(register))["au-ok"]
    assert (ok["allowed"], ok["current"], ok["authoritative"]) == (True, True, True)
    assert list(ok["problems"]) == [] and list(ok["proposals"]) == [] and ok["authority"] == "ok"


def test_allowed_fails_when_the_use_cases_requesters_may_not_read_the_source(register):
    row = by_response(claim_checks(register))["au-restricted"]
    assert row["allowed"] is False and row["current"] is True and row["authoritative"] is True
    assert row["allowed_reason"] == "restricted to reviewer; the use case's requesters (viewer) may not read it"
    assert list(row["proposals"]) == ["ACCESS_GAP"]
    assert row["authority"] == "forbidden source, proposed ACCESS_GAP"


def test_allowed_passes_once_the_use_case_lists_a_permitted_requester(register):
    version = save_use_cases(register, ANN, [{"use_case": "helpdesk", "requester_roles": "viewer; reviewer"}],
                             "legal joins")
    assert by_response(claim_checks(register))["au-restricted"]["allowed"] is False  # pending: not in force yet
    approve_use_cases(register, BOB, version, "legal joins the helpdesk")  # a second admin (four eyes)
    row = by_response(claim_checks(register))["au-restricted"]
    assert row["allowed"] is True and row["allowed_reason"].endswith("requesters include reviewer")


def test_allowed_is_undecided_for_a_use_case_nobody_listed(store, tmp_path):
    load_authority_register(store, tmp_path, use_cases=False)
    row = by_response(claim_checks(store))["au-restricted"]
    assert pd_na(row["allowed"]) and row["authority"] == "access undecided, proposed needs review"
    # an unrestricted source needs no requesters
    assert by_response(claim_checks(store))["au-ok"]["allowed"] is True


def pd_na(value) -> bool:
    return value is None or value != value or str(value) == "<NA>"


def test_current_fails_for_a_superseded_source(register):
    row = by_response(claim_checks(register))["au-stale"]
    assert row["current"] is False and row["allowed"] is True and row["authoritative"] is True
    assert row["current_reason"] == "superseded by src-ok"
    assert row["authority"] == "stale source, proposed OUTDATED"


def test_current_reads_valid_until_as_inclusive_in_utc(store, tmp_path):
    load_authority_register(store, tmp_path)
    late = {"response_id": "au-last-day", "use_case": "helpdesk", "created_at": "2026-03-31T23:59:59Z",
            "claims": [{"claim_id": "c1", "labels": ["SUPPORTED"], "criticality": 1, "source_id": "src-expiring"}]}
    path = tmp_path / "late.jsonl"
    path.write_text(json.dumps(late) + "\n", encoding="utf-8")
    import_path(store, SYSTEM, path)
    rows = by_response(claim_checks(store))
    assert rows["au-last-day"]["current"] is True
    assert rows["au-expired"]["current"] is False  # 2026-04-01T09:00Z: the day after
    assert rows["au-expired"]["current_reason"].startswith("expired: valid until 2026-03-31 (inclusive, UTC)")


def test_authoritative_fails_for_a_weak_source_on_a_critical_category(register):
    row = by_response(claim_checks(register))["au-weak"]
    assert row["category"] == "legal" and row["rule"] == "legal"
    assert row["authoritative"] is False and row["allowed"] is True and row["current"] is True
    assert row["authoritative_reason"] == "tier 4 is weaker than the tier <= 2 required for legal claims"
    assert row["authority"] == "insufficient authority, proposed needs review"


def test_each_claim_reads_its_own_category_when_only_some_claims_have_one(store, tmp_path):
    load_authority_register(store, tmp_path)
    record = {"response_id": "au-mixed", "use_case": "helpdesk", "created_at": "2026-04-01T09:00:00Z", "claims": [
        {"claim_id": "plain", "labels": ["SUPPORTED"], "criticality": 1, "source_id": "src-blog"},
        {"claim_id": "legal", "labels": ["SUPPORTED"], "criticality": 1, "source_id": "src-blog",
         "category": " Legal "},
        {"claim_id": "bias", "labels": ["SUPPORTED"], "criticality": 1, "source_id": "src-blog",
         "category": "Discrimination / Bias"}]}
    path = tmp_path / "mixed.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    import_path(store, SYSTEM, path)
    rows = {r["claim_id"]: r for r in claim_checks(store).to_dict("records") if r["response_id"] == "au-mixed"}
    assert rows["plain"]["rule"] == "uncategorised" and rows["plain"]["authoritative"] is False  # tier 4 > 3
    assert rows["legal"]["rule"] == "legal" and rows["bias"]["rule"] == "discrimination/bias"


def test_a_new_authority_rule_version_changes_the_verdict(register):
    rules = default_authority_rules().model_dump(mode="json")
    rules["rules"]["legal"] = {"max_tier": 4, "source_types": None, "note": "any but the weakest"}
    version = save_authority_rules(register, ANN, rules, "legal answers may cite commentary")
    assert version == 2 and authority_rules(register).rules["legal"].max_tier == 2  # pending: not in force yet
    approve_authority_rules(register, BOB, version, "commentary is fine for legal")  # a second admin
    assert authority_rules(register).rules["legal"].max_tier == 4
    assert authority_rule_versions(register)["version"].tolist() == [2]
    assert by_response(claim_checks(register))["au-weak"]["authoritative"] is True


def test_an_unknown_source_is_flagged_and_every_check_undecided(register):
    row = by_response(claim_checks(register))["au-unknown"]
    assert row["unknown_source"] and all(pd_na(row[c]) for c in ("allowed", "current", "authoritative"))
    assert row["authority"] == "unknown source, proposed needs review"


def test_a_claim_not_supported_gets_a_finding_but_no_proposal(register):
    row = by_response(claim_checks(register))["au-contra"]
    assert list(row["problems"]) == ["stale source"] and list(row["proposals"]) == []
    assert row["authority"] == "stale source"


# --- against the current register, never rewriting labels -----------------------------------------------


def test_superseding_a_source_shows_at_once_and_leaves_the_labels_alone(register):
    before = register.dicts("SELECT response_id, labels, revision FROM claims ORDER BY response_id")
    supersede(register, "src-ok", "src-expiring")
    row = by_response(claim_checks(register))["au-ok"]
    assert row["current"] is False and row["authority"] == "stale source, proposed OUTDATED"
    assert register.dicts("SELECT response_id, labels, revision FROM claims ORDER BY response_id") == before


def test_a_deleted_source_is_unknown(register):
    row = list_sources(register).set_index("source_id").loc["src-ok"]
    save_sources(register, SYSTEM, RowChanges(deletes=[{"key": "src-ok", "row_version": int(row["row_version"])}]))
    assert by_response(claim_checks(register))["au-ok"]["unknown_source"]


def test_findings_name_the_check_the_reason_and_the_proposed_label(register):
    rows = {(r["response_id"], r["check"]): r for r in findings(register).to_dict("records")}
    assert set(rows) == {("au-stale", "current"), ("au-expired", "current"), ("au-restricted", "allowed"),
                         ("au-weak", "authoritative"), ("au-unknown", "source"), ("au-contra", "current")}
    assert rows[("au-stale", "current")]["proposed_label"] == "OUTDATED"
    assert rows[("au-restricted", "allowed")]["proposed_label"] == "ACCESS_GAP"
    assert rows[("au-weak", "authoritative")]["proposed_label"] == "needs review"
    assert pd_na(rows[("au-contra", "current")]["proposed_label"])
    assert rows[("au-stale", "current")]["claim"] == "The claim of au-stale."


# --- the rule tables ------------------------------------------------------------------------------------


def test_use_cases_are_versioned_and_validated(register):
    assert requester_roles(register) == {"helpdesk": ("viewer",)}
    version = save_use_cases(register, ANN, [{"use_case": "helpdesk", "requester_roles": ["viewer"]},
                                             {"use_case": "legal-desk", "requester_roles": ["reviewer", "admin"]}],
                             "legal desk opens")
    approve_use_cases(register, BOB, version, "legal desk opens")  # a second admin (four eyes)
    assert version == 2 and list_use_cases(register)["use_case"].tolist() == ["helpdesk", "legal-desk"]
    assert list_use_cases(register, 1)["use_case"].tolist() == ["helpdesk"]
    with pytest.raises(ValidationFailed) as refused:
        save_use_cases(register, ANN, [{"use_case": "x", "requester_roles": ["legal"]}, {"use_case": " "},
                                       {"use_case": "x"}], "")
    text = str(refused.value)
    assert "'legal' is not a role" in text and "row 2, use_case" in text and "'x' is listed twice" in text
    assert "reason" in text and requester_roles(register)["legal-desk"] == ("admin", "reviewer")


def test_authority_rules_are_validated_naming_the_field(register):
    bad = default_authority_rules().model_dump(mode="json")
    bad["rules"]["legal"] = {"max_tier": 0}
    with pytest.raises(ValidationFailed, match="max_tier"):
        save_authority_rules(register, ANN, bad, "a typo")
    assert authority_rule_versions(register).empty


def test_only_admins_edit_the_rule_tables(register):
    with pytest.raises(PermissionDenied):
        save_use_cases(register, REVIEWER, [{"use_case": "helpdesk", "requester_roles": ["admin"]}], "sneaky")
    with pytest.raises(PermissionDenied):
        save_authority_rules(register, REVIEWER, default_authority_rules(), "sneaky")


# --- parity with the pure Authority step -----------------------------------------------------------------


def test_the_sql_checks_equal_hri_core_on_a_random_register(store, tmp_path):
    rng = random.Random(12)
    types = ("official framework", "web page", "preprint", "peer-reviewed publication")
    sources = {}
    for n in range(14):
        values = {"source_id": f"s{n}", "title": f"Source {n}", "source_type": rng.choice(types),
                  "authority_tier": rng.choice([None, 1, 2, 3, 4, 5]), "access_date": "2026-01-01",
                  "valid_until": rng.choice([None, "2026-03-31", "2026-06-30"]),
                  "superseded_by": rng.choice([None, None, None, "s0"]),
                  "restricted_to": rng.choice(["", "", "reviewer", "admin; annotator"])}
        add_row(store, SYSTEM, "sources", values)
        sources[values["source_id"]] = values
    save_use_cases(store, SYSTEM, [{"use_case": "uc-a", "requester_roles": ["viewer", "reviewer"]},
                                   {"use_case": "uc-b", "requester_roles": []}], "parity")
    categories = [None, "legal", "general", "health", "Discrimination / Bias"]
    # three in five SUPPORTED, as before SUPPORTED stood alone (it was beside OUTDATED or ACCESS_GAP in two)
    labels = [["SUPPORTED"], ["SUPPORTED"], ["SUPPORTED"], ["PARTIAL"], ["CONTRADICTED"]]
    records = []
    start = datetime(2026, 3, 1, tzinfo=UTC)
    for n in range(60):
        claim = {"claim_id": f"c{n}", "labels": rng.choice(labels), "criticality": 1,
                 "source_id": f"s{rng.randrange(16)}"}  # s14, s15: unknown
        category = rng.choice(categories)
        if category:
            claim["category"] = category
        record = {"response_id": f"p{n}", "use_case": rng.choice(["uc-a", "uc-b", "uc-c"]),
                  "created_at": (start + timedelta(days=rng.randrange(150), seconds=rng.randrange(86400)))
                  .isoformat(), "claims": [claim]}
        if n % 4 == 0:  # no creation time: the answer is dated by its current score's as-of time
            del record["created_at"]
        records.append(record)
    path = tmp_path / "parity.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    import_path(store, SYSTEM, path)
    scored_at = datetime(2026, 5, 15, tzinfo=UTC)  # between the sources' valid-until dates
    rescore(store, SYSTEM, active_profile(store), as_of=scored_at)
    register_sources = {r["source_id"]: SourceRecord.model_validate(
        {**r, "restricted_to": list(r["restricted_to"]) if r["restricted_to"] is not None else None,
         "authority_tier": None if pd_na(r["authority_tier"]) else int(r["authority_tier"]),
         "valid_until": None if pd_na(r["valid_until"]) else r["valid_until"],
         "superseded_by": None if pd_na(r["superseded_by"]) else r["superseded_by"]})
        for r in list_sources(store).to_dict("records")}
    roles = requester_roles(store)
    rules = default_authority_rules()
    sql = by_response(claim_checks(store))
    assert len(sql) == 60
    for record in records:
        response = parse_response(record)
        claim = response.claims[0]
        expected = check_claim(claim, register_sources.get(claim.source_id), at=response.created_at or scored_at,
                               requester_roles=roles.get(response.use_case), rules=rules)
        got = sql[record["response_id"]]
        for name in ("allowed", "current", "authoritative"):
            check = getattr(expected, name)
            assert (None if pd_na(got[name]) else bool(got[name])) == check.passed, (record, name)
            assert got[f"{name}_reason"] == check.reason, (record, name)
        assert list(got["proposals"]) == [p.proposal for p in expected.proposals], record
        assert got["rule"] == expected.category_rule, record
