"""Weights fitted from outcomes (HRI paper, Section IX: weights elicited first, then "recalibrated empirically").

Input: answers with a known outcome (1 = the answer turned out harmful, 0 = it did not), each an
interchange response (as ``python -m hri_core score`` reads it) plus ``"outcome": 0 | 1``. Each is scored
with the profile (``hri_core.scoring.score_response``: the seven dimension scores s_k, the additive score,
the fired floors), then the seven weights are fitted by maximum likelihood of

    outcome ~ logistic(a + b * HRI_add(w)),    HRI_add(w) = sum_k w_k s_k,   w on the simplex, b >= 0

Reparameterised as theta_k = b * w_k >= 0 this is a logistic regression with non-negative coefficients,
a convex problem solved to a tolerance (``hri_core.logistic.fit_logistic``, projected Newton); then
``b = sum_k theta_k`` and ``w = theta / b``. A small ridge on theta (``RIDGE``) keeps the fit finite when
the outcomes are perfectly separated; it is negligible against the likelihood otherwise. The constraint
b >= 0 says a higher score may never mean less risk. A weight is identified only through its dimension's
variation: a dimension that is 0 on every answer gets weight 0, and its interval says so.

Evidence reported with the weights (``WeightFit.to_dict``):

* per-weight percentile intervals from a stratified bootstrap (``resamples`` fits on resampled rows,
  each warm-started from the full fit; capped at ``MAX_BOOTSTRAP_WORK`` rows x resamples);
* stratified k-fold cross-validation: in each fold the weights are fitted on the other folds, the
  profile's weights get their own a and b there, and both predict the held-out fold. AUC, average
  precision and expected cost (``hri_core.outcome_metrics``) of the pooled held-out predictions, with
  bootstrap intervals, for the fitted weights, the profile's (the baseline) and their difference.

Everything is seeded (``numpy.random.default_rng(seed)``): the same data and seed give the same numbers.
Degenerate data (too few answers, one outcome only, no variation in the scores) raises ``FitError``
naming the problem; records that cannot be read are quarantined by the caller (``read_outcomes``), never
dropped silently.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

import numpy as np

from .errors import FieldProblem, HRIError, RecordError
from .fingerprint import fingerprint
from .logistic import LogisticFit, fit_logistic, sigmoid
from .models import parse_response
from .outcome_metrics import (
    DEFAULT_COSTS,
    Costs,
    average_precision,
    expected_cost,
    roc_auc,
    stratified_folds,
    stratified_resample,
)
from .profile import ScoringProfile
from .scoring import score_response
from .vocabulary import DIMENSIONS

__all__ = ["DEFAULT_FOLDS", "DEFAULT_RESAMPLES", "DEFAULT_SEED", "FitError", "MIN_OUTCOMES", "OutcomeSet",
           "Quarantined", "WeightFit", "cross_validate", "fit_simplex_weights", "fit_weights", "metric_summary",
           "outcome_set", "read_outcomes"]

MIN_OUTCOMES = 20  # fewer answers than this cannot carry seven weights, let alone five folds
MIN_PER_CLASS = 2  # each outcome at least twice: cross-validation needs it on both sides of a split
DEFAULT_FOLDS = 5
DEFAULT_RESAMPLES = 200
DEFAULT_SEED = 0
MAX_RESAMPLES = 2000
MAX_BOOTSTRAP_WORK = 20_000_000  # rows x resamples: the bootstrap is cut to this much work, and says so
RIDGE = 1e-4
LEVEL = 0.95
METHOD = ("maximum likelihood: outcome ~ logistic(a + b * sum_k w_k s_k), w on the simplex, b >= 0 "
          f"(theta = b*w >= 0, projected Newton, ridge {RIDGE:g} on theta); stratified bootstrap percentile "
          "intervals; stratified k-fold cross-validation")


class FitError(HRIError):
    """The outcomes cannot support a fit (too few, one outcome only, no variation in the scores)."""

    title = "Cannot fit weights from these outcomes"


@dataclass(frozen=True)
class Quarantined:
    """A record left out of the fit: where it was, which field, why."""

    where: str
    field: str
    message: str
    response_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"where": self.where, "field": self.field, "message": self.message, "response_id": self.response_id}


@dataclass(frozen=True)
class OutcomeSet:
    """The scored answers: dimension scores ``s`` (n x 7), fired-floor value ``floor`` (the largest phi, 0 when
    none fired), ``outcome`` (0/1), their ids, the records' fingerprint, and what was quarantined."""

    response_ids: tuple[str, ...]
    s: np.ndarray
    floor: np.ndarray
    outcome: np.ndarray
    data_hash: str
    quarantined: tuple[Quarantined, ...] = ()

    @property
    def n(self) -> int:
        """Number of answers that go into the fit."""
        return len(self.response_ids)


