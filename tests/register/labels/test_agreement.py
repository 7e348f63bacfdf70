"""Agreement over the register's annotations equals hri_core's on the same ratings built by hand, per batch, label,
category, use case and pair; and checklist item 7 fails on drawn responses without resolved labels or with
agreement below the rubric's threshold, saying what it checked."""

from __future__ import annotations

import json

import pytest

from hri_core.agreement import Rating, cohen_kappa, krippendorff_alpha
from register.governance.checks import run_checks
from register.labels import adjudication, batches, rubrics
from register.labels.agreement import agreement_report
from tests.helpers.labelling import ADA, AGREED, ANNA, BEN, RITA, label_all

CONTRADICTED = {"labels": ["CONTRADICTED"], "criticality": 3, "category": "contractual"}
PARTIAL = {"labels": ["PARTIAL", "OUTDATED"], "criticality": 2, "category": "contractual"}


@pytest.fixture
def labelled(lab):
    batch_id = batches.create_batch(lab, RITA, "pilot", batches.Selection(use_cases=("contracts",)), ["anna", "ben"])
    for actor in (ANNA, BEN):
        label_all(lab, batch_id, actor, AGREED)
    label_all(lab, batch_id, ANNA, {("r1", "r1-2"): CONTRADICTED})
    label_all(lab, batch_id, BEN, {("r1", "r1-2"): PARTIAL})
    return lab, batch_id


def test_the_report_equals_hri_core_on_the_same_ratings(labelled):
    lab, batch_id = labelled
    report = agreement_report(lab, RITA, samples=200)
    units = [f"{batch_id}/r1/r1-1", f"{batch_id}/r2/r2-1", f"{batch_id}/r1/r1-2"]
    # worst labels by the paper's contributions: OUTDATED (0.75) is worse than PARTIAL (0.5)
    worst = [Rating(units[0], "anna", "SUPPORTED"), Rating(units[0], "ben", "SUPPORTED"),
             Rating(units[1], "anna", "UNSUPPORTED"), Rating(units[1], "ben", "UNSUPPORTED"),
             Rating(units[2], "anna", "CONTRADICTED"), Rating(units[2], "ben", "OUTDATED")]
    assert report.overall["labels"]["alpha"] == pytest.approx(krippendorff_alpha(worst).alpha, abs=1e-12)
    assert report.overall["kappa"]["kappa"] == pytest.approx(cohen_kappa(worst).kappa, abs=1e-12)
    crit = [Rating(u, a, float(c)) for u, a, c in ((units[0], "anna", 3), (units[0], "ben", 3), (units[1], "anna", 2),
                                                   (units[1], "ben", 2), (units[2], "anna", 3), (units[2], "ben", 2))]
    assert report.overall["criticality"]["alpha"] == pytest.approx(krippendorff_alpha(crit, "ordinal").alpha,
                                                                   abs=1e-12)
    ci = report.overall["labels_ci"]
    assert ci["low"] <= report.overall["labels"]["alpha"] <= ci["high"] and ci["samples"] == 200
    per_label = dict(zip(report.per_label["label"], report.per_label["alpha"], strict=True))
    outdated = [Rating(u, a, "present" if (u, a) == (units[2], "ben") else "absent") for u in units
                for a in ("anna", "ben")]
    assert per_label["OUTDATED"] == pytest.approx(krippendorff_alpha(outdated).alpha, abs=1e-12)
    assert "VALIDATED_NEGATIVE_FEEDBACK" not in per_label  # not an annotator's choice
    groups = {(g, v): a for g, v, a in report.groups[["group", "value", "labels_alpha"]].values.tolist()}
    assert set(groups) == {("batch", str(batch_id)), ("category", "contractual"), ("category", "security"),
                           ("use case", "contracts")}
    assert groups[("batch", str(batch_id))] == pytest.approx(report.overall["labels"]["alpha"])
    assert report.pairs[["first", "second", "units"]].values.tolist() == [["anna", "ben", 3]]
    matrix = report.confusion[("anna", "ben")]
    assert matrix.loc["anna: CONTRADICTED", "ben: OUTDATED"] == 1 and int(matrix.values.sum()) == 3


