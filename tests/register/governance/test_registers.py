"""Source and claims registers and the minimum evidence rules (paper Tables VII and VIII)."""

from __future__ import annotations

import io
from datetime import date

import pandas as pd
import pytest

from register import Actor, ImportRejected, StaleEdit
from register import governance as gov
from register.errors import PermissionDenied
from tests.helpers.actors import enrol

ANN = Actor("ann", "reviewer")
BOB = Actor("bob", "reviewer")

@pytest.fixture
def store(store):
    """The shared register, with accounts for this module's actors (the register re-reads them on every write)."""
    enrol(store, ANN, BOB, Actor("root", "admin"), Actor("vic", "viewer"))
    return store



def _source(source_id, source_type, **extra):
    values = {"source_id": source_id, "title": f"title of {source_id}", "source_type": source_type}
    if source_type in gov.MUTABLE_SOURCE_TYPES:
        values.setdefault("access_date", "2026-07-01")
    values.update(extra)
    return {"values": values}


def _claim(key, claim_type, source_ids=(), status="verified", statement=None):
    return {"values": {"claim_key": key, "statement": statement or f"statement {key}", "claim_type": claim_type,
                       "source_ids": list(source_ids), "verification_status": status}}


@pytest.fixture
def reg(store):
    gov.ensure_default_rules(store, Actor("root", "admin"))
    gov.save_sources(store, ANN, gov.RowChanges(inserts=[_source(f"s-{i}", t) for i, t in enumerate(gov.SOURCE_TYPES)]))
    return store


def _src(source_type: str) -> str:
    return f"s-{gov.SOURCE_TYPES.index(source_type)}"


# each row of Table VIII as worded (the rules in force): a claim resting on acceptable evidence (with the status
# it may carry), one resting on unacceptable evidence (a violation with the rule's required handling), and one
# whose status shows the handling was applied
TABLE_VIII = [
    ("scientific/methodological", "peer-reviewed publication", "verified", "web page",
     "remove / soften / mark as hypothesis", "hypothesis"),
    ("benchmark property or number", "official dataset card or repository documentation", "verified",
     "vendor documentation", "do not report the number", "removed"),
    ("vendor capability", "vendor documentation", "verified", "web page", "classify as vendor claim", "removed"),
    ("governance framework", "official framework", "verified", "web page", "soften", "not claimed"),
    ("internal policy/permission", "approved internal policy / access-control record", "verified",
     "vendor documentation", "classify as ACCESS_GAP/UNKNOWN", "ACCESS_GAP"),
    ("original design choice", "original proposal", "not a literature claim", "peer-reviewed publication",
     "mark as hypothesis", "hypothesis"),
]


@pytest.mark.parametrize("claim_type, good, good_status, bad, handling, handled_status", TABLE_VIII)
def test_table_viii_rule_evaluation(reg, claim_type, good, good_status, bad, handling, handled_status):
    gov.save_claims(reg, ANN, gov.RowChanges(inserts=[
        _claim("ok", claim_type, [_src(good)], status=good_status),
        _claim("bad", claim_type, [_src(bad)]),
        _claim("none", claim_type, []),
        _claim("handled", claim_type, [], status=handled_status)]))
    ev = gov.evaluate_rules(reg).set_index("claim_key")
    assert ev.loc["ok", "outcome"] == "compliant"
    assert ev.loc["ok", "reason"] == f"acceptable source: {_src(good)}"
    for key in ("bad", "none"):
        assert ev.loc[key, "outcome"] == "violation"
        assert ev.loc[key, "required_handling"] == handling
    assert ev.loc["handled", "outcome"] == "compliant"
    assert pd.isna(ev.loc["handled", "required_handling"])


def test_expired_or_superseded_sources_are_not_evidence(reg):
    gov.save_sources(reg, ANN, gov.RowChanges(inserts=[
        _source("old", "peer-reviewed publication", valid_until="2020-01-01"),
        _source("replaced", "peer-reviewed publication", superseded_by="s-0")]))
    gov.save_claims(reg, ANN, gov.RowChanges(inserts=[
        _claim("a", "scientific/methodological", ["old"]), _claim("b", "scientific/methodological", ["replaced"])]))
    ev = gov.evaluate_rules(reg, today=date(2026, 11, 30)).set_index("claim_key")
    assert list(ev["outcome"]) == ["violation", "violation"]


