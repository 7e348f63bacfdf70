"""The pre-submission checklist (paper Table IX): each automated check passes on the paper's own
register and fails, naming the offending rows, on a register built to break it; sign-offs bind to a
hash of what was checked, go stale when it changes, and need a second person."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from register import SYSTEM, Actor, StaleEdit, Store
from register import governance as gov
from register.db.store import Change
from register.errors import FourEyesViolation, PermissionDenied
from register.governance import checklist as chk
from tests.helpers.actors import enrol

ANN = Actor("ann", "reviewer")
CAROL = Actor("carol", "reviewer")

@pytest.fixture
def store(store):
    """The shared register, with accounts for this module's actors (the register re-reads them on every write)."""
    enrol(store, ANN, CAROL, Actor("dora", "reviewer"), Actor("root", "admin"), Actor("olga", "admin"),
          Actor("vic", "viewer"))
    return store



@pytest.fixture
def paper(store):
    """The demo set: Table V and Factcheck-GPT scored, Table VII as the claims register, Table VIII as rules
    (``store`` is then a copy of the template ``seed_demo(store, SYSTEM)`` built: ``tests/conftest.py``)."""
    return store


def _offending(store, no: int) -> list[str]:
    results = chk.run_checks(store)
    check = results["checks"][no - 1]
    assert check["no"] == no
    assert (check["status"] == "fail") == bool(check["offending"])
    return [f["entity_id"] for f in check["offending"]]


def _add(store, *claims, sources=()):
    if sources:
        gov.save_sources(store, ANN, gov.RowChanges(inserts=[{"values": s} for s in sources]))
    gov.save_claims(store, ANN, gov.RowChanges(inserts=[{"values": c} for c in claims]))


def _claim(key, claim_type, sources=(), status="verified", statement=None):
    return {"claim_key": key, "statement": statement or f"claim {key}", "claim_type": claim_type,
            "source_ids": list(sources), "verification_status": status}


def test_the_paper_register_passes_every_check_but_item_7_and_the_demos_own_findings(paper):
    """The paper's register passes items 1-6; item 7 cannot be evaluated; items 8 and 9 fail where the demo means
    them to: answers resting on a forum post (tier 5), the suspended open-domain use case."""
    results = chk.run_checks(paper)
    assert [c["status"] for c in results["checks"]] == ["pass"] * 6 + ["not evaluable", "fail", "fail"]
    assert results["summary"]["claims"] == 7
    # Table V's answer, the 94 Factcheck-GPT answers and the 60 answers checked by RAGChecker
    assert "155 current scores recomputed in SQL" in results["checks"][6]["note"]
    authority = results["checks"][7]["offending"]
    assert authority and all(f["entity_id"].startswith("fcgpt-") for f in authority)
    assert all("insufficient authority" in f["reason"] and "tier 5" in f["reason"] for f in authority)
    assert [(f["entity_id"], f["reason"]) for f in results["checks"][8]["offending"]] == [
        ("open-domain-qa", "use case open-domain-qa is suspended")]


def test_check_7_is_not_evaluable_when_no_answer_was_labelled_under_the_rubric(paper):
    """The demo's answers carry imported labels only: nobody labelled one under the rubric, so whether labels
    follow the rubric cannot be told. Item 7 must not pass: it fails unless a reviewer waives it."""
    results = chk.run_checks(paper)
    check = results["checks"][6]
    assert check["status"] == "not evaluable" and check["offending"] == []
    assert check["not_evaluable"].startswith("no scored answer has labels annotated or adjudicated under rubric v1")
    assert "no scored response drawn into a labelling batch" in check["note"]
    assert results["summary"]["failed_checks"] == [7, 8, 9] and results["summary"]["not_evaluable_checks"] == [7]
    run = chk.record_run(paper, ANN)
    assert chk.run_detail(paper, run)["outcome"] == "fail"
    with pytest.raises(gov.ValidationFailed) as refused:
        chk.sign(paper, CAROL, run, _all())
    # 8 and 9 (the demo's own findings) passed by hand over failing checks are refused too
    assert [(p.row, p.column) for p in refused.value.problems] == [(7, "decision"), (8, "decision"), (9, "decision")]
    assert "could not be evaluated" in refused.value.problems[0].message
    chk.sign(paper, CAROL, run, _waiving_7())
    assert chk.run_detail(paper, run)["signoffs"][0]["outcome"] == "passed"