def test_an_empty_register_reports_nothing_to_measure(lab):
    report = agreement_report(lab, RITA)
    assert report.overall == {"units": 0, "annotators": 0, "ratings": 0} and report.pairs.empty


# the record's imported VALIDATED_NEGATIVE_FEEDBACK label, validated nowhere here
FEEDBACK_OUTSIDE = [("r3", "claim r3-2")]


def _check_7(lab) -> dict:
    """Item 7 with the rubric's findings in ``offending``; the findings of its feedback part (labels validated
    outside the register) are checked to be the fixture's one and moved to ``feedback``."""
    (check,) = [c for c in run_checks(lab)["checks"] if c["no"] == 7]
    feedback = [f for f in check["offending"] if f["reason"].startswith("VALIDATED_NEGATIVE_FEEDBACK")]
    assert [(f["entity_id"], f["label"]) for f in feedback] == FEEDBACK_OUTSIDE
    return {**check, "offending": [f for f in check["offending"] if f not in feedback], "feedback": feedback}


def test_check_7_names_drawn_responses_without_resolved_labels_until_they_are_adjudicated(labelled):
    lab, batch_id = labelled
    check = _check_7(lab)
    assert check["status"] == "fail" and check["offending"]
    assert [(f["entity_id"], f["reason"]) for f in check["offending"]][:2] == [
        ("r1", "2 of its scored claims have no labels annotated or adjudicated under rubric v1"),
        ("r2", "1 of its scored claims have no labels annotated or adjudicated under rubric v1")]
    # both alphas are below the rubric's threshold too
    assert [(f["entity_id"], f["label"]) for f in check["offending"]][2:] == [
        ("rubric v1", "labels (worst label, nominal)"), ("rubric v1", "criticality (ordinal)")]
    assert "agreement alpha 0.615 is below the rubric's threshold 0.667 (3 units, 2 annotators)" in \
        check["offending"][2]["reason"]
    assert "0 of 3 scored claims drawn for labelling" in check["note"]
    assert "1 scored response(s) never drawn into a labelling batch (imported labels)" in check["note"]
    assert "labels (worst label, nominal) alpha 0.615" in check["note"] and "threshold 0.667" in check["note"]
    adjudication.adjudicate(lab, RITA, batch_id, "r1", "r1-2", rule="expert", reason="contract", **CONTRADICTED)
    check = _check_7(lab)
    # every drawn claim is resolved now; the agreement is still below the rubric's 0.667
    assert [(f["entity_type"], f["entity_id"], f["label"]) for f in check["offending"]] == [
        ("rubric", "rubric v1", "labels (worst label, nominal)"), ("rubric", "rubric v1", "criticality (ordinal)")]
    assert "3 of 3 scored claims drawn for labelling" in check["note"]
    relaxed = json.loads(rubrics.DEFAULT_RUBRIC_PATH.read_text(encoding="utf-8"))
    relaxed["min_agreement_alpha"] = 0.5
    rubrics.publish_rubric(lab, ADA, relaxed, "pilot threshold")
    # a new rubric version: labels resolved under v1 are not resolved under v2, and v2 has no annotations yet
    check = _check_7(lab)
    assert {f["entity_id"] for f in check["offending"]} == {"r1", "r2"}
    assert "no annotations under rubric v2" in check["note"]


def test_check_7_finds_no_rubric_problem_when_nothing_was_drawn_and_says_the_labels_are_imported(lab):
    check = _check_7(lab)
    # it fails on the imported feedback label alone (its other part); the rubric's part finds nothing
    assert check["status"] == "fail" and check["offending"] == []
    assert "no scored response drawn into a labelling batch; 3 scored response(s) never drawn" in check["note"]
