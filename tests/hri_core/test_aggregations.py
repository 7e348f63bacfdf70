"""Aggregation models compared on held-out folds: the list's shape, determinism, and a model that knows the
truth's form beating the paper's additive rule on outcomes drawn from that form."""

from __future__ import annotations

import dataclasses
from functools import cache

import numpy as np
import pytest

from hri_core.aggregations import MODELS, REFERENCE_MODEL, compare_aggregations, interaction_features
from hri_core.outcome_fit import read_outcomes
from hri_core.profile import default_profile
from hri_core.synthetic_outcomes import SYNTHETIC_AS_OF, outcome_records

TRUE_WEIGHTS = {"F": 0.35, "C": 0.05, "U": 0.10, "O": 0.25, "S": 0.05, "P": 0.15, "H": 0.05}


@cache
def data(n: int = 1200, seed: int = 13):
    records = outcome_records(n, TRUE_WEIGHTS, seed=seed)
    return read_outcomes(((f"line {i}", r) for i, r in enumerate(records, 1)), default_profile(), SYNTHETIC_AS_OF)


def compare(outcomes, **options):
    return compare_aggregations(outcomes, default_profile(), resamples=options.pop("resamples", 30), **options)


def test_one_row_per_model_with_metrics_and_intervals():
    rows = compare(data())
    assert [row["model"] for row in rows] == list(MODELS)
    for row in rows:
        for metric in ("auc", "average_precision", "expected_cost"):
            low, high = row[f"{metric}_interval"]
            assert low <= high and np.isfinite(row[metric])
        assert row["n"] == data().n and row["folds"] == 5 and row["reference"] == REFERENCE_MODEL
        assert row["auc"] > 0.6  # every model finds the signal on held-out answers
    reference = next(row for row in rows if row["model"] == REFERENCE_MODEL)
    assert reference["auc_difference"] == 0.0


def test_same_seed_same_rows():
    assert compare(data(300, 2), seed=5, resamples=10) == compare(data(300, 2), seed=5, resamples=10)


def test_the_interaction_model_wins_when_harm_needs_two_dimensions_at_once():
    base = data()
    rng = np.random.default_rng(0)
    both = base.s[:, 0] * base.s[:, 2] + base.s[:, 3] * base.s[:, 5]  # F with U, O with P
    probability = 1 / (1 + np.exp(-(-3.0 + 60.0 * both)))
    outcomes = dataclasses.replace(base, outcome=(rng.random(base.n) < probability).astype(float))
    rows = {row["model"]: row for row in compare(outcomes)}
    assert rows["interaction"]["auc_difference_interval"][0] > 0.0  # above the paper's rule, beyond sampling error


def test_interaction_features_are_the_dimensions_and_their_pairwise_products():
    s = np.arange(14, dtype=float).reshape(2, 7)
    features = interaction_features(s)
    assert features.shape == (2, 28)
    assert features[1, 7] == s[1, 0] * s[1, 1] and features[1, -1] == s[1, 5] * s[1, 6]


def test_bad_options_are_named():
    from hri_core.outcome_fit import FitError

    with pytest.raises(FitError, match="folds"):
        compare(data(), folds=1)
