"""The verification pipeline and its proposals: extract -> link -> infer stored as proposals and a scored revision;
only confirmed or policy-allowed verdicts reach a claim's labels (both paths); UNLINKED; the offline judge never
clears critical claims; the ``verify`` command."""

from __future__ import annotations

import json

import pytest

from hri_core.judge_policy import JudgePolicyError
from hri_core.vocabulary import Label
from register import SYSTEM, Actor
from register.errors import PermissionDenied, RegisterError
from register.ingest.importer import import_path
from register.verify.judge_cli import judge_for, load_profile
from register.verify.pipeline import VerifyInput, read_inputs, verify
from register.verify.policy import active_policy, approve_policy, publish_policy, turn_policy_off
from register.verify.proposals import Decision, decide_proposals, list_proposals, proposal_counts
from tests.helpers.actors import ANN, ANNOTATOR, BOB, REVIEWER, enrol

NILE = {"response_id": "r-nile", "question": "Where does the Nile flow?",
        "answer": "The Nile flows into the Mediterranean Sea. Bananas are the largest export of Egypt.",
        "retrieved_context": ["Rivers of Africa.", "The Nile flows north and flows into the Mediterranean Sea at "
                                                   "Alexandria."],
        "gt_answer": "The Nile flows into the Mediterranean Sea."}
POLICY = {"description": "the offline default may clear general low-stakes claims",
          "rules": [{"profiles": ["offline-default"], "backends": ["offline-lexical"], "labels": ["SUPPORTED"],
                     "min_confidence": 0.5, "categories": ["general"], "stakes": ["low", "unknown"],
                     "max_criticality": 2}]}


def inputs(*records):
    return [item for item in read_inputs(json.dumps(r) for r in records) if isinstance(item, VerifyInput)]


def run(store, *records, actor=ANNOTATOR):
    return verify(store, actor, inputs(*records), judge_for(load_profile("offline-default")), source_name="t.jsonl")


def current_labels(store, response_id):
    return [(cid, list(labels)) for cid, labels in store.query(
        "SELECT claim_id, labels FROM claims WHERE is_current AND response_id = ? ORDER BY claim_idx", [response_id])]


def test_verify_stores_claims_spans_link_scores_and_verdicts_as_proposals_and_a_scored_revision(store):
    report = run(store, NILE)
    assert (report.responses, report.claims, report.applied) == (1, 2, 0)
    rows = list_proposals(store, response_id="r-nile")
    assert [r["claim_text"] for r in rows] == ["The Nile flows into the Mediterranean Sea.",
                                               "Bananas are the largest export of Egypt."]
    nile, bananas = rows
    assert nile["label"] == "SUPPORTED" and nile["evidence_index"] == 1 and "Mediterranean" in nile["span"]
    assert nile["link_score"] == 1.0 and not nile["unlinked"] and nile["target_label"] == "SUPPORTED"
    assert (nile["backend"], nile["judge_profile"], nile["status"]) == ("offline-lexical", "offline-default@2",
                                                                         "proposed")
    assert bananas["unlinked"] and bananas["label"] != "SUPPORTED"
    # nothing unconfirmed reaches the score: every claim carries the unverified label
    assert current_labels(store, "r-nile") == [("c1", ["UNSUPPORTED"]), ("c2", ["UNSUPPORTED"])]
    assert store.scalar("SELECT count(*) FROM scores WHERE is_current AND response_id = 'r-nile'") == 1
    assert store.scalar("SELECT format FROM import_batches WHERE batch_id = ?", [report.batch_id]) \
        == "revision:verification"


def test_a_confirmed_proposal_reaches_the_score_as_a_new_revision(store):
    run(store, NILE)
    before = store.one("SELECT revision, score FROM scores WHERE is_current AND response_id = 'r-nile'")
    nile, bananas = list_proposals(store, response_id="r-nile")
    result = decide_proposals(store, ANNOTATOR, [Decision(nile["proposal_id"], "confirm"),
                                                 Decision(bananas["proposal_id"], "reject")])
    assert (result["confirmed"], result["rejected"]) == (1, 1)
    assert current_labels(store, "r-nile") == [("c1", ["SUPPORTED"]), ("c2", ["UNSUPPORTED"])]
    after = store.one("SELECT revision, score FROM scores WHERE is_current AND response_id = 'r-nile'")
    assert after["revision"] == before["revision"] + 1 and after["score"] < before["score"]
    decided = {r["proposal_id"]: r for r in list_proposals(store, status=None, response_id="r-nile")}
    assert decided[nile["proposal_id"]]["status"] == "confirmed"
    assert decided[nile["proposal_id"]]["decided_by"] == ANNOTATOR.name
    assert decided[bananas["proposal_id"]]["status"] == "rejected"
    assert store.scalar("SELECT count(*) FROM audit_events WHERE action = 'judge_proposal.decide'") == 1