def test_check_1_unsourced_factual_claim(paper):
    assert _offending(paper, 1) == []
    _add(paper, _claim("x1", "scientific/methodological", ["ref-7-galileo-index"]),
         _claim("x2", "governance framework"))
    assert _offending(paper, 1) == ["x1", "x2"]


def test_check_2_number_neither_sourced_nor_provisional(paper):
    assert _offending(paper, 2) == []
    _add(paper, _claim("n1", "scientific/methodological", statement="Floors cut misses by 40%."),
         _claim("n2", "original design choice", status="provisional (design parameter)",
                statement="The High band starts at 70."))
    assert _offending(paper, 2) == ["n1"]  # n2 is marked provisional


def test_check_3_vendor_material_presented_as_independent_validation(paper):
    assert _offending(paper, 3) == []
    _add(paper, _claim("v1", "benchmark property or number", ["ref-7-galileo-index"]),
         _claim("v2", "vendor capability", ["ref-7-galileo-index"]))
    assert _offending(paper, 3) == ["v1"]


def test_check_4_original_element_presented_as_established(paper):
    assert _offending(paper, 4) == []
    _add(paper, _claim("o1", "original design choice", ["ref-2-truthfulqa"]),
         _claim("o2", "scientific/methodological", ["hri-paper"]),
         _claim("o3", "original design choice", [], status="hypothesis"))
    assert _offending(paper, 4) == ["o1", "o2"]


def test_check_5_unverifiable_claims_left_in(paper):
    assert _offending(paper, 5) == []
    _add(paper, _claim("u1", "scientific/methodological", status="unverified"),
         _claim("u2", "scientific/methodological", status="removed"))
    assert _offending(paper, 5) == ["u1"]


def test_check_6_mutable_source_without_access_date(paper):
    assert _offending(paper, 6) == []
    # the register refuses such a row, so this stands for data that reached the database another way
    paper.write(SYSTEM, "test.legacy_source", lambda cur: (cur.execute(
        "INSERT INTO sources (source_id, title, source_type) VALUES ('legacy-blog', 'Old blog post', 'web page')"),
        Change("source", "legacy-blog"))[1])
    assert _offending(paper, 6) == ["legacy-blog"]


@pytest.mark.tampers
def test_check_7_a_stored_score_that_does_not_reproduce(paper):
    assert _offending(paper, 7) == []
    victim = paper.query_one("SELECT response_id FROM scores WHERE is_current ORDER BY response_id LIMIT 1")[0]
    paper.write(SYSTEM, "test.tamper", lambda cur: (cur.execute(
        "UPDATE scores SET hri = hri + 0.05, score = score + 5 WHERE is_current AND response_id = ?", [victim]),
        Change("scores", victim))[1])
    assert _offending(paper, 7) == [victim]


# --- runs and sign-offs --------------------------------------------------------------------------------


def _all(decision="pass"):
    return {check.no: {"decision": decision} for check in chk.CHECKS}


def _waiving_7(decision="pass"):
    """Every item ``decision``, item 7 waived: on the paper register nobody labelled an answer under the rubric;
    items 8 and 9 waived too: the demo's Authority and Scope findings are there by design (``register.demo``)."""
    return {**_all(decision), 7: {"decision": "waived", "reason": "labels imported from the paper's Table V"},
            8: {"decision": "waived", "reason": "the demo's stale and weak sources, kept to show the check"},
            9: {"decision": "waived", "reason": "the demo's suspended and overdue use cases, kept to show the check"}}


def test_sign_off_goes_stale_when_a_checked_record_changes(paper):
    run = chk.record_run(paper, ANN)
    chk.sign(paper, CAROL, run, _waiving_7())
    detail = chk.run_detail(paper, run)
    assert not detail["stale"] and detail["signoffs"][0]["outcome"] == "passed"
    assert not detail["signoffs"][0]["stale"]
    row = gov.list_claims(paper).set_index("claim_key").loc["vii-3"].to_dict()
    gov.save_claims(paper, ANN, gov.RowChanges(updates=[
        {"key": "vii-3", "row_version": 1, "values": {**row, "claim_key": "vii-3", "notes": "reworded"}}]))
    detail = chk.run_detail(paper, run)
    assert detail["stale"] and detail["signoffs"][0]["stale"]
    assert chk.history(paper).set_index("run_id").loc[run, "stale"]
    with pytest.raises(StaleEdit, match="run the checklist again"):
        chk.sign(paper, Actor("dora", "reviewer"), run, _waiving_7())
    # a new run over the changed register can be signed again, and is current
    run2 = chk.record_run(paper, CAROL)
    chk.sign(paper, Actor("dora", "reviewer"), run2, _waiving_7())
    assert not chk.run_detail(paper, run2)["stale"]


