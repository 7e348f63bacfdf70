"""Disagreements go to the adjudication queue; the rule (majority, expert, escalation), reason and adjudicator
are kept; the adjudicator is none of the annotators (four eyes); the resolved labels become the next revision,
rescored and audited, with the provenance of every label."""

from __future__ import annotations

import json

import pytest

from register import SYSTEM
from register.access.identity import set_role
from register.errors import FourEyesViolation, LabellingError, PermissionDenied
from register.ingest.importer import import_path
from register.labels import adjudication, batches, workbench
from tests.helpers.console_records import write_jsonl
from tests.helpers.labelling import ADA, AGREED, ANNA, BEN, CARL, RECORDS, RITA, label_all

CONTRADICTED = {"labels": ["CONTRADICTED"], "criticality": 3, "category": "contractual"}
PARTIAL = {"labels": ["PARTIAL"], "criticality": 2, "category": "contractual"}


def _score(lab, response_id):
    return lab.one("SELECT revision, score, band FROM scores WHERE is_current AND response_id = ?", [response_id])


def _disagreeing_batch(lab, annotators=("anna", "ben")) -> int:
    batch_id = batches.create_batch(lab, RITA, "pilot", batches.Selection(use_cases=("contracts",)), list(annotators))
    for actor in (ANNA, BEN):
        label_all(lab, batch_id, actor, AGREED)
    label_all(lab, batch_id, ANNA, {("r1", "r1-2"): CONTRADICTED})
    label_all(lab, batch_id, BEN, {("r1", "r1-2"): PARTIAL})
    return batch_id


def test_a_disagreement_is_queued_and_an_expert_adjudication_revises_and_rescores_the_response(lab):
    batch_id = _disagreeing_batch(lab)
    before = _score(lab, "r1")
    queued = adjudication.queue(lab, RITA)
    assert queued[["batch_id", "response_id", "unit_id", "readings"]].values.tolist() == [[batch_id, "r1", "r1-2", 2]]
    readings = adjudication.unit_readings(lab, RITA, batch_id, "r1", "r1-2")
    assert readings["reading"].tolist() == ["CONTRADICTED|3|contractual||", "PARTIAL|2|contractual||"]
    # r2 was agreed: applying the agreed responses revises it alone, with provenance "annotated"
    report = adjudication.apply_resolved(lab, RITA, batch_id)
    assert report.applied == ["r2"] and _score(lab, "r1") == before
    report = adjudication.adjudicate(lab, RITA, batch_id, "r1", "r1-2", rule="expert",
                                     reason="the contract gives Mon-Fri support", **CONTRADICTED)
    assert report.applied == ["r1"] and report.new_revisions == 1
    after = _score(lab, "r1")
    assert after["revision"] == before["revision"] + 1
    assert (before["band"], after["band"]) == ("Low", "High") and after["score"] > before["score"]
    claims = lab.dicts("SELECT claim_id, labels, criticality FROM claims WHERE response_id = 'r1' AND is_current "
                       "ORDER BY claim_idx")
    assert [(c["claim_id"], list(c["labels"]), c["criticality"]) for c in claims] == [
        ("r1-1", ["SUPPORTED"], 3), ("r1-2", ["CONTRADICTED"], 3)]
    provenance = adjudication.label_provenance(lab, "r1")
    assert provenance[["claim_id", "label", "provenance", "rule", "adjudicator"]].fillna("").values.tolist() == [
        ["r1-1", "SUPPORTED", "annotated", "", ""], ["r1-2", "CONTRADICTED", "adjudicated", "expert", "rita"]]
    assert adjudication.queue(lab, RITA).empty
    # the record keeps its extensions (category, retrieved context) in the new revision
    raw = json.loads(lab.scalar("SELECT raw FROM responses WHERE response_id = 'r1' AND is_current"))
    assert raw["retrieved_context"][0]["id"] == "k1" and raw["claims"][1]["category"] == "contractual"
    actions = [a for (a,) in lab.query("SELECT action FROM audit_events WHERE seq > (SELECT max(seq) FROM audit_events "
                                       "WHERE action = 'label.annotate') ORDER BY seq")]
    assert actions.count("label.adjudicate") == 1 and actions.count("label.apply") == 2
    assert "scores.rescore" in actions and actions.index("label.adjudicate") < len(actions) - 1
    batch_formats = [f for (f,) in lab.query("SELECT format FROM import_batches ORDER BY batch_id")]
    assert batch_formats[-2:] == ["revision:annotation", "revision:adjudication"]


def test_four_eyes_an_annotator_of_the_batch_cannot_adjudicate_it(lab):
    batch_id = _disagreeing_batch(lab)
    set_role(lab, SYSTEM, "anna", "reviewer")  # an annotator of the batch promoted since: a reviewer now
    with pytest.raises(FourEyesViolation):
        adjudication.adjudicate(lab, type(RITA)("anna", "reviewer"), batch_id, "r1", "r1-2", rule="expert",
                                reason="mine", **CONTRADICTED)
    with pytest.raises(PermissionDenied):
        adjudication.adjudicate(lab, CARL, batch_id, "r1", "r1-2", rule="expert", reason="x", **CONTRADICTED)
    assert lab.scalar("SELECT count(*) FROM adjudications") == 0