def test_a_person_corrects_a_proposal_or_labels_an_abstention(store):
    run(store, NILE)
    _nile, bananas = list_proposals(store, response_id="r-nile")
    decide_proposals(store, ANNOTATOR, [Decision(bananas["proposal_id"], "confirm", Label.CONTRADICTED)])
    assert current_labels(store, "r-nile")[1] == ("c2", ["CONTRADICTED"])


def test_decisions_are_refused_whole_when_one_is_wrong(store):
    run(store, NILE)
    nile, _bananas = list_proposals(store, response_id="r-nile")
    decide_proposals(store, ANNOTATOR, [Decision(nile["proposal_id"], "reject")])
    with pytest.raises(RegisterError, match="already rejected"):
        decide_proposals(store, ANNOTATOR, [Decision(nile["proposal_id"], "confirm")])
    with pytest.raises(RegisterError, match="does not exist"):
        decide_proposals(store, ANNOTATOR, [Decision(99_999, "confirm")])
    viewer = Actor("Vic Viewer", "viewer")
    enrol(store, viewer)  # refused for the role, not for a missing account
    with pytest.raises(PermissionDenied, match="may not"):
        decide_proposals(store, viewer, [Decision(nile["proposal_id"], "confirm")])
    assert current_labels(store, "r-nile") == [("c1", ["UNSUPPORTED"]), ("c2", ["UNSUPPORTED"])]


def test_a_stale_proposal_is_refused(store, tmp_path):
    run(store, NILE)
    first = list_proposals(store, response_id="r-nile")[0]
    path = tmp_path / "again.jsonl"  # a new revision of the answer: claim c1 is another sentence now
    path.write_text(json.dumps({"response_id": "r-nile", "answer": NILE["answer"], "claims": [
        {"claim_id": "c1", "text": "Bananas are the largest export of Egypt.", "labels": ["UNSUPPORTED"]}]}) + "\n")
    import_path(store, SYSTEM, path)
    with pytest.raises(RegisterError, match="stale"):
        decide_proposals(store, ANNOTATOR, [Decision(first["proposal_id"], "confirm")])


def test_a_file_answer_that_differs_from_a_stored_one_with_claims_is_named_not_verified(store):
    run(store, NILE)
    claims = current_labels(store, "r-nile")
    enrol(store, REVIEWER)
    report = run(store, {**NILE, "answer": "The Nile flows south."}, {**NILE, "response_id": "r-new"},
                 actor=REVIEWER)
    assert report.responses == 1 and current_labels(store, "r-nile") == claims
    assert report.problems == ["line 1: answer: response r-nile has claims in the register under another answer "
                               "text: import the new answer first, then verify it"]


def test_with_no_policy_nothing_is_applied_and_with_one_the_allowed_verdicts_are(store):
    assert active_policy(store) is None
    version = publish_policy(store, ANN, POLICY)
    assert active_policy(store) is None  # pending until a second admin approves it (four eyes)
    enrol(store, BOB)
    approve_policy(store, BOB, version, "checked on the test set")
    report = run(store, NILE)
    assert report.applied == 1 and report.proposed == 1
    applied = [r for r in list_proposals(store, status="applied")]
    assert [(r["claim_id"], r["final_label"], r["policy_version"]) for r in applied] == [("c1", "SUPPORTED", version)]
    assert current_labels(store, "r-nile") == [("c1", ["SUPPORTED"]), ("c2", ["UNSUPPORTED"])]
    assert turn_policy_off(store, ANN) == version and active_policy(store) is None
    run(store, {**NILE, "response_id": "r-nile-2"})
    assert current_labels(store, "r-nile-2") == [("c1", ["UNSUPPORTED"]), ("c2", ["UNSUPPORTED"])]


def test_the_policy_does_not_cover_other_stakes_or_categories(store):
    enrol(store, BOB)
    approve_policy(store, BOB, publish_policy(store, ANN, POLICY), "checked")
    run(store, {**NILE, "stakes": "medium"}, {**NILE, "response_id": "r-2", "category": "financial"})
    assert proposal_counts(store)["applied"] == 0