def test_rule_change_also_makes_a_run_stale(paper):
    run = chk.record_run(paper, ANN)
    version = gov.save_rules(paper, Actor("root", "admin"), gov.list_rules(paper).to_dict("records"), "re-publish")
    assert not chk.run_detail(paper, run)["stale"]  # pending: the rules in force are unchanged
    gov.approve_rules(paper, Actor("olga", "admin"), version, "re-published")  # a second admin (four eyes)
    assert chk.run_detail(paper, run)["stale"]


def test_four_eyes_the_last_editor_cannot_sign(paper):
    _add(paper, _claim("e1", "vendor capability", ["ref-7-galileo-index"]))  # ann edits
    run = chk.record_run(paper, CAROL)
    with pytest.raises(FourEyesViolation) as refused:
        chk.sign(paper, ANN, run, _waiving_7())
    # a whole sentence that says what has to happen (it stopped at "a second person must")
    assert str(refused.value).endswith("a second person must approve it (four eyes)")
    assert paper.query_one("SELECT count(*) FROM checklist_signoffs")[0] == 0
    assert paper.query_one("SELECT count(*) FROM audit_events WHERE action = 'denied' AND actor_name = 'ann'")[0] == 1
    chk.sign(paper, CAROL, run, _waiving_7())  # carol ran it but edited nothing: she may sign


def test_the_same_reviewer_cannot_sign_one_run_twice(paper):
    run = chk.record_run(paper, ANN)
    chk.sign(paper, CAROL, run, _waiving_7())
    with pytest.raises(FourEyesViolation, match="carol already signed checklist run"):
        chk.sign(paper, CAROL, run, _all("fail"))
    assert [s["signed_by"] for s in chk.run_detail(paper, run)["signoffs"]] == ["carol"]
    assert paper.query_one("SELECT count(*) FROM audit_events WHERE action = 'denied' AND actor_name = 'carol'")[0] == 1
    chk.sign(paper, Actor("dora", "reviewer"), run, _waiving_7())  # a second person may
    assert [s["signed_by"] for s in chk.run_detail(paper, run)["signoffs"]] == ["carol", "dora"]


def test_item_decisions_are_validated(paper):
    _add(paper, _claim("u1", "scientific/methodological", status="unverified"))
    run = chk.record_run(paper, CAROL)
    decisions = _waiving_7()
    decisions[6] = {"decision": "waived"}
    with pytest.raises(gov.ValidationFailed) as failed:
        chk.sign(paper, CAROL, run, decisions)  # 1 and 5 failed automatically; 6 waived without reason
    assert {(p.row, p.column) for p in failed.value.problems} == {(1, "decision"), (5, "decision"), (6, "reason")}
    decisions.update({1: {"decision": "fail"}, 5: {"decision": "waived", "reason": "moved to future work"},
                      6: {"decision": "waived", "reason": "no web sources"}})
    chk.sign(paper, CAROL, run, decisions)
    history = chk.history(paper)
    assert history.loc[0, ["run_by", "automated", "failed_checks", "signed_by", "sign_off"]].tolist() == \
        ["carol", "fail", "1, 5, 7 (not evaluable), 8, 9", "carol", "failed"]