def test_rules_are_versioned_and_the_newest_is_in_force(reg):
    gov.save_claims(reg, ANN, gov.RowChanges(inserts=[_claim("w", "scientific/methodological", [_src("web page")])]))
    assert gov.evaluate_rules(reg).set_index("claim_key").loc["w", "outcome"] == "violation"
    rules = gov.list_rules(reg).to_dict("records")
    for r in rules:
        if r["claim_type"] == "scientific/methodological":
            r["acceptable_source_types"] = list(r["acceptable_source_types"]) + ["web page"]
    admin = Actor("root", "admin")
    assert gov.save_rules(reg, admin, rules, "accept blog posts for methods") == 3  # after the two of Table VIII
    assert gov.evaluate_rules(reg).set_index("claim_key").loc["w", "outcome"] == "violation"  # pending
    second = Actor("olga", "admin")
    enrol(reg, second)
    gov.approve_rules(reg, second, 3, "methods papers are often blog posts")  # four eyes
    assert gov.evaluate_rules(reg).set_index("claim_key").loc["w", "outcome"] == "compliant"
    assert gov.evaluate_rules(reg, 1).set_index("claim_key").loc["w", "outcome"] == "violation"  # version 1 kept
    with pytest.raises(PermissionDenied):
        gov.save_rules(reg, ANN, rules, "a reviewer may not")
    with pytest.raises(gov.ValidationFailed) as failed:
        gov.save_rules(reg, admin, [{"claim_type": "gossip", "acceptable_source_types": ["rumour"],
                                     "handling": []}], "")
    assert {(p.row, p.column) for p in failed.value.problems} == {
        (1, "claim_type"), (1, "acceptable_source_types"), (1, "handling"), (None, "reason")}


def test_validation_collects_every_failure_before_writing(reg):
    before = reg.query_one("SELECT count(*) FROM sources")[0]
    with pytest.raises(gov.ValidationFailed) as failed:
        gov.save_sources(reg, ANN, gov.RowChanges(inserts=[
            _source("ok-1", "preprint"),
            {"values": {"source_id": "w", "title": "blog", "source_type": "web page"}},
            {"values": {"source_id": "x", "source_type": "rumour", "authority_tier": 9, "access_date": "soon"}}]))
    assert {(p.row, p.column) for p in failed.value.problems} == {
        (2, "access_date"), (3, "source_type"), (3, "authority_tier"), (3, "access_date"), (3, "title")}
    assert reg.query_one("SELECT count(*) FROM sources")[0] == before  # the valid row was not written either


def test_unknown_source_links_are_refused(reg):
    with pytest.raises(gov.ValidationFailed, match="unknown source 'nope'"):
        gov.save_claims(reg, ANN, gov.RowChanges(inserts=[_claim("c", "vendor capability", ["nope"])]))


def test_stale_edit_is_refused_not_overwritten_and_changes_are_audited(reg):
    gov.save_claims(reg, ANN, gov.RowChanges(
        inserts=[_claim("c", "vendor capability", [_src("vendor documentation")])]))
    row = gov.list_claims(reg).iloc[0].to_dict()
    gov.save_claims(reg, BOB, gov.RowChanges(
        updates=[{"key": "c", "row_version": 1, "values": {**row, "notes": "bob"}}]))
    with pytest.raises(StaleEdit, match=r"changed by bob at .* \(now version 2\), reload"):
        gov.save_claims(reg, ANN, gov.RowChanges(updates=[{"key": "c", "row_version": 1,
                                                           "values": {**row, "notes": "ann"}}]))
    assert reg.query_one("SELECT notes, updated_by FROM register_claims WHERE claim_key = 'c'") == ("bob", "bob")
    before, after = reg.query_one("SELECT before, after FROM audit_events WHERE action = 'register_claim.update'")
    assert '"notes":null' in before and '"notes":"bob"' in after


