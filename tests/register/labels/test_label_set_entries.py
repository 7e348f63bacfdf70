"""Label sets that make sense at the labelling entries (issue 33, item 5): the workbench and its grid refuse a
combination the vocabulary refuses, naming the claim, the field and the rule; the readings people agree on or
an escalation merges become an allowed set, never one the next revision would be refused for."""

from __future__ import annotations

import pytest

from register.errors import LabellingError
from register.labels import adjudication, batches, workbench
from tests.helpers.labelling import ANNA, BEN, RITA, label_all


def _batch(lab, use_case: str = "contracts") -> int:
    return batches.create_batch(lab, RITA, "pilot", batches.Selection(use_cases=(use_case,)), ["anna", "ben"])


def test_the_workbench_refuses_supported_with_another_label_naming_claim_field_and_rule(lab):
    batch_id = _batch(lab)
    with pytest.raises(LabellingError) as caught:
        workbench.save_annotation(lab, ANNA, batch_id, "r1", "r1-1", labels=["SUPPORTED", "UNSUPPORTED"])
    assert str(caught.value) == "claim r1-1: labels: SUPPORTED stands alone; got SUPPORTED, UNSUPPORTED"
    assert lab.scalar("SELECT count(*) FROM annotations WHERE state = 'labelled'") == 0


def test_the_grid_refuses_the_contradictory_row_and_saves_the_others(lab):
    batch_id = _batch(lab)
    refused = workbench.save_annotations(lab, ANNA, batch_id, "r1", [
        {"unit_id": "r1-1", "labels": ["PARTIAL", "UNSUPPORTED"], "criticality": 3},
        {"unit_id": "r1-2", "labels": ["OUTDATED", "CONTRADICTED"], "criticality": 2}])
    assert list(refused) == ["r1-1"]
    assert refused["r1-1"].startswith("claim r1-1: labels: PARTIAL and UNSUPPORTED exclude each other")
    saved = lab.query("SELECT unit_id, labels FROM annotations WHERE annotator = 'anna' AND state = 'labelled'")
    assert [(unit, list(labels)) for unit, labels in saved] == [("r1-2", ["OUTDATED", "CONTRADICTED"])]


def test_escalation_merges_readings_into_an_allowed_set():
    def row(*labels: str) -> dict:
        return {"state": "labelled", "labels": list(labels), "criticality": 2, "category": None, "source_id": None,
                "span": None, "text": "t"}

    assert adjudication.escalated_reading([row("PARTIAL"), row("UNSUPPORTED")])["labels"] == ["UNSUPPORTED"]
    assert adjudication.escalated_reading([row("SUPPORTED"), row("PARTIAL", "ACCESS_GAP"),
                                           row("UNSUPPORTED")])["labels"] == ["ACCESS_GAP", "UNSUPPORTED"]


def test_an_escalated_disagreement_becomes_a_revision_not_a_quarantined_record(lab):
    batch_id = _batch(lab)
    label_all(lab, batch_id, ANNA, {("r1", "r1-1"): {"labels": ["SUPPORTED"], "criticality": 3},
                                    ("r1", "r1-2"): {"labels": ["PARTIAL"], "criticality": 2},
                                    ("r2", "r2-1"): {"labels": ["SUPPORTED"]}})
    label_all(lab, batch_id, BEN, {("r1", "r1-1"): {"labels": ["SUPPORTED"], "criticality": 3},
                                   ("r1", "r1-2"): {"labels": ["UNSUPPORTED"], "criticality": 2},
                                   ("r2", "r2-1"): {"labels": ["SUPPORTED"]}})
    report = adjudication.adjudicate(lab, RITA, batch_id, "r1", "r1-2", rule="escalation", reason="the cautious one")
    assert "r1" in report.applied
    labels = lab.scalar("SELECT labels FROM claims WHERE is_current AND claim_id = 'r1-2'")
    assert list(labels) == ["UNSUPPORTED"]
    assert lab.scalar("SELECT count(*) FROM quarantine") == 0


def test_people_who_call_a_claim_with_validated_feedback_supported_keep_the_feedback_label_alone(lab):
    batch_id = _batch(lab, "hr")
    for actor in (ANNA, BEN):
        label_all(lab, batch_id, actor, {("r3", "r3-1"): {"labels": ["UNSUPPORTED"]},
                                         ("r3", "r3-2"): {"labels": ["SUPPORTED"]}})
    report = adjudication.apply_resolved(lab, RITA, batch_id)
    assert report.applied == ["r3"] and report.new_revisions + report.unchanged == 1
    labels = lab.scalar("SELECT labels FROM claims WHERE is_current AND claim_id = 'r3-2'")
    assert list(labels) == ["VALIDATED_NEGATIVE_FEEDBACK"]
    assert lab.scalar("SELECT count(*) FROM quarantine") == 0
