"""AUC and average precision in numpy, held exact to scikit-learn's (the test oracle) on data with ties; the
solvers held to scipy's L-BFGS-B on the same objective."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn.metrics import average_precision_score, roc_auc_score

from hri_core.logistic import fit_logistic
from hri_core.outcome_metrics import (
    Costs,
    average_precision,
    expected_cost,
    ranks,
    roc_auc,
    stratified_folds,
    stratified_resample,
)


@pytest.mark.parametrize("seed", range(12))
def test_auc_and_ap_equal_sklearn_on_random_data_with_ties(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 400))
    y = rng.integers(0, 2, n)
    y[:2] = [0, 1]  # both classes present
    levels = int(rng.integers(1, 12))  # few distinct scores: many ties, across classes
    score = rng.integers(0, levels, n) / max(levels - 1, 1) + 0.3 * y * rng.integers(0, 2, n)
    assert roc_auc(y, score) == pytest.approx(roc_auc_score(y, score), abs=1e-12)
    assert average_precision(y, score) == pytest.approx(average_precision_score(y, score), abs=1e-12)


def test_all_tied_scores_give_the_chance_values_sklearn_gives():
    y = np.array([0, 1, 1, 0, 1])
    score = np.full(5, 0.4)
    assert roc_auc(y, score) == roc_auc_score(y, score) == 0.5
    assert average_precision(y, score) == pytest.approx(average_precision_score(y, score)) == pytest.approx(0.6)


def test_one_class_only_is_nan_not_a_crash():
    assert np.isnan(roc_auc(np.ones(4), np.arange(4.0)))
    assert np.isnan(average_precision(np.zeros(4), np.arange(4.0)))


def test_ranks_average_ties():
    assert ranks(np.array([3.0, 1.0, 3.0, 2.0])).tolist() == [3.5, 1.0, 3.5, 2.0]


def test_expected_cost_flags_above_the_cost_threshold():
    costs = Costs(miss=10, review=1)  # threshold 1/11
    y = np.array([1, 1, 0, 0])
    probability = np.array([0.5, 0.05, 0.5, 0.01])  # one harmful missed, one harmless reviewed
    assert expected_cost(y, probability, costs) == pytest.approx((10 + 1) / 4)


def test_folds_are_stratified_and_resamples_keep_both_classes():
    y = np.array([1] * 10 + [0] * 40)
    fold = stratified_folds(y, 5, np.random.default_rng(1))
    assert [int(y[fold == k].sum()) for k in range(5)] == [2] * 5
    assert [int((fold == k).sum()) for k in range(5)] == [10] * 5
    rows = stratified_resample(y, np.random.default_rng(2))
    assert int(y[rows].sum()) == 10 and len(rows) == 50


def _penalised_nll(params, X, y, ridge):
    z = params[0] + X @ params[1:]
    return float(np.mean(np.logaddexp(0, z) - y * z)) + 0.5 * ridge * float(params[1:] @ params[1:])


@pytest.mark.parametrize("seed", range(3))
def test_non_negative_logistic_fit_reaches_scipys_minimum(seed):
    rng = np.random.default_rng(seed)
    X = rng.random((300, 7)) * (rng.random((300, 7)) < 0.4)
    truth = np.array([3.0, 0.0, 2.0, -1.0, 0.5, 0.0, 4.0])  # a negative effect: its coefficient sits on 0
    y = (rng.random(300) < 1 / (1 + np.exp(-(-1.5 + X @ truth)))).astype(float)
    ridge = 1e-4
    fit = fit_logistic(X, y, lower=np.zeros(7), ridge=ridge)
    oracle = minimize(_penalised_nll, np.zeros(8), args=(X, y, ridge), method="L-BFGS-B",
                      bounds=[(None, None)] + [(0, None)] * 7, options={"ftol": 1e-15, "gtol": 1e-12})
    ours = _penalised_nll(np.r_[fit.intercept, fit.beta], X, y, ridge)
    assert fit.converged
    assert ours <= oracle.fun + 1e-10
    assert np.all(fit.beta >= 0)
    assert np.array_equal(fit.beta == 0, oracle.x[1:] == 0)  # the same coefficients held at the bound, exactly
    np.testing.assert_allclose(fit.beta, oracle.x[1:], atol=1e-3)