def test_soft_delete_and_restore(reg):
    gov.save_claims(reg, ANN, gov.RowChanges(
        inserts=[_claim("c", "vendor capability", [_src("vendor documentation")])]))
    gov.save_claims(reg, ANN, gov.RowChanges(deletes=[{"key": "c", "row_version": 1}]))
    assert gov.list_claims(reg).empty
    assert gov.list_claims(reg, include_deleted=True)["deleted"].tolist() == [True]
    gov.restore(reg, BOB, "claims", "c")
    assert gov.list_claims(reg)["claim_key"].tolist() == ["c"]
    actions = [r[0] for r in reg.query("SELECT action FROM audit_events WHERE entity_id = 'c' ORDER BY seq")]
    assert actions == ["register_claim.create", "register_claim.delete", "register_claim.restore"]


def test_viewer_cannot_edit_and_the_attempt_is_audited(reg):
    with pytest.raises(PermissionDenied):
        gov.save_sources(reg, Actor("vic", "viewer"), gov.RowChanges(inserts=[_source("v", "preprint")]))
    assert reg.query_one("SELECT count(*) FROM audit_events WHERE action = 'denied' AND actor_name = 'vic'")[0] == 1


def test_restricted_sources_are_shown_only_to_their_roles(reg):
    gov.save_sources(reg, ANN, gov.RowChanges(inserts=[
        _source("acl", "approved internal policy / access-control record", restricted_to="admin")]))
    assert "acl" not in gov.list_sources(reg, role="reviewer")["source_id"].tolist()
    assert "acl" in gov.list_sources(reg, role="admin")["source_id"].tolist()


# --- import / export -----------------------------------------------------------------------------------


def _csv(frame: pd.DataFrame) -> bytes:
    return frame.to_csv(index=False).encode()


def test_claims_template_has_the_required_columns():
    columns = list(gov.template("claims").columns)
    for required in ("statement", "claim_type", "source_type", "source_ref", "access_date", "verification_status"):
        assert required in columns


def test_import_reports_bad_rows_keeps_good_ones_and_reimport_updates(reg):
    rows = pd.DataFrame([
        {"claim_id": "", "statement": "TruthfulQA has 817 questions.", "claim_type": "benchmark property or number",
         "source_type": "recognized conference proceedings", "source_ref": "Lin et al. ACL 2022", "access_date": "",
         "verification_status": "verified"},
        {"claim_id": "", "statement": "Vendor X never hallucinates.", "claim_type": "vendor capability",
         "source_type": "web page", "source_ref": "https://x.example/blog", "access_date": "",
         "verification_status": "verified"},
        {"claim_id": "k-3", "statement": "", "claim_type": "magic", "source_type": "", "source_ref": "",
         "access_date": "", "verification_status": "sure"},
    ])
    result = gov.import_register(reg, ANN, "claims", gov.read_upload("claims.csv", _csv(rows)))
    assert (result.rows, result.inserted, result.rejected_rows) == (3, 1, 2)
    reasons = {(p.row, p.column) for p in result.rejected}
    assert (2, "access_date") in reasons  # a web page source without access date: the row is reported
    assert {(3, "statement"), (3, "claim_type"), (3, "verification_status")} <= reasons
    claims = gov.list_claims(reg)
    assert claims["statement"].tolist() == ["TruthfulQA has 817 questions."]
    # fix the file and import it again: the first row is updated in place (stable key), not duplicated
    rows.loc[1, "access_date"] = "2026-11-01"
    rows.loc[0, "verification_status"] = "partially verified"
    again = gov.import_register(reg, ANN, "claims", gov.read_upload("claims.csv", _csv(rows.iloc[:2])))
    assert (again.inserted, again.updated, again.rejected_rows) == (1, 1, 0)
    assert len(gov.list_claims(reg)) == 2
    assert gov.list_claims(reg).iloc[0]["verification_status"] == "partially verified"


