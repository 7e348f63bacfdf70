"""Labelling batches and the annotator's workbench: batches drawn by filters or a reproducible sample for two or
more annotators; annotators see the question, answer, claims, context and sources but never the current labels,
the score or another annotator's labels (enforced in the register); restructuring claims; progress."""

from __future__ import annotations

import json

import pytest

from register.errors import LabellingError, NotFound, PermissionDenied
from register.labels import batches, workbench
from tests.helpers.labelling import ANNA, BEN, CARL, RITA, VIEWER


def _batch(lab, **selection) -> int:
    return batches.create_batch(lab, RITA, "pilot", batches.Selection(**selection), ["anna", "ben"])


def test_a_batch_takes_the_responses_its_filters_choose_for_its_annotators(lab):
    batch_id = _batch(lab, use_cases=("contracts",))
    record = batches.batch(lab, batch_id)
    assert (record["annotators"], record["responses"], record["rubric_version"]) == (["anna", "ben"], 2, 1)
    assert json.loads(record["selection"])["use_cases"] == ["contracts"]
    drawn = lab.query("SELECT response_id, revision FROM label_batch_items WHERE batch_id = ? ORDER BY position",
                      [batch_id])
    assert drawn == [("r1", 1), ("r2", 1)]
    event = lab.one("SELECT actor_name, after FROM audit_events WHERE action = 'label.batch_create'")
    assert event["actor_name"] == "rita" and json.loads(event["after"])["responses"] == ["r1", "r2"]


def test_a_random_sample_is_reproducible_by_its_seed(lab):
    first = batches.preview_selection(lab, batches.Selection(sample=2, seed=7))["response_id"].tolist()
    assert len(first) == 2
    assert batches.preview_selection(lab, batches.Selection(sample=2, seed=7))["response_id"].tolist() == first
    seeds = {tuple(batches.preview_selection(lab, batches.Selection(sample=2, seed=s))["response_id"])
             for s in range(8)}
    assert len(seeds) > 1  # the seed changes the draw


@pytest.mark.parametrize(("annotators", "message"), [
    (["anna"], "at least two annotators"),
    (["anna", "anna"], "named twice"),
    (["anna", "vic"], "vic: role viewer may not label claims"),
    (["anna", "nobody"], "nobody: no such account"),
])
def test_a_batch_needs_two_or_more_distinct_annotators_who_may_label(lab, annotators, message):
    with pytest.raises(LabellingError, match=message):
        batches.create_batch(lab, RITA, "pilot", batches.Selection(), annotators)
    assert lab.scalar("SELECT count(*) FROM label_batches") == 0


def test_an_annotator_cannot_draw_a_batch(lab):
    with pytest.raises(PermissionDenied):
        batches.create_batch(lab, ANNA, "mine", batches.Selection(), ["anna", "ben"])


def test_the_workbench_is_blind_to_current_labels_scores_and_other_annotators(lab):
    batch_id = _batch(lab)
    workbench.save_annotation(lab, BEN, batch_id, "r1", "r1-2", labels=["OUTDATED"], criticality=3,
                              category="contractual", note="ben's private note")
    item = workbench.work_item(lab, ANNA, batch_id, "r1")
    assert item["question"] == "What does the contract say about support?"
    assert item["context"] == [{"id": "k1", "text": "Support: Mon-Fri 8:00-18:00.", "source_id": "src-contract"}]
    assert [(u["unit_id"], u["text"], u["state"]) for u in item["units"]] == [
        ("r1-1", "The contract expires on 31 December 2026.", "open"),
        ("r1-2", "The SLA includes 24/7 support.", "open")]
    text = json.dumps(item, default=str)
    for hidden in ("OUTDATED", "ben's private note", "SUPPORTED", "score", "band", "ben"):
        assert hidden not in text, hidden
    # ben sees his own labels, never anna's
    workbench.save_annotation(lab, ANNA, batch_id, "r1", "r1-2", labels=["PARTIAL"], criticality=2,
                              category="contractual")
    bens = {u["unit_id"]: u for u in workbench.work_item(lab, BEN, batch_id, "r1")["units"]}
    assert list(bens["r1-2"]["labels"]) == ["OUTDATED"] and "PARTIAL" not in json.dumps(bens, default=str)


@pytest.mark.parametrize("actor", [CARL, RITA, VIEWER])
def test_only_the_batchs_annotators_may_read_or_label_its_items(lab, actor):
    batch_id = _batch(lab)
    with pytest.raises(PermissionDenied):
        workbench.work_item(lab, actor, batch_id, "r1")
    with pytest.raises(PermissionDenied):
        workbench.save_annotation(lab, actor, batch_id, "r1", "r1-1", labels=["SUPPORTED"])
    assert lab.scalar("SELECT count(*) FROM audit_events WHERE action = 'denied' AND actor_name = ?",
                      [actor.name]) == 2
    assert lab.scalar("SELECT count(*) FROM annotations") == 0


