"""Inter-annotator agreement over the register's annotations (the math is ``hri_core.agreement``).

"Inter-annotator agreement should be measured and reported" (HRI paper, section V). The ratings are
the annotators' labelled units (``annotations``; a unit one annotator replaced, or made alone, has no
rating from the others: missing data, which Krippendorff's alpha handles). Measured:

* labels: alpha (nominal) on each annotator's *worst* label, worst by the active profile's contributions
  (``severity_from_contributions``), and per label alpha of the present/absent judgement;
* criticality: alpha (ordinal);
* Cohen's kappa on the worst label for every pair of annotators, with its confusion matrix;
* per batch, label, category (the category most annotators gave the unit), use case and annotator pair;
* percentile bootstrap intervals (units resampled, seeded) of the overall alphas and of each pair's kappa.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

import pandas as pd

from hri_core.agreement import (
    Rating,
    bootstrap_alpha,
    bootstrap_kappa,
    krippendorff_alpha,
    multilabel_agreement,
    pairwise_agreement,
    severity_from_contributions,
)
from register.access.permissions import Permission, authorize
from register.db.sql import Params
from register.db.store import Actor, Store
from register.labels.workbench import ANNOTATOR_LABELS
from register.scoring.profiles import active_profile

__all__ = ["AgreementReport", "agreement_report", "annotation_ratings", "criticality_alpha", "labels_alpha",
           "severity_order"]

NO_CATEGORY = "(none)"


def annotation_ratings(store: Store, *, batch_id: int | None = None, rubric_version: int | None = None) -> pd.DataFrame:
    """One row per labelled (unit, annotator): unit, batch_id, response_id, unit_id, annotator, labels,
    criticality, category, use_case."""
    p = Params()
    where = ["a.state = 'labelled'"]
    if batch_id is not None:
        where.append(f"a.batch_id = {p(batch_id)}")
    if rubric_version is not None:
        where.append(f"b.rubric_version = {p(rubric_version)}")
    return store.frame(f"""
        SELECT a.batch_id || '/' || a.response_id || '/' || a.unit_id AS unit, a.batch_id, a.response_id, a.unit_id,
               a.annotator, a.labels, a.criticality, coalesce(a.category, '{NO_CATEGORY}') AS category, r.use_case
        FROM annotations a JOIN label_batches b ON b.batch_id = a.batch_id
        JOIN label_batch_items i ON i.batch_id = a.batch_id AND i.response_id = a.response_id
        JOIN responses r ON r.response_id = i.response_id AND r.revision = i.revision
        WHERE {' AND '.join(where)}
        ORDER BY a.batch_id, a.response_id, a.unit_id, a.annotator""", p.values)


def severity_order(store: Store) -> tuple[str, ...]:
    """Labels from most to least severe by the active profile's contributions."""
    contributions = active_profile(store).contributions
    return severity_from_contributions({label.value: value for label, value in contributions.items()})


def _worst(frame: pd.DataFrame, severity: tuple[str, ...]) -> list[Rating]:
    rank = {label: i for i, label in enumerate(severity)}
    return [Rating(u, a, min(labels, key=rank.__getitem__))
            for u, a, labels in zip(frame["unit"], frame["annotator"], frame["labels"], strict=True)]


def labels_alpha(frame: pd.DataFrame, severity: tuple[str, ...]) -> Any:
    """Alpha (nominal) on the worst label of ``annotation_ratings`` rows (an ``AlphaResult``)."""
    return krippendorff_alpha(_worst(frame, severity), "nominal")


def criticality_alpha(frame: pd.DataFrame) -> Any:
    """Alpha (ordinal) on the criticality of ``annotation_ratings`` rows (an ``AlphaResult``)."""
    return krippendorff_alpha([Rating(u, a, float(c)) for u, a, c in
                               zip(frame["unit"], frame["annotator"], frame["criticality"], strict=True)], "ordinal")


def _alpha_row(group: str, value: Any, frame: pd.DataFrame, severity: tuple[str, ...]) -> dict:
    labels = labels_alpha(frame, severity)
    crit = criticality_alpha(frame)
    return {"group": group, "value": str(value), "units": labels.units, "annotators": labels.raters,
            "pairable": labels.pairable, "labels_alpha": labels.alpha, "criticality_alpha": crit.alpha,
            "note": labels.note}