def test_export_round_trips_and_is_formula_escaped(reg):
    gov.save_claims(reg, ANN, gov.RowChanges(inserts=[
        _claim("f", "vendor capability", [_src("vendor documentation")], statement="=HYPERLINK(\"x\") is risky")]))
    exported = gov.formula_escaped(gov.export_claims(reg))
    assert exported.loc[0, "statement"].startswith("'=")
    buffer = io.BytesIO()
    exported.to_excel(buffer, index=False)
    again = gov.import_register(reg, ANN, "claims", gov.read_upload("c.xlsx", buffer.getvalue()))
    assert (again.inserted, again.updated, again.unchanged, again.rejected_rows) == (0, 0, 1, 0)
    assert gov.list_claims(reg).loc[0, "statement"] == "=HYPERLINK(\"x\") is risky"


@pytest.mark.parametrize("name, content, message", [
    ("claims.txt", b"statement\n", "only .csv and .xlsx"),
    ("claims.xlsx", b"not a zip", "not an Excel workbook"),
    ("claims.csv", b"", "is empty"),
    ("claims.csv", b"a" * (gov.MAX_UPLOAD_BYTES + 1), "the limit is"),
])
def test_uploads_are_checked_for_size_and_type(name, content, message):
    with pytest.raises(ImportRejected, match=message):
        gov.read_upload(name, content)


def test_the_paper_register_is_part_of_the_demo(store):
    from register import SYSTEM
    from register.demo import DATA_DIR, seed_demo
    from register.demo.sources import demo_source_rows

    seed_demo(store, SYSTEM)
    claims = gov.list_claims(store)
    assert len(claims) == 7  # Table VII's seven rows
    assert claims.set_index("claim_key").loc["vii-7", "verification_status"] == "not claimed"
    sources = set(gov.list_sources(store)["source_id"])
    # references [1]-[9] and the paper's own proposal, beside the sources the demo's answers cite
    assert len([s for s in sources if s.startswith("ref-")]) == 9 and "hri-paper" in sources
    assert len(sources) == 10 + len(demo_source_rows(DATA_DIR))
    assert (gov.evaluate_rules(store)["outcome"] == "compliant").all()
    seed_demo(store, SYSTEM)  # idempotent
    assert len(gov.list_claims(store)) == 7
    assert len(gov.list_sources(store)) == len(sources)


def test_rows_added_by_hand_get_readable_keys(reg):
    first = gov.add_row(reg, ANN, "sources", {"title": "NIST AI RMF 1.0", "source_type": "official framework"})
    second = gov.add_row(reg, ANN, "sources", {"title": "NIST AI RMF 1.0", "ref": "another edition",
                                                "source_type": "official framework"})
    assert (first, second) == ("src-nist-ai-rmf-1-0", "src-nist-ai-rmf-1-0-2")
    statement = "The supplier's platform holds an ISO 27001 certificate valid until the end of 2027, audited yearly."
    claim = gov.add_row(reg, ANN, "claims", {"statement": statement, "claim_type": "vendor capability",
                                             "verification_status": "unverified", "source_ids": [first]})
    assert claim == "clm-the-supplier-s-platform-holds-an-iso"  # whole words, the slug at most 40 characters
    assert set(gov.list_claims(reg)["claim_key"]) >= {claim}
    # a deleted row keeps its key taken (restoring it brings it back)
    gov.save_sources(reg, ANN, gov.RowChanges(deletes=[{"key": second, "row_version": 1}]))
    assert gov.readable_key(reg, "sources", "NIST AI RMF 1.0") == "src-nist-ai-rmf-1-0-3"
    # a key typed in is kept as typed
    assert gov.add_row(reg, ANN, "sources", {"source_id": "my-id", "title": "x", "source_type": "preprint"}) == "my-id"


def test_a_row_added_by_hand_that_fails_validation_names_the_field(reg):
    with pytest.raises(gov.ValidationFailed) as refused:
        gov.add_row(reg, ANN, "sources", {"title": "Vendor blog", "source_type": "web page"})
    assert [(p.row, p.column) for p in refused.value.problems] == [(1, "access_date")]
    assert not gov.list_sources(reg)["title"].eq("Vendor blog").any()  # nothing written