def test_an_annotation_is_validated_like_an_imported_claim_and_names_the_claim(lab):
    batch_id = _batch(lab)
    with pytest.raises(LabellingError, match="claim r1-1: labels: VALIDATED_NEGATIVE_FEEDBACK cannot be chosen"):
        workbench.save_annotation(lab, ANNA, batch_id, "r1", "r1-1", labels=["VALIDATED_NEGATIVE_FEEDBACK"])
    with pytest.raises(LabellingError, match="claim r1-1: category: unknown category 'weather'"):
        workbench.save_annotation(lab, ANNA, batch_id, "r1", "r1-1", labels=["SUPPORTED"], category="weather")
    with pytest.raises(LabellingError, match="claim r1-1: labels: choose at least one label"):
        workbench.save_annotation(lab, ANNA, batch_id, "r1", "r1-1", labels=[])
    with pytest.raises(NotFound, match="r1-9"):
        workbench.save_annotation(lab, ANNA, batch_id, "r1", "r1-9", labels=["SUPPORTED"])
    workbench.save_annotation(lab, ANNA, batch_id, "r1", "r1-1", labels=["supported"], criticality=3,
                              category="Contractual", dimensions=["u"])
    row = lab.one("SELECT labels, criticality, category, dimensions FROM annotations")
    assert (list(row["labels"]), row["criticality"], row["category"], list(row["dimensions"])) == \
        (["SUPPORTED"], 3, "contractual", ["U"])


def test_split_merge_and_add_claims_for_one_annotator_and_progress(lab):
    batch_id = _batch(lab, use_cases=("contracts",))
    assert workbench.annotator_progress(lab, ANNA, batch_id) == {"labelled": 0, "units": 3, "responses_done": 0,
                                                                 "responses": 2}
    parts = workbench.split_claim(lab, ANNA, batch_id, "r1", "r1-2", ["The SLA includes support.", "Support is 24/7."])
    assert parts == ["r1-2~1", "r1-2~2"]
    added = workbench.add_claim(lab, ANNA, batch_id, "r2", "The certificate is current.")
    assert added == "r2~new1"
    units = [(u["unit_id"], u["state"], u["origin"]) for u in workbench.work_item(lab, ANNA, batch_id, "r1")["units"]]
    assert units == [("r1-1", "open", "claim"), ("r1-2", "replaced", "claim"), ("r1-2~1", "open", "split"),
                     ("r1-2~2", "open", "split")]
    # ben still sees the answer's own claims: another annotator's restructuring is theirs alone
    assert [u["unit_id"] for u in workbench.work_item(lab, BEN, batch_id, "r1")["units"]] == ["r1-1", "r1-2"]
    assert workbench.annotator_progress(lab, ANNA, batch_id)["units"] == 5  # r1-1, two parts, r2-1, the added one
    with pytest.raises(LabellingError, match="replaced"):
        workbench.save_annotation(lab, ANNA, batch_id, "r1", "r1-2", labels=["SUPPORTED"])
    merged = workbench.merge_claims(lab, BEN, batch_id, "r1", ["r1-2", "r1-1"], "It runs to 2026 with support.")
    assert merged == "r1-1+r1-2"
    with pytest.raises(LabellingError, match="at least two parts"):
        workbench.split_claim(lab, BEN, batch_id, "r2", "r2-1", ["only one"])
    for unit in ("r1-1", "r1-2~1", "r1-2~2"):
        workbench.save_annotation(lab, ANNA, batch_id, "r1", unit, labels=["SUPPORTED"])
    progress = workbench.annotator_progress(lab, ANNA, batch_id)
    assert (progress["labelled"], progress["responses_done"]) == (3, 1)
    # ben merged two claims into one
    assert workbench.batch_progress(lab, batch_id).values.tolist() == [["anna", 3, 5], ["ben", 0, 2]]


def test_the_grid_saves_every_valid_row_and_names_each_refused_one(lab):
    """The workbench grid: one audited annotation per saved row; a bad row is refused by claim and field and
    does not stop the others (nothing lost)."""
    batch_id = _batch(lab)
    refused = workbench.save_annotations(lab, ANNA, batch_id, "r1", [
        {"unit_id": "r1-1", "labels": ["CONTRADICTED"], "criticality": 3, "category": "contractual",
         "dimensions": None, "source_id": None, "span": "8:00-18:00", "note": "grid"},
        {"unit_id": "r1-2", "labels": ["SUPPORTED"], "criticality": None},
        {"unit_id": "r1-9", "labels": ["SUPPORTED"]}])
    assert set(refused) == {"r1-2", "r1-9"}
    assert "claim r1-2: criticality" in refused["r1-2"] and "r1-9" in refused["r1-9"]
    rows = lab.dicts("SELECT unit_id, labels, criticality, span, note FROM annotations WHERE annotator = 'anna'")
    assert [(r["unit_id"], list(r["labels"]), r["criticality"], r["span"], r["note"]) for r in rows] == [
        ("r1-1", ["CONTRADICTED"], 3, "8:00-18:00", "grid")]
    assert lab.scalar("SELECT count(*) FROM audit_events WHERE action = 'label.annotate'") == 1
    # the refused row, fixed, goes through on the next save
    assert workbench.save_annotations(lab, ANNA, batch_id, "r1", [
        {"unit_id": "r1-2", "labels": ["SUPPORTED"], "criticality": 1}]) == {}
    assert lab.scalar("SELECT count(*) FROM audit_events WHERE action = 'label.annotate'") == 2


@pytest.mark.parametrize("actor", [CARL, VIEWER])
def test_the_grid_refuses_as_a_whole_whoever_may_not_label_the_batch(lab, actor):
    batch_id = _batch(lab)
    with pytest.raises(PermissionDenied):
        workbench.save_annotations(lab, actor, batch_id, "r1", [{"unit_id": "r1-1", "labels": ["SUPPORTED"]}])
    assert lab.scalar("SELECT count(*) FROM annotations") == 0
