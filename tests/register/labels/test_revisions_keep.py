"""Revisions keep what they do not decide (issue 33, item 4): applying agreed or adjudicated labels copies the
claim's source, span, ``contradicted_by``, entailment and feedback fields from the revision drawn (they used to
be emptied: stale-source findings vanished, 98 -> 96, with no person deciding it)."""

from __future__ import annotations

from register import SYSTEM
from register.ingest.importer import import_path
from register.labels import adjudication, batches
from tests.helpers.console_records import write_jsonl
from tests.helpers.labelling import ANNA, BEN, RECORDS, RITA, label_all

SOURCED = dict(RECORDS[0], claims=[
    dict(RECORDS[0]["claims"][0], source_id="src-contract", span="Support: Mon-Fri 8:00-18:00.",
         entailment={"target": "Neutral", "context": ["Neutral"]}),
    dict(RECORDS[0]["claims"][1], labels=["CONTRADICTED"], criticality=3, source_id="src-contract",
         span="Mon-Fri 8:00-18:00", contradicted_by="context", feedback_at="2026-10-01T00:00:00Z",
         feedback_count=2)])
KEPT = ("source_id", "span", "feedback_at", "feedback_count")


def _sourced(lab, tmp_path):
    import_path(lab, SYSTEM, write_jsonl(tmp_path / "sourced.jsonl", [SOURCED]))
    return lab.dicts(f"SELECT claim_id, {', '.join(KEPT)} FROM claims WHERE is_current AND response_id = 'r1' "
                     "ORDER BY claim_idx")


def _now(lab):
    return lab.dicts(f"SELECT claim_id, {', '.join(KEPT)} FROM claims WHERE is_current AND response_id = 'r1' "
                     "ORDER BY claim_idx")


def test_applying_agreed_labels_keeps_source_span_and_feedback(lab, tmp_path):
    before = _sourced(lab, tmp_path)
    batch_id = batches.create_batch(lab, RITA, "pilot", batches.Selection(use_cases=("contracts",)), ["anna", "ben"])
    readings = {("r1", "r1-1"): {"labels": ["SUPPORTED"], "criticality": 3},  # the form's Source left at (none)
                ("r1", "r1-2"): {"labels": ["CONTRADICTED"], "criticality": 3},
                ("r2", "r2-1"): {"labels": ["SUPPORTED"], "criticality": 1}}
    for actor in (ANNA, BEN):
        label_all(lab, batch_id, actor, readings)
    report = adjudication.apply_resolved(lab, RITA, batch_id)
    assert "r1" in report.applied
    assert _now(lab) == before
    raw = lab.one("SELECT raw FROM responses WHERE is_current AND response_id = 'r1'")["raw"]
    assert '"contradicted_by": "context"' in raw and '"entailment"' in raw and '"category": "contractual"' in raw


def test_an_adjudication_keeps_what_it_does_not_decide(lab, tmp_path):
    before = _sourced(lab, tmp_path)
    batch_id = batches.create_batch(lab, RITA, "pilot", batches.Selection(use_cases=("contracts",)), ["anna", "ben"])
    agreed = {("r1", "r1-1"): {"labels": ["SUPPORTED"], "criticality": 3},
              ("r2", "r2-1"): {"labels": ["SUPPORTED"], "criticality": 1}}
    for actor in (ANNA, BEN):
        label_all(lab, batch_id, actor, agreed)
    label_all(lab, batch_id, ANNA, {("r1", "r1-2"): {"labels": ["CONTRADICTED"], "criticality": 3}})
    label_all(lab, batch_id, BEN, {("r1", "r1-2"): {"labels": ["PARTIAL"], "criticality": 2}})
    adjudication.adjudicate(lab, RITA, batch_id, "r1", "r1-2", rule="expert", reason="the contract says Mon-Fri",
                            labels=["CONTRADICTED"], criticality=3)
    assert _now(lab) == before
    assert lab.scalar("SELECT labels FROM claims WHERE is_current AND claim_id = 'r1-2'") == ["CONTRADICTED"]
