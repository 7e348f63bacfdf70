"""Aggregation models compared on known outcomes (HRI paper, Section VI: "Future work should compare this
hybrid approach with max-based aggregation, multiplicative penalties, and interaction-aware models").

Each model turns an answer's seven dimension scores s_k (and, for the paper's hybrid, the largest fired
safety floor phi) into a risk score; all are fitted on the training folds of a stratified k-fold split and
judged on the held-out fold:

* ``additive_floors``: the paper's hybrid ``max(sum_k w_k s_k, phi)``, weights fitted on the simplex
  (``hri_core.outcome_fit.fit_simplex_weights``), the floors the profile's;
* ``additive_floors_profile``: the same rule with the profile's own weights (nothing fitted but the
  calibration below): the status quo every other model is measured against;
* ``max``: ``max_k v_k s_k`` with ``v_k >= 0`` fitted by maximum likelihood of a smoothed maximum
  (``tau * log sum_k exp(v_k s_k / tau)``, ``tau = MAX_SMOOTHING``), so that the likelihood has a gradient;
  judged with the exact maximum;
* ``multiplicative``: the noisy-OR penalty ``1 - prod_k (1 - w_k s_k)`` with ``w_k`` in [0, 1] fitted
  jointly with its calibration (non-convex: a local optimum from the profile's weights);
* ``interaction``: a logistic model on the s_k and the 21 products s_j s_k, with an L2 penalty
  (``INTERACTION_RIDGE``, fixed beforehand, not tuned on the held-out folds).

A model's score becomes a probability of harm by a logistic calibration ``logistic(a + b * score)``,
``b >= 0``, fitted on the same training folds (the interaction model is one already); the probabilities
of all folds are pooled and scored by AUC, average precision and expected cost
(``hri_core.outcome_metrics``), with percentile intervals from a stratified bootstrap of the pooled
held-out rows, and the paired difference to the status quo (``*_difference_interval``).
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import combinations
from typing import Any

import numpy as np

from .errors import FieldProblem
from .logistic import fit_logistic, minimise_box, sigmoid
from .outcome_fit import (
    DEFAULT_FOLDS,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    RIDGE,
    FitError,
    OutcomeSet,
    bootstrap_metrics,
    check_fittable,
    fit_simplex_weights,
    metric_summary,
    resample_count,
)
from .outcome_metrics import DEFAULT_COSTS, Costs, stratified_folds
from .profile import ScoringProfile
from .vocabulary import DIMENSIONS

__all__ = ["MODELS", "REFERENCE_MODEL", "compare_aggregations", "interaction_features"]

MAX_SMOOTHING = 0.25  # tau of the smoothed maximum, in log-odds units
INTERACTION_RIDGE = 1e-3
MULTIPLICATIVE_CAP = 0.999  # w_k s_k < 1 keeps log(1 - w_k s_k) finite
MAX_ITERATIONS = 500
REFERENCE_MODEL = "additive_floors_profile"

FloatArray = np.ndarray
# a model: (training s, training floors, training outcomes, profile weights) -> scorer of new (s, floors)
Scorer = Callable[[FloatArray, FloatArray], FloatArray]
Model = Callable[[FloatArray, FloatArray, FloatArray, FloatArray], tuple[Scorer, bool]]


def _additive_floors(s: FloatArray, floor: FloatArray, y: FloatArray, base: FloatArray) -> tuple[Scorer, bool]:
    fit = fit_simplex_weights(s, y)
    total = float(fit.beta.sum())
    w = fit.beta / total if total > 1e-12 else base  # nothing to fit on this fold: the profile's weights stand
    return (lambda s2, f2: np.maximum(np.minimum(1.0, s2 @ w), f2)), fit.converged


def _additive_floors_profile(s: FloatArray, floor: FloatArray, y: FloatArray,
                             base: FloatArray) -> tuple[Scorer, bool]:
    return (lambda s2, f2: np.maximum(np.minimum(1.0, s2 @ base), f2)), True


def _max(s: FloatArray, floor: FloatArray, y: FloatArray, base: FloatArray) -> tuple[Scorer, bool]:
    n, k = s.shape
    tau = MAX_SMOOTHING

    def objective(x: FloatArray) -> tuple[float, FloatArray]:
        a, v = x[0], x[1:]
        terms = v * s / tau
        top = terms.max(axis=1, keepdims=True)
        share = np.exp(terms - top)
        total = share.sum(axis=1, keepdims=True)
        z = a + tau * (top[:, 0] + np.log(total[:, 0]))
        r = sigmoid(z) - y
        value = float(np.mean(np.logaddexp(0.0, z) - y * z)) + 0.5 * RIDGE * float(v @ v)
        gradient = np.r_[np.mean(r), (share / total * s).T @ r / n + RIDGE * v]
        return value, gradient

    start = np.r_[np.log(max(y.mean(), 1e-6) / max(1 - y.mean(), 1e-6)), 10.0 * base / base.max()]
    x, _, converged = minimise_box(objective, start, np.r_[-np.inf, np.zeros(k)], np.full(k + 1, np.inf),
                                   max_iter=MAX_ITERATIONS)
    v = x[1:]
    return (lambda s2, f2: (v * s2).max(axis=1)), converged


def _multiplicative(s: FloatArray, floor: FloatArray, y: FloatArray, base: FloatArray) -> tuple[Scorer, bool]:
    n, k = s.shape

    def objective(x: FloatArray) -> tuple[float, FloatArray]:
        a, b, w = x[0], x[1], x[2:]
        kept = 1.0 - w * s  # per dimension: the share of "no harm" it leaves
        prod = kept.prod(axis=1)
        penalty = 1.0 - prod
        z = a + b * penalty
        r = sigmoid(z) - y
        value = float(np.mean(np.logaddexp(0.0, z) - y * z)) + 0.5 * RIDGE * b * b
        d_w = (prod[:, None] / kept) * s  # d penalty / d w_k
        gradient = np.r_[np.mean(r), float(r @ penalty) / n + RIDGE * b, b * (d_w.T @ r) / n]
        return value, gradient

    w0 = np.clip(base / base.max(), 0.0, MULTIPLICATIVE_CAP)
    start = np.r_[np.log(max(y.mean(), 1e-6) / max(1 - y.mean(), 1e-6)), 5.0, w0]
    lower = np.r_[-np.inf, 0.0, np.zeros(k)]
    upper = np.r_[np.inf, np.inf, np.full(k, MULTIPLICATIVE_CAP)]
    x, _, converged = minimise_box(objective, start, lower, upper, max_iter=MAX_ITERATIONS)
    w = x[2:]
    return (lambda s2, f2: 1.0 - (1.0 - w * s2).prod(axis=1)), converged


def interaction_features(s: FloatArray) -> FloatArray:
    """The s_k and every product s_j s_k (j < k): 7 + 21 columns."""
    pairs = [s[:, j] * s[:, k] for j, k in combinations(range(s.shape[1]), 2)]
    return np.column_stack([s, *pairs])


def _interaction(s: FloatArray, floor: FloatArray, y: FloatArray, base: FloatArray) -> tuple[Scorer, bool]:
    fit = fit_logistic(interaction_features(s), y, ridge=INTERACTION_RIDGE)
    return (lambda s2, f2: fit.log_odds(interaction_features(s2))), fit.converged


MODELS: dict[str, tuple[Model, str]] = {
    "additive_floors": (_additive_floors, "max(sum_k w_k s_k, phi): the paper's hybrid, weights fitted"),
    REFERENCE_MODEL: (_additive_floors_profile, "max(sum_k w_k s_k, phi) with the profile's weights"),
    "max": (_max, "max_k v_k s_k, v fitted (smoothed maximum)"),
    "multiplicative": (_multiplicative, "1 - prod_k (1 - w_k s_k), w in [0, 1] fitted"),
    "interaction": (_interaction, "logistic on s_k and s_j*s_k, L2 penalty"),
}
_CALIBRATED = frozenset({"interaction"})  # its score is already a log-odds


def _held_out(data: OutcomeSet, base: FloatArray, fold_of: FloatArray, folds: int) -> tuple[dict[str, FloatArray],
                                                                                              dict[str, bool]]:
    y = data.outcome
    probability = {name: np.empty(data.n) for name in MODELS}
    converged = dict.fromkeys(MODELS, True)
    for fold in range(folds):
        test, train = fold_of == fold, fold_of != fold
        for name, (model, _) in MODELS.items():
            scorer, ok = model(data.s[train], data.floor[train], y[train], base)
            converged[name] = converged[name] and ok
            test_score = scorer(data.s[test], data.floor[test])
            if name in _CALIBRATED:
                probability[name][test] = sigmoid(test_score)
                continue
            train_score = scorer(data.s[train], data.floor[train])[:, None]
            calibration = fit_logistic(train_score, y[train], lower=np.zeros(1), ridge=RIDGE)
            converged[name] = converged[name] and calibration.converged
            probability[name][test] = sigmoid(calibration.log_odds(test_score[:, None]))
    return probability, converged


def compare_aggregations(data: OutcomeSet, profile: ScoringProfile, *, folds: int = DEFAULT_FOLDS,
                         resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                         costs: Costs = DEFAULT_COSTS) -> list[dict[str, Any]]:
    """One row per model (``MODELS``, in that order): held-out AUC, average precision, expected cost and
    their bootstrap intervals, and each one's paired difference to ``REFERENCE_MODEL``. Raises ``FitError``."""
    if isinstance(folds, bool) or not isinstance(folds, int) or folds < 2:
        raise FitError([FieldProblem("folds", f"must be a whole number >= 2, got {folds!r}")])
    if isinstance(resamples, bool) or not isinstance(resamples, int) or resamples < 0:
        raise FitError([FieldProblem("resamples", f"must be a whole number >= 0, got {resamples!r}")])
    check_fittable(data)
    y = data.outcome
    harmful = int(y.sum())
    folds_used = min(folds, harmful, data.n - harmful)
    rng = np.random.default_rng(seed)
    base = np.array([profile.weights[d] for d in DIMENSIONS])
    probability, converged = _held_out(data, base, stratified_folds(y, folds_used, rng), folds_used)
    used = resample_count(data.n * len(MODELS), resamples) if resamples else 0
    boot = bootstrap_metrics(y, probability, costs, used, rng, reference=REFERENCE_MODEL) if used else {}
    rows = []
    for name, (_, description) in MODELS.items():
        summary = metric_summary(y, probability[name], costs)
        reference = metric_summary(y, probability[REFERENCE_MODEL], costs)
        row: dict[str, Any] = {"model": name, "description": description}
        for metric, value in summary.items():
            row[metric] = value
            row[f"{metric}_interval"] = boot.get(name, {}).get(metric)
            row[f"{metric}_difference"] = value - reference[metric]
            row[f"{metric}_difference_interval"] = boot.get(name, {}).get(f"{metric}_difference")
        row.update(n=data.n, harmful=harmful, folds=folds_used, resamples=used, seed=seed, converged=converged[name],
                   reference=REFERENCE_MODEL, costs=costs.to_dict())
        rows.append(row)
    return rows