def test_majority_needs_a_strict_majority(lab):
    batch_id = _disagreeing_batch(lab)
    with pytest.raises(LabellingError, match="no strict majority among 2 annotators"):
        adjudication.adjudicate(lab, RITA, batch_id, "r1", "r1-2", rule="majority", reason="two of two")


def test_majority_of_three_annotators_takes_the_reading_two_gave(lab):
    batch_id = batches.create_batch(lab, RITA, "three", batches.Selection(response_ids=("r1",)),
                                    ["anna", "ben", "carl"])
    agreed = {("r1", "r1-1"): AGREED[("r1", "r1-1")]}
    for actor, reading in ((ANNA, CONTRADICTED), (BEN, PARTIAL), (CARL, CONTRADICTED)):
        label_all(lab, batch_id, actor, {**agreed, ("r1", "r1-2"): reading})
    adjudication.adjudicate(lab, RITA, batch_id, "r1", "r1-2", rule="majority", reason="two of three",
                            labels=["SUPPORTED"])  # the adjudicator's own reading does not count for a majority
    row = lab.one("SELECT labels, criticality FROM claims WHERE response_id = 'r1' AND claim_id = 'r1-2' "
                  "AND is_current")
    assert (list(row["labels"]), row["criticality"]) == (["CONTRADICTED"], 3)


def test_escalation_takes_the_documented_most_cautious_reading(lab):
    rows = [{"state": "labelled", "labels": ["SUPPORTED", "PARTIAL"], "criticality": 2, "category": "financial",
             "source_id": None, "span": None, "text": "t"},
            {"state": "labelled", "labels": ["OUTDATED"], "criticality": 3, "category": "legal", "source_id": "s1",
             "span": "q", "text": "t"},
            {"state": "replaced", "labels": None, "criticality": None, "category": None, "source_id": None,
             "span": None, "text": "t"}]
    assert adjudication.escalated_reading(rows) == {
        "keep": True, "labels": ["PARTIAL", "OUTDATED"], "criticality": 3, "category": "legal", "dimensions": None,
        "source_id": "s1", "span": "q", "text": "t"}
    assert adjudication.escalated_reading(rows[2:]) == {"keep": False}


def test_an_imported_feedback_label_is_kept_with_provenance_imported(lab):
    batch_id = batches.create_batch(lab, RITA, "hr", batches.Selection(use_cases=("hr",)), ["anna", "ben"])
    for actor in (ANNA, BEN):
        label_all(lab, batch_id, actor, {("r3", "r3-1"): {"labels": ["UNSUPPORTED"], "category": "eligibility",
                                                         "criticality": 2},
                                         ("r3", "r3-2"): {"labels": ["UNSUPPORTED"], "category": "eligibility",
                                                         "criticality": 2}})
    adjudication.apply_resolved(lab, RITA, batch_id)
    provenance = adjudication.label_provenance(lab, "r3")
    assert provenance[["claim_id", "label", "provenance"]].values.tolist() == [
        ["r3-1", "UNSUPPORTED", "annotated"], ["r3-2", "UNSUPPORTED", "annotated"],
        ["r3-2", "VALIDATED_NEGATIVE_FEEDBACK", "imported"]]


def test_a_response_revised_since_it_was_drawn_is_not_overwritten(lab, tmp_path):
    batch_id = batches.create_batch(lab, RITA, "pilot", batches.Selection(use_cases=("contracts",)), ["anna", "ben"])
    changed = [dict(RECORDS[1], answer="A new answer.")]
    import_path(lab, ADA, write_jsonl(tmp_path / "new.jsonl", changed))
    for actor in (ANNA, BEN):
        label_all(lab, batch_id, actor, {**AGREED, ("r1", "r1-2"): CONTRADICTED})
    report = adjudication.apply_resolved(lab, RITA, batch_id)
    assert (report.applied, report.stale) == (["r1"], ["r2"])
    assert lab.scalar("SELECT revision FROM responses WHERE response_id = 'r2' AND is_current") == 2
    assert lab.scalar("SELECT answer FROM responses WHERE response_id = 'r2' AND is_current") == "A new answer."


def test_claims_two_annotators_split_alike_become_claims_of_the_revision(lab):
    batch_id = batches.create_batch(lab, RITA, "split", batches.Selection(response_ids=("r1",)), ["anna", "ben"])
    for actor in (ANNA, BEN):
        workbench.split_claim(lab, actor, batch_id, "r1", "r1-2", ["The SLA includes support.", "Support is 24/7."])
        label_all(lab, batch_id, actor, {("r1", "r1-1"): AGREED[("r1", "r1-1")],
                                         ("r1", "r1-2~1"): {"labels": ["SUPPORTED"], "criticality": 3,
                                                            "category": "contractual"},
                                         ("r1", "r1-2~2"): CONTRADICTED})
    adjudication.apply_resolved(lab, RITA, batch_id)
    claims = lab.query("SELECT claim_id, text, labels FROM claims WHERE response_id = 'r1' AND is_current "
                       "ORDER BY claim_idx")
    assert [(c, t, list(labels)) for c, t, labels in claims] == [
        ("r1-1", "The contract expires on 31 December 2026.", ["SUPPORTED"]),
        ("r1-2~1", "The SLA includes support.", ["SUPPORTED"]), ("r1-2~2", "Support is 24/7.", ["CONTRADICTED"])]