def test_a_refused_sign_off_names_each_item_and_why(paper):
    _add(paper, _claim("u1", "scientific/methodological", status="unverified"))
    run = chk.record_run(paper, CAROL)
    decisions = {**_waiving_7(), 2: {"decision": "maybe"}, 6: {"decision": "waived", "reason": "  "},
                 7: {"decision": "pass"}}
    with pytest.raises(gov.ValidationFailed) as refused:
        chk.sign(paper, CAROL, run, decisions)
    error = refused.value
    assert error.title == "Not signed: fix these checklist items"
    assert [p.row for p in error.problems] == [1, 2, 5, 6, 7]
    message = str(error)
    # every refused item by its number and title, with what is wrong with it; no "row 1", no bare count
    assert message.startswith("5 checklist items cannot be signed as given: item 1 (Every factual claim is linked "
                              "to a primary or acceptable secondary source.): passed, but the automated check found "
                              "offending rows")
    assert "item 2 (Every numerical value, benchmark property, and threshold is either sourced or explicitly " \
           "marked as provisional.): no decision: choose one of pass, fail, waived" in message
    assert "item 5 (Ambiguous or unverifiable claims" in message
    assert "item 6 (Mutable web sources include access dates in the reference list or verification register.): " \
           "waived without a reason: a waiver needs a reason" in message
    assert "item 7 (Claim labels, criticality weights, and safety floors are reproducible from the documented " \
           "rubric.): passed, but the automated check could not be evaluated" in message
    assert "row " not in message
    assert paper.scalar("SELECT count(*) FROM checklist_signoffs") == 0


def test_viewer_cannot_run_or_sign(paper):
    with pytest.raises(PermissionDenied):
        chk.record_run(paper, Actor("vic", "viewer"))


# --- release report ------------------------------------------------------------------------------------


def test_release_report_pdf_and_markdown(paper, tmp_path):
    from register.governance import report

    _add(paper, _claim("u1", "scientific/methodological", status="unverified"))
    run = chk.record_run(paper, ANN)
    chk.sign(paper, CAROL, run, {**_waiving_7(), 1: {"decision": "fail"},
                                 5: {"decision": "waived", "reason": "future work"}})
    md = report.report_markdown(paper, run)
    # every value read from the register is escaped for Markdown (it shows as typed): "." as "\.", ids in code spans
    assert "| 5 | Ambiguous or unverifiable claims are removed, softened, or moved to future work\\. | fail | 1 |" in md
    assert "register\\_claim ` u1 `" in md and "item 5: waived - future work" in md
    # item 7 in its own state, with the reason, not as a pass
    assert "| 7 | Claim labels, criticality weights, and safety floors are reproducible from the documented " \
           "rubric\\. | not evaluable | 0 |" in md
    assert "### Check 7: not evaluable" in md and "item 7: waived - labels imported" in md
    pdf = report.report_pdf(paper, run)
    assert pdf.startswith(b"%PDF")
    path = tmp_path / "report.pdf"
    path.write_bytes(pdf)
    if Path("/usr/bin/pdftotext").exists():
        text = subprocess.run(["pdftotext", "-layout", str(path), "-"], check=True, capture_output=True,
                              text=True).stdout
        assert "NOT EVALUABLE" in text and "Not evaluable: no scored answer has labels" in text
    if not Path("/usr/bin/pdftoppm").exists():
        pytest.skip("pdftoppm (poppler-utils) is not installed; the test command installs it")
    out = tmp_path / "checklist-report"  # the test's own folder: passes alone and in any order
    subprocess.run(["pdftoppm", "-png", "-r", "80", "-f", "1", "-l", "1", str(path), str(out)], check=True)
    png = Path(str(out) + "-1.png")
    assert png.stat().st_size > 10_000  # a rendered page, not an empty one


def test_the_release_report_counts_answers_by_decision_and_names_accepted_risks(paper, tmp_path):
    from datetime import timedelta

    from register.console.risk_acceptance import approve_acceptance, propose_acceptance
    from register.db.store import utc_now
    from register.governance import report
    from tests.helpers.actors import enrol
    from tests.helpers.console_records import ALL_DIMS, claim
    from tests.helpers.feedback import import_records

    rita, rob = Actor("rita", "reviewer"), Actor("rob", "reviewer")
    enrol(paper, rita, rob)
    import_records(paper, tmp_path, [{"response_id": "r-block", "use_case": "supplier-contracts", "model": "m",
                                      "question": "Cap?", "answer": "Unlimited.", "claims": [
                                          claim("The cap is unlimited.", ["CONTRADICTED"], 3, dimensions=ALL_DIMS)]}],
                   "block.jsonl")
    run = chk.record_run(paper, ANN)
    counts = dict(paper.query("SELECT decision, count(*) FROM scores WHERE is_current GROUP BY decision"))
    assert counts["block"] >= 1
    md = report.report_markdown(paper, run)
    listed = ", ".join(f"{d} {counts.get(d, 0):,}" for d in ("release", "caution", "review", "block"))
    assert "- Current answers by decision (" in md and f"): {listed}." in md
    assert "- No block answer is released by a risk acceptance." in md
    until = utc_now().date() + timedelta(days=30)
    acceptance = propose_acceptance(paper, rita, "r-block", 1, "release_with_caution", "owner accepts", until)
    approve_acceptance(paper, rob, acceptance)
    md = report.report_markdown(paper, run)
    assert (f"- Risk acceptance {acceptance}: r\\-block revision 1 release\\_with\\_caution until {until}, proposed by "
            "rita, approved by rob.") in md
    pdf = tmp_path / "report.pdf"
    pdf.write_bytes(report.report_pdf(paper, run))
    if Path("/usr/bin/pdftotext").exists():
        text = subprocess.run(["pdftotext", str(pdf), "-"], check=True, capture_output=True, text=True).stdout
        assert "Answers by decision" in text and f"Risk acceptance {acceptance}: r-block" in " ".join(text.split())