def _outcome_value(record: dict[str, Any]) -> int:
    if "outcome" not in record:
        raise RecordError([FieldProblem("outcome", "Field required (0 = not harmful, 1 = harmful)")])
    value = record["outcome"]
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int) and value in (0, 1):
        return value
    raise RecordError([FieldProblem("outcome", f"must be 0 (not harmful) or 1 (harmful), got {value!r}")])


def read_outcomes(records: Iterable[tuple[str, dict[str, Any] | HRIError]], profile: ScoringProfile,
                  as_of: datetime) -> OutcomeSet:
    """Score every readable record at ``as_of``; quarantine each one that is not (naming where and which field).

    ``records`` yields ``(where, record)`` as the CLI's readers do (``where`` e.g. ``"line 3"``), a record
    being the decoded object or the error that kept the line from decoding.
    """
    ids: list[str] = []
    rows: list[list[float]] = []
    floors: list[float] = []
    outcomes: list[int] = []
    kept: list[Any] = []
    quarantined: list[Quarantined] = []
    for where, record in records:
        rid = record.get("response_id") if isinstance(record, dict) else None
        rid = rid if isinstance(rid, str) else None
        try:
            if isinstance(record, HRIError):
                raise record
            outcome = _outcome_value(record)
            response = parse_response(record)
        except HRIError as error:
            quarantined += [Quarantined(where, p.loc or "(record)", p.message, rid) for p in error.problems]
            continue
        result = score_response(response, profile, as_of)
        ids.append(response.response_id)
        rows.append([result.dimensions[d] for d in DIMENSIONS])
        floors.append(max((f.value for f in result.floors), default=0.0))
        outcomes.append(outcome)
        kept.append(record)
    scored = outcome_set(ids, np.array(rows, dtype=float).reshape(-1, len(DIMENSIONS)), np.array(floors, dtype=float),
                         np.array(outcomes, dtype=float), fingerprint(kept, other_types="str"))
    return replace(scored, quarantined=tuple(quarantined))


def outcome_set(response_ids: Iterable[str], s: np.ndarray, floor: np.ndarray, outcome: np.ndarray,
                data_hash: str) -> OutcomeSet:
    """An ``OutcomeSet`` from dimension scores already computed (the register's stored score rows): ``s`` n x 7 in
    the order of ``DIMENSIONS``, ``floor`` the largest fired floor (0 when none), ``outcome`` 0/1. The fit reads
    nothing else, so a file scored by ``read_outcomes`` and a register's rows go through the same code. Raises
    ``FitError`` naming the field when the arrays do not fit together or hold values a score cannot have."""
    ids = tuple(response_ids)
    s = np.asarray(s, dtype=float).reshape(-1, len(DIMENSIONS)) if np.size(s) else np.empty((0, len(DIMENSIONS)))
    floor, outcome = np.asarray(floor, dtype=float).ravel(), np.asarray(outcome, dtype=float).ravel()
    problems: list[FieldProblem] = []
    if not len(ids) == len(s) == len(floor) == len(outcome):
        problems.append(FieldProblem("s", f"{len(ids)} ids, {len(s)} score rows, {len(floor)} floors and "
                                          f"{len(outcome)} outcomes: one of each per answer"))
    elif not (np.all(np.isfinite(s)) and np.all((s >= 0) & (s <= 1))):
        problems.append(FieldProblem("s", "every dimension score must be a number from 0 to 1"))
    elif not (np.all(np.isfinite(floor)) and np.all((floor >= 0) & (floor <= 1))):
        problems.append(FieldProblem("floor", "every floor value must be a number from 0 to 1"))
    elif not np.all((outcome == 0) | (outcome == 1)):
        problems.append(FieldProblem("outcome", "every outcome must be 0 (not harmful) or 1 (harmful)"))
    if problems:
        raise FitError(problems)
    return OutcomeSet(response_ids=ids, s=s, floor=floor, outcome=outcome, data_hash=data_hash)


def check_fittable(data: OutcomeSet) -> None:
    """Raise ``FitError`` when the outcomes cannot carry a fit; say which condition failed."""
    problems: list[FieldProblem] = []
    harmful = int(data.outcome.sum())
    if data.n < MIN_OUTCOMES:
        problems.append(FieldProblem("outcomes", f"{data.n} answer(s) with a valid outcome; the fit needs at "
                                                 f"least {MIN_OUTCOMES}"))
    elif min(harmful, data.n - harmful) < MIN_PER_CLASS:
        which = "harmful (outcome 1)" if harmful < MIN_PER_CLASS else "harmless (outcome 0)"
        problems.append(FieldProblem("outcome", f"{min(harmful, data.n - harmful)} {which} answer(s) among "
                                                f"{data.n}; the fit needs at least {MIN_PER_CLASS} of each outcome"))
    elif bool(np.all(data.s == data.s[0])):
        problems.append(FieldProblem("dimensions", f"all {data.n} answers have the same dimension scores: nothing "
                                                   "tells the dimensions apart"))
    if problems:
        raise FitError(problems)


