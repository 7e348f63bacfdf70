"""Resolved labels that would lower an answer's decision wait for a second person (issue 33, item 3), and their
provenance (who agreed, which adjudication, under which rubric) is recorded when that person approves them, with
the revision the approval stores (migration 037, ``register.ingest.approvals``)."""

from __future__ import annotations

from register.ingest.approvals import approve_change
from register.ingest.pending import list_pending
from register.labels import adjudication, batches
from tests.helpers.labelling import ADA, AGREED, ANNA, BEN, RITA, label_all

CONTRADICTED = {"labels": ["CONTRADICTED"], "criticality": 3, "category": "contractual"}
SUPPORTED = {"labels": ["SUPPORTED"], "criticality": 1, "category": "contractual"}


def _batch(lab, title: str, readings: dict) -> int:
    batch_id = batches.create_batch(lab, RITA, title, batches.Selection(use_cases=("contracts",)), ["anna", "ben"])
    for actor in (ANNA, BEN):
        label_all(lab, batch_id, actor, readings)
    return batch_id


def test_held_labels_get_their_provenance_when_approved(lab):
    # first the annotators agree r1-2 is CONTRADICTED: a revision that raises the decision lands at once
    first = _batch(lab, "first", {**AGREED, ("r1", "r1-2"): CONTRADICTED})
    assert adjudication.apply_resolved(lab, RITA, first).applied == ["r1", "r2"]
    high = lab.scalar("SELECT decision FROM scores WHERE is_current AND response_id = 'r1'")
    assert high in ("review", "block")
    # then a second batch agrees it is SUPPORTED after all: that would lower the decision, so it is held
    second = _batch(lab, "second", {**AGREED, ("r1", "r1-2"): SUPPORTED})
    report = adjudication.apply_resolved(lab, RITA, second)
    assert report.held == ["r1"] and "r1" not in report.applied
    revision = lab.scalar("SELECT revision FROM responses WHERE is_current AND response_id = 'r1'")
    assert set(adjudication.label_provenance(lab, "r1")["batch_id"]) == {first}  # still the first batch's labels
    (change,) = list_pending(lab)
    applied = approve_change(lab, ADA, change["change_id"], "agreed with both annotators")
    assert applied == revision + 1
    provenance = adjudication.label_provenance(lab, "r1", applied)
    assert provenance[["claim_id", "label", "provenance"]].values.tolist() == [
        ["r1-1", "SUPPORTED", "annotated"], ["r1-2", "SUPPORTED", "annotated"]]
    assert set(provenance["batch_id"]) == {second}