def test_no_policy_may_let_an_offline_judge_clear_critical_claims(store):
    unsafe = {"rules": [{**POLICY["rules"][0], "categories": ["general", "health"], "stakes": ["high"]}]}
    with pytest.raises(JudgePolicyError, match="never clear"):
        publish_policy(store, ANN, unsafe)
    with pytest.raises(PermissionDenied):
        publish_policy(store, ANNOTATOR, POLICY)
    assert active_policy(store) is None


def test_the_offline_judge_never_clears_a_critical_category_or_high_stakes(store):
    run(store, {**NILE, "category": "health"}, {**NILE, "response_id": "r-high", "stakes": "high"})
    rows = list_proposals(store)
    assert all(r["label"] != "SUPPORTED" for r in rows)
    assert any("never clears a health claim" in r["reason"] for r in rows)
    assert any("never clears a high-stakes answer" in r["reason"] for r in rows)


def test_an_unlinked_claim_is_flagged_and_never_cleared(store):
    report = verify(store, ANNOTATOR, inputs(NILE), judge_for(load_profile("offline-default")), source_name="t",
                    link_threshold=1.0)
    assert report.unlinked >= 1
    rows = list_proposals(store)
    assert all(r["label"] != "SUPPORTED" for r in rows if r["unlinked"])


def test_the_verify_command_reports_bad_lines_and_verifies_the_good_ones(register_cli, tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join([json.dumps(NILE), json.dumps({"answer": "x"}), "{not json",
                               json.dumps({**NILE, "response_id": "r-2", "stakes": "extreme"})]) + "\n")
    run_cli = register_cli()
    result = run_cli("verify", path, "--json", "--quiet")
    assert result.returncode == 2, result.stderr
    assert "line 2: retrieved_context: required" in result.stderr and "line 3: malformed JSON" in result.stderr
    assert "line 4: stakes: one of" in result.stderr and "3 line(s) skipped" in result.stderr
    report = json.loads(result.stdout)
    assert (report["responses"], report["claims"], report["skipped_lines"]) == (1, 2, 3)
    plain = run_cli("verify", path)
    assert "claims judged" in plain.stderr and "proposals await a person" in plain.stdout


def test_an_unpunctuated_long_answer_is_stored_with_bounded_claim_and_span(store):
    long_answer = "word " * 5_000 + "ends here"  # one 25,000-character "sentence"
    report = run(store, {"response_id": "r-long", "answer": long_answer, "retrieved_context": [long_answer]})
    (row,) = list_proposals(store, response_id="r-long")
    stored = store.query_one("SELECT text, span FROM claims WHERE is_current AND response_id = 'r-long'")
    assert report.claims == 1 and len(stored[0]) == 20_000 and stored[0] == row["claim_text"]
    assert len(stored[1]) <= 20_000
    decide_proposals(store, ANNOTATOR, [Decision(row["proposal_id"], "confirm", Label.PARTIAL)])  # not stale
    assert current_labels(store, "r-long") == [("c1", ["PARTIAL"])]


def test_an_answer_over_the_text_limit_is_a_bad_line():
    (problems,) = list(read_inputs([json.dumps({**NILE, "question": "q" * 20_001})]))
    assert problems == ["line 1: question: longer than 20,000 characters"]


def test_a_linked_claim_carries_its_chunks_source_and_an_unlinked_one_no_span(store):
    record = {**NILE, "retrieved_context": [
        {"id": "k1", "text": "Rivers of Africa and Egypt.", "source_id": "atlas-old"},
        {"id": "k2", "text": "The Nile flows north and flows into the Mediterranean Sea at Alexandria.",
         "source_id": "atlas"}]}
    run(store, record)
    claims = store.dicts("SELECT claim_id, source_id, span FROM claims WHERE is_current AND response_id = 'r-nile' "
                         "ORDER BY claim_idx")
    assert claims[0]["source_id"] == "atlas" and "Mediterranean" in claims[0]["span"]  # Authority checks atlas
    assert (claims[1]["source_id"], claims[1]["span"]) == (None, None)  # UNLINKED: nothing backs it
    bananas = list_proposals(store, response_id="r-nile")[1]
    assert bananas["unlinked"] and bananas["span"] is None and "no evidence is linked" in bananas["reason"]
    mitigation = store.scalar("SELECT mitigation_reason FROM current_scores WHERE response_id = 'r-nile'")
    assert "evidence is linked to it" not in (mitigation or "").replace("no evidence is linked to it", "")