@dataclass(frozen=True)
class AgreementReport:
    """Agreement of the selected annotations (module docstring); frames are empty when nothing was annotated."""

    overall: dict
    groups: pd.DataFrame          # group (batch, category, use case), value, units, annotators, both alphas
    per_label: pd.DataFrame       # label, alpha (present/absent), pairable
    pairs: pd.DataFrame           # first, second, units, alpha, kappa, kappa_low, kappa_high
    confusion: dict[tuple[str, str], pd.DataFrame]


def agreement_report(store: Store, actor: Actor, *, batch_id: int | None = None, rubric_version: int | None = None,
                     samples: int = 1000, seed: int = 0) -> AgreementReport:
    """Agreement over the annotations of one batch (or all), optionally of one rubric version."""
    authorize(store, actor, Permission.READ, entity_type="label_batch", entity_id=batch_id)
    frame = annotation_ratings(store, batch_id=batch_id, rubric_version=rubric_version)
    severity = severity_order(store)
    if frame.empty:
        empty = pd.DataFrame()
        return AgreementReport({"units": 0, "annotators": 0, "ratings": 0}, empty, empty, empty, {})
    worst = _worst(frame, severity)
    crit = [Rating(u, a, float(c)) for u, a, c in zip(frame["unit"], frame["annotator"], frame["criticality"],
                                                       strict=True)]
    labels = krippendorff_alpha(worst, "nominal")
    criticality = krippendorff_alpha(crit, "ordinal")
    overall: dict[str, Any] = {
        "units": labels.units, "annotators": labels.raters, "ratings": len(frame), "pairable": labels.pairable,
        "labels": labels.to_dict(),
        "labels_ci": bootstrap_alpha(worst, "nominal", samples=samples, seed=seed).to_dict(),
        "criticality": criticality.to_dict(),
        "criticality_ci": bootstrap_alpha(crit, "ordinal", samples=samples, seed=seed).to_dict(),
        "kappa": None, "kappa_ci": None}
    annotators = sorted(frame["annotator"].unique())
    pairs_agreement = pairwise_agreement(worst, "nominal")
    if len(annotators) == 2:
        pair = (annotators[0], annotators[1])
        overall["kappa"] = pairs_agreement[pair].kappa.to_dict()
        overall["kappa_ci"] = bootstrap_kappa(worst, pair, samples=samples, seed=seed).to_dict()
    multi = multilabel_agreement(zip(frame["unit"], frame["annotator"], frame["labels"], strict=True), severity,
                                 labels=ANNOTATOR_LABELS)
    per_label = pd.DataFrame([{"label": label, "alpha": result.alpha, "pairable": result.pairable, "note": result.note}
                              for label, result in multi.per_label.items()])
    overall["worst_label"] = multi.worst.to_dict()
    # the category of a unit: the one most of its annotators gave (ties: alphabetical)
    unit_category = {unit: sorted(Counter(cats).items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
                     for unit, cats in frame.groupby("unit")["category"]}
    frame = frame.assign(unit_category=frame["unit"].map(unit_category))
    rows = []
    for group, column in (("batch", "batch_id"), ("category", "unit_category"), ("use case", "use_case")):
        for value, members in frame.groupby(column, dropna=False):
            rows.append(_alpha_row(group, "(none)" if pd.isna(value) else value, members, severity))
    pair_rows, confusion = [], {}
    for (first, second), result in pairs_agreement.items():
        ratings = [r for r in worst if r.rater in (first, second)]
        ci = bootstrap_kappa(ratings, (first, second), samples=samples, seed=seed)
        pair_rows.append({"first": first, "second": second, "units": result.kappa.units, "alpha": result.alpha.alpha,
                          "kappa": result.kappa.kappa, "kappa_low": ci.low, "kappa_high": ci.high})
        matrix = result.confusion
        confusion[(first, second)] = pd.DataFrame(matrix.counts, index=[f"{first}: {c}" for c in matrix.categories],
                                                  columns=[f"{second}: {c}" for c in matrix.categories])
    return AgreementReport(overall, pd.DataFrame(rows), per_label, pd.DataFrame(pair_rows), confusion)