# --- the CI gate ---------------------------------------------------------------------------------------


def test_ci_gate_fails_on_item_7_not_evaluable_and_on_violations_with_a_summary(tmp_path, register_cli):
    db = tmp_path / "gate.duckdb"
    cli = register_cli()  # as the login name, like a CI job
    assert cli("--db", str(db), "demo").returncode == 0

    def _gate(*args, db=None):
        return cli(*(["--db", str(db)] if db else []), "checklist", "run", *args)

    # the demo's answers were never labelled under the rubric: item 7 cannot pass, so the gate fails
    demo = _gate("--fail-on", "violations", db=db)
    assert demo.returncode == 1, demo.stdout + demo.stderr
    assert "[NOT EVALUABLE] 7." in demo.stdout and "no scored answer has labels annotated" in demo.stdout
    assert f"3 of {len(chk.CHECKS)} checks failed: 7 (not evaluable), 8, 9" in demo.stdout
    claims = tmp_path / "claims.csv"
    claims.write_text("claim_id,statement,claim_type,source_type,source_ref,access_date,verification_status\n"
                      "b-1,Model X scores 91% on TruthfulQA.,benchmark property or number,vendor documentation,"
                      "https://vendor.example/blog,2026-11-01,verified\n")
    bad = _gate("--fail-on", "violations", "--claims", str(claims))
    assert bad.returncode == 1
    assert "[FAIL] 1." in bad.stdout and "register_claim b-1" in bad.stdout
    assert f"3 of {len(chk.CHECKS)} checks failed: 1, 2, 3" in bad.stdout
    assert _gate("--claims", str(claims)).returncode == 0  # without --fail-on it only reports


def test_governance_cli_exports_and_reimports_without_duplicates(tmp_path, register_cli):
    db = tmp_path / "cli.duckdb"
    run = register_cli()

    def cli(*args):
        return run("--db", str(db), *args)

    assert cli("demo").returncode == 0
    out = tmp_path / "claims.xlsx"
    exported = cli("governance", "export", "claims", str(out))
    assert exported.returncode == 0 and "7 rows written" in exported.stdout
    again = cli("governance", "import", "claims", str(out))
    assert again.returncode == 0, again.stderr
    assert "7 rows: 0 new, 0 updated, 7 unchanged, 0 rejected" in again.stdout
    bad = tmp_path / "bad.csv"
    bad.write_text("statement,claim_type,verification_status\nSomething,gossip,verified\n")
    refused = cli("governance", "import", "claims", str(bad))
    assert refused.returncode == 2 and "row 1, claim_type" in refused.stderr


def test_governance_cli_csv_export_keeps_a_value_with_a_carriage_return_on_its_row(tmp_path, register_cli):
    import csv

    db = tmp_path / "cli.duckdb"
    run = register_cli()
    assert run("--db", str(db), "demo").returncode == 0
    store = Store(db)
    try:
        enrol(store, ANN)
        gov.add_row(store, ANN, "claims", {"statement": "A bare carriage\rreturn", "claim_type": "scientific/"
                                           "methodological", "verification_status": "unverified",
                                           "notes": 'a "quote", a comma\r\nand a line'})
    finally:
        store.close()
    out = tmp_path / "claims.csv"
    assert run("--db", str(db), "governance", "export", "claims", str(out)).returncode == 0
    with out.open(newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    assert len(rows) == 1 + 8 and {len(r) for r in rows} == {len(rows[0])}
    assert any(r[1] == "A bare carriage\rreturn" for r in rows)