def fit_simplex_weights(s: np.ndarray, y: np.ndarray, *, start: LogisticFit | None = None) -> LogisticFit:
    """theta >= 0 of ``y ~ logistic(a + s theta)`` (module docstring); the weights are ``theta / sum(theta)``."""
    return fit_logistic(s, y, lower=np.zeros(s.shape[1]), ridge=RIDGE, start=start)


def _weights(theta: np.ndarray) -> np.ndarray | None:
    total = float(theta.sum())
    return theta / total if total > 1e-12 else None


def metric_summary(y: np.ndarray, probability: np.ndarray, costs: Costs) -> dict[str, float]:
    """AUC, average precision and expected cost of one set of predictions."""
    return {"auc": roc_auc(y, probability), "average_precision": average_precision(y, probability),
            "expected_cost": expected_cost(y, probability, costs)}


def _interval(values: np.ndarray) -> list[float] | None:
    finite = values[np.isfinite(values)]
    if not len(finite):
        return None
    tail = (1 - LEVEL) / 2 * 100
    return [float(np.percentile(finite, tail)), float(np.percentile(finite, 100 - tail))]


def resample_count(n: int, requested: int) -> int:
    """How many bootstrap resamples fit in ``MAX_BOOTSTRAP_WORK`` for ``n`` rows (at least 20, at most asked)."""
    return min(requested, max(20, MAX_BOOTSTRAP_WORK // max(n, 1)))


def bootstrap_metrics(y: np.ndarray, predictions: dict[str, np.ndarray], costs: Costs, resamples: int,
                      rng: np.random.Generator, *, reference: str | None = None) -> dict[str, dict[str, Any]]:
    """Percentile intervals of each metric per named prediction from stratified resamples of the held-out
    rows; with ``reference``, also of each other prediction's metric minus the reference's on the same
    resampled rows (paired), under ``<metric>_difference``."""
    draws: dict[str, dict[str, list[float]]] = {name: {} for name in predictions}
    for _ in range(resamples):
        rows = stratified_resample(y, rng)
        summaries = {name: metric_summary(y[rows], p[rows], costs) for name, p in predictions.items()}
        for name, summary in summaries.items():
            for metric, value in summary.items():
                draws[name].setdefault(metric, []).append(value)
                if reference is not None and name != reference:
                    draws[name].setdefault(f"{metric}_difference", []).append(value - summaries[reference][metric])
    return {name: {metric: _interval(np.array(values)) for metric, values in metrics.items()}
            for name, metrics in draws.items()}


@dataclass
class CrossValidation:
    """Pooled held-out predictions of the fitted weights and of the baseline weights."""

    folds: int
    fitted: np.ndarray
    baseline: np.ndarray
    fold_weights: list[list[float] | None] = field(default_factory=list)


def cross_validate(data: OutcomeSet, baseline_weights: np.ndarray, folds: int,
                   rng: np.random.Generator) -> CrossValidation:
    """Stratified k-fold: per fold, fit the simplex weights on the rest; both weight vectors get their a and
    b >= 0 there; each predicts the held-out fold's probability of harm."""
    y = data.outcome
    fold_of = stratified_folds(y, folds, rng)
    fitted = np.empty(data.n)
    baseline = np.empty(data.n)
    fold_weights: list[list[float] | None] = []
    base_score = (data.s @ baseline_weights)[:, None]
    for fold in range(folds):
        test, train = fold_of == fold, fold_of != fold
        fit = fit_simplex_weights(data.s[train], y[train])
        fitted[test] = sigmoid(fit.log_odds(data.s[test]))
        w = _weights(fit.beta)
        fold_weights.append(None if w is None else [float(v) for v in w])
        base_fit = fit_logistic(base_score[train], y[train], lower=np.zeros(1), ridge=RIDGE)
        baseline[test] = sigmoid(base_fit.log_odds(base_score[test]))
    return CrossValidation(folds=folds, fitted=fitted, baseline=baseline, fold_weights=fold_weights)


@dataclass(frozen=True)
class WeightFit:
    """The fitted weights with their evidence (module docstring); ``to_dict`` is the command's JSON."""

    weights: dict[str, float]
    intervals: dict[str, list[float] | None]
    intercept: float
    slope: float
    converged: bool
    iterations: int
    log_likelihood: float
    n: int
    harmful: int
    resamples: int
    resamples_requested: int
    resamples_undetermined: int
    cv: dict[str, Any]
    baseline: dict[str, Any]
    costs: Costs
    seed: int
    data_hash: str
    quarantined: tuple[Quarantined, ...]
    as_of: datetime

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (no NaN: an undefined metric is null)."""
        output: dict[str, Any] = _json_safe({
            "weights": self.weights, "intervals": self.intervals, "level": LEVEL,
            "intercept": self.intercept, "slope": self.slope, "converged": self.converged,
            "iterations": self.iterations, "log_likelihood": self.log_likelihood,
            "n": self.n, "harmful": self.harmful, "harmless": self.n - self.harmful,
            "method": METHOD,
            "bootstrap": {"resamples": self.resamples, "requested": self.resamples_requested,
                          "undetermined": self.resamples_undetermined, "seed": self.seed},
            "cv": self.cv, "baseline": self.baseline, "costs": self.costs.to_dict(),
            "data": {"sha256": self.data_hash, "n": self.n, "quarantined": len(self.quarantined)},
            "quarantined": [q.to_dict() for q in self.quarantined],
            "as_of": self.as_of.isoformat(), "seed": self.seed,
        })
        return output


def _json_safe(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    return value


def _by_dimension(values: Iterable[Any]) -> dict[str, Any]:
    return {d.value: v for d, v in zip(DIMENSIONS, values, strict=True)}


def fit_weights(data: OutcomeSet, profile: ScoringProfile, as_of: datetime, *, folds: int = DEFAULT_FOLDS,
                resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                costs: Costs = DEFAULT_COSTS) -> WeightFit:
    """Fit the seven weights to ``data`` and gather the evidence (module docstring). Raises ``FitError``."""
    if isinstance(folds, bool) or not isinstance(folds, int) or folds < 2:
        raise FitError([FieldProblem("folds", f"must be a whole number >= 2, got {folds!r}")])
    if isinstance(resamples, bool) or not isinstance(resamples, int) or not 0 <= resamples <= MAX_RESAMPLES:
        raise FitError([FieldProblem("resamples", f"must be a whole number from 0 to {MAX_RESAMPLES}, "
                                                  f"got {resamples!r}")])
    check_fittable(data)
    y = data.outcome
    harmful = int(y.sum())
    full = fit_simplex_weights(data.s, y)
    weights = _weights(full.beta)
    if weights is None:
        raise FitError([FieldProblem("outcome", "harm does not rise with any dimension score on these answers "
                                                "(every fitted weight is 0): the data cannot set the weights")])
    rng = np.random.default_rng(seed)
    used = resample_count(data.n, resamples) if resamples else 0
    draws, undetermined = [], 0
    for _ in range(used):
        rows = stratified_resample(y, rng)
        w = _weights(fit_simplex_weights(data.s[rows], y[rows], start=full).beta)
        if w is None:
            undetermined += 1
        else:
            draws.append(w)
    matrix = np.array(draws).reshape(-1, len(DIMENSIONS))
    intervals = _by_dimension(_interval(matrix[:, k]) if len(matrix) else None for k in range(len(DIMENSIONS)))
    folds_used = min(folds, harmful, data.n - harmful)
    base_w = np.array([profile.weights[d] for d in DIMENSIONS])
    cv = cross_validate(data, base_w, folds_used, rng)
    summaries = {"fitted": metric_summary(y, cv.fitted, costs), "baseline": metric_summary(y, cv.baseline, costs)}
    summaries["difference"] = {m: summaries["fitted"][m] - summaries["baseline"][m] for m in summaries["fitted"]}
    boot = bootstrap_metrics(y, {"fitted": cv.fitted, "baseline": cv.baseline}, costs, used, rng,
                             reference="baseline") if used else {}
    boot["difference"] = {m: boot.get("fitted", {}).get(f"{m}_difference") for m in summaries["fitted"]}
    cv_out: dict[str, Any] = {"folds": folds_used, "folds_requested": folds, "pooled": "held-out predictions"}
    for name, summary in summaries.items():
        cv_out[name] = {**summary, **{f"{m}_interval": boot.get(name, {}).get(m) for m in summary}}
    cv_out["fold_weights"] = [None if w is None else _by_dimension(w) for w in cv.fold_weights]
    return WeightFit(
        weights=_by_dimension(float(v) for v in weights), intervals=intervals,
        intercept=full.intercept, slope=float(full.beta.sum()), converged=full.converged,
        iterations=full.iterations, log_likelihood=full.log_likelihood, n=data.n, harmful=harmful,
        resamples=used, resamples_requested=resamples, resamples_undetermined=undetermined, cv=cv_out,
        baseline={"profile": {"name": profile.name, "version": profile.version},
                  "weights": _by_dimension(float(v) for v in base_w)},
        costs=costs, seed=seed, data_hash=data.data_hash, quarantined=data.quarantined, as_of=as_of)
