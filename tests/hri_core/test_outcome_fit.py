"""Weights fitted from outcomes: recovery on synthetic outcomes drawn from known weights, the simplex,
determinism, quarantine of bad lines, and degenerate data named instead of crashing."""

from __future__ import annotations

import json
from functools import cache

import numpy as np
import pytest

from hri_core.outcome_fit import MIN_OUTCOMES, FitError, fit_weights, read_outcomes
from hri_core.profile import default_profile, profile_from_dict
from hri_core.synthetic_outcomes import SYNTHETIC_AS_OF, outcome_records

TRUE_WEIGHTS = {"F": 0.35, "C": 0.05, "U": 0.10, "O": 0.25, "S": 0.05, "P": 0.15, "H": 0.05}
# all weight on the rarest dimension: a ranking that mostly ignores what the outcomes depend on
WRONG_WEIGHTS = {"F": 0.01, "C": 0.01, "U": 0.01, "O": 0.01, "S": 0.01, "P": 0.01, "H": 0.94}
RESAMPLES = 40  # small: CPU etiquette; the intervals are only as wide as they need to be for these asserts


@cache
def synthetic(n: int = 1500, seed: int = 3) -> tuple[dict, ...]:
    return tuple(outcome_records(n, TRUE_WEIGHTS, seed=seed))


def scored(records, profile=None):
    return read_outcomes(((f"line {i}", r) for i, r in enumerate(records, start=1)), profile or default_profile(),
                         SYNTHETIC_AS_OF)


def fit(records, weights=None, **options):
    profile = profile_from_dict({"weights": weights}) if weights else default_profile()
    return fit_weights(scored(records, profile), profile, SYNTHETIC_AS_OF, resamples=RESAMPLES, **options)


def test_fitted_weights_rank_held_out_answers_as_well_as_the_true_weights_within_sampling_error():
    result = fit(synthetic(), TRUE_WEIGHTS).to_dict()  # the baseline is the truth itself
    difference = result["cv"]["difference"]
    # paired bootstrap interval of (fitted - true) held-out AUC: not significantly below 0
    low, high = difference["auc_interval"]
    assert high >= 0.0, difference
    # and the point estimate no further below 0 than the interval is wide (one sampling error)
    assert difference["auc"] >= -(high - low)


def test_fitted_weights_clearly_beat_a_deliberately_wrong_weight_vector():
    result = fit(synthetic(), WRONG_WEIGHTS).to_dict()
    difference = result["cv"]["difference"]
    assert difference["auc_interval"][0] > 0.0, difference  # the whole interval above 0
    assert difference["average_precision_interval"][0] > 0.0, difference
    assert result["cv"]["fitted"]["auc"] > result["cv"]["baseline"]["auc"]


def test_weights_lie_on_the_simplex_and_make_a_valid_profile():
    result = fit(synthetic()).to_dict()
    weights = result["weights"]
    assert list(weights) == ["F", "C", "U", "O", "S", "P", "H"]
    assert all(w >= 0 for w in weights.values())
    assert sum(weights.values()) == pytest.approx(1.0, abs=1e-12)
    assert profile_from_dict({"weights": weights}).weights  # the profile's own validation accepts them
    for key, (low, high) in result["intervals"].items():
        assert 0.0 <= low <= high <= 1.0, key
    assert result["slope"] > 0 and result["converged"]


def test_the_largest_true_weight_is_found_largest():
    weights = fit(synthetic()).weights
    assert max(weights, key=weights.__getitem__) == "F"
    low, high = fit(synthetic()).intervals["F"]
    assert low <= TRUE_WEIGHTS["F"] <= high


def test_same_seed_same_numbers_other_seed_other_intervals():
    first = fit(synthetic(400, 5), seed=7).to_dict()
    again = fit(synthetic(400, 5), seed=7).to_dict()
    other = fit(synthetic(400, 5), seed=8).to_dict()
    assert json.dumps(first) == json.dumps(again)
    assert other["weights"] == first["weights"]  # the point fit uses no randomness
    assert other["intervals"] != first["intervals"]


def test_bad_lines_are_quarantined_with_line_and_field_and_the_rest_fitted():
    records = list(synthetic(300, 9))
    lines = [("line 1", {**records[0], "outcome": 2}),
             ("line 2", {k: v for k, v in records[1].items() if k != "outcome"}),
             ("line 3", {**records[2], "claims": [{"labels": ["NOT_A_LABEL"]}]}),
             *((f"line {i}", r) for i, r in enumerate(records[3:], start=4))]
    data = read_outcomes(lines, default_profile(), SYNTHETIC_AS_OF)
    assert data.n == len(records) - 3
    where = [(q.where, q.field) for q in data.quarantined]
    assert ("line 1", "outcome") in where and ("line 2", "outcome") in where
    assert any(w == "line 3" and f.startswith("claims[0].labels") for w, f in where)
    assert data.quarantined[0].response_id == records[0]["response_id"]
    result = fit_weights(data, default_profile(), SYNTHETIC_AS_OF, resamples=0).to_dict()
    assert result["n"] == data.n and len(result["quarantined"]) == len(data.quarantined)


def test_outcome_accepts_booleans_and_refuses_other_values():
    record = synthetic(30, 1)[0]
    for value, ok in ((True, True), (0, True), (1.0, False), ("1", False), (None, False), (-1, False)):
        data = read_outcomes([("line 1", {**record, "outcome": value})], default_profile(), SYNTHETIC_AS_OF)
        assert (data.n == 1) is ok, value


@pytest.mark.parametrize(("records", "field", "words"), [
    (lambda rs: rs[:MIN_OUTCOMES - 1], "outcomes", "at least"),
    (lambda rs: [{**r, "outcome": 0} for r in rs], "outcome", "harmful"),
    (lambda rs: [{**r, "outcome": 1} for r in rs], "outcome", "harmless"),
    (lambda rs: [{**rs[0], "response_id": f"r{i}", "outcome": i % 2} for i in range(60)], "dimensions", "same"),
])
def test_degenerate_data_is_a_clear_error_not_a_crash(records, field, words):
    data = scored(records(list(synthetic(200, 2))))
    with pytest.raises(FitError) as caught:
        fit_weights(data, default_profile(), SYNTHETIC_AS_OF, resamples=5)
    assert caught.value.problems[0].loc == field
    assert words in caught.value.problems[0].message


def test_outcomes_that_fall_with_every_score_are_refused_not_fitted_to_zero_weights():
    records = [{**r, "outcome": 1 - r["outcome"]} for r in synthetic(600, 4)]  # harm where the risk is lowest
    with pytest.raises(FitError, match="does not rise"):
        fit_weights(scored(records), default_profile(), SYNTHETIC_AS_OF, resamples=5)


def test_bootstrap_work_is_capped(monkeypatch):
    import hri_core.outcome_fit as outcome_fit

    monkeypatch.setattr(outcome_fit, "MAX_BOOTSTRAP_WORK", 300 * 25)
    result = fit_weights(scored(synthetic(300, 6)), default_profile(), SYNTHETIC_AS_OF, resamples=200).to_dict()
    assert result["bootstrap"] == {"resamples": 25, "requested": 200, "undetermined": 0, "seed": 0}


def test_a_small_sample_uses_fewer_folds_than_asked_and_says_so():
    records = list(synthetic(200, 8))
    harmful = [r for r in records if r["outcome"] == 1][:3]
    harmless = [r for r in records if r["outcome"] == 0][:40]
    result = fit_weights(scored(harmful + harmless), default_profile(), SYNTHETIC_AS_OF, resamples=5).to_dict()
    assert result["cv"]["folds"] == 3 and result["cv"]["folds_requested"] == 5
    assert np.isfinite(result["cv"]["fitted"]["auc"])
