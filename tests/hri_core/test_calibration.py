"""Calibration: ROC/AUC against an independent Mann-Whitney count, PR and average precision by hand,
cost-optimal thresholds against brute force, calibration bins, band suggestions, bad input."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from hri_core.calibration import (
    calibration_table,
    cost_optimal_threshold,
    precision_recall_curve,
    roc_auc,
    roc_curve,
    suggest_bands,
)
from hri_core.errors import HRIError
from hri_core.profile import default_profile, profile_from_dict

# bad responses at 60, 70 and 30; good ones at 10, 20 and 30 (one tie across the classes at 30)
SMALL = [(10, False), (20, False), (30, False), (60, True), (70, True), (30, True)]


def mann_whitney(pairs):
    """P(bad score > good score) + 1/2 P(tie), by counting every bad/good pair."""
    bad = [s for s, b in pairs if b]
    good = [s for s, b in pairs if not b]
    wins = sum(1.0 if x > y else 0.5 if x == y else 0.0 for x in bad for y in good)
    return wins / (len(bad) * len(good))


def brute_force_cost(pairs, t, c_miss, c_review):
    fn = sum(1 for s, b in pairs if b and s <= t)
    fp = sum(1 for s, b in pairs if not b and s > t)
    return c_miss * fn + c_review * fp


def separated(seed=7, n=200):
    rng = random.Random(seed)
    good = [(round(rng.uniform(0, 40), 3), False) for _ in range(n)]
    bad = [(round(rng.uniform(60, 100), 3), True) for _ in range(n // 2)]
    return good + bad


# --- ROC ------------------------------------------------------------------------------------


def test_small_example_roc_by_hand():
    curve = roc_curve(SMALL)
    # pairs won by the bad responses: 60 and 70 beat all three goods, 30 beats 10 and 20 and ties 30
    assert curve.auc == pytest.approx(8.5 / 9, abs=1e-12)
    assert [(p.threshold, p.fpr, p.tpr) for p in curve.points] == pytest.approx([
        (70, 0, 0), (60, 0, 1 / 3), (30, 0, 2 / 3), (20, 1 / 3, 1), (10, 2 / 3, 1), (float("-inf"), 1, 1)])
    assert (curve.positives, curve.negatives) == (3, 3)


def test_perfect_separation_has_auc_one_and_threshold_between_classes():
    pairs = separated()
    assert roc_auc(pairs) == pytest.approx(1.0, abs=1e-12)
    max_good = max(s for s, b in pairs if not b)
    min_bad = min(s for s, b in pairs if b)
    for c_miss, c_review in ((10, 1), (1, 1), (1, 10)):
        choice = cost_optimal_threshold(pairs, c_miss, c_review)
        assert max_good <= choice.threshold < min_bad
        assert choice.interval_upper == min_bad
        assert (choice.best.false_negatives, choice.best.false_positives) == (0, 0)
        assert choice.best.expected_cost == 0.0


def test_reversed_score_has_auc_zero():
    reversed_pairs = [(100 - s, b) for s, b in separated()]
    assert roc_auc(reversed_pairs) == pytest.approx(0.0, abs=1e-12)


def test_uninformative_score_has_auc_near_half():
    rng = random.Random(42)
    pairs = [(rng.uniform(0, 100), rng.random() < 0.3) for _ in range(20_000)]
    # the AUC's standard error here is about 0.0045: 0.02 is over four of them
    assert roc_auc(pairs) == pytest.approx(0.5, abs=0.02)


def test_all_tied_scores_give_half():
    assert roc_auc([(50, True), (50, False), (50, True)]) == pytest.approx(0.5, abs=1e-12)


@settings(max_examples=80, deadline=None)
@given(hs.lists(hs.tuples(hs.integers(0, 10).map(lambda k: 10.0 * k), hs.booleans()), min_size=2, max_size=60)
       .filter(lambda ps: len({b for _, b in ps}) == 2))
def test_auc_equals_mann_whitney_with_ties(pairs):
    curve = roc_curve(pairs)
    assert curve.auc == pytest.approx(mann_whitney(pairs), abs=1e-12)
    fprs = [p.fpr for p in curve.points]
    tprs = [p.tpr for p in curve.points]
    assert fprs == sorted(fprs) and tprs == sorted(tprs)
    assert (fprs[0], tprs[0], fprs[-1], tprs[-1]) == (0, 0, 1, 1)
    for point in curve.points:  # each point's counts are what "score > threshold" flags
        assert point.true_positives == sum(1 for s, b in pairs if b and s > point.threshold)
        assert point.false_positives == sum(1 for s, b in pairs if not b and s > point.threshold)
    # the figure the page shows is the area under the points it draws, and the step-wise sum under the PR points
    trapezoid = sum((b.fpr - a.fpr) * (a.tpr + b.tpr) / 2 for a, b in zip(curve.points, curve.points[1:],
                                                                           strict=False))
    assert curve.auc == pytest.approx(trapezoid, abs=1e-12)
    pr = precision_recall_curve(pairs)
    recalls = [0.0] + [p.recall for p in pr.points]
    steps = sum((r - q) * p.precision for q, r, p in zip(recalls[:-1], recalls[1:], pr.points, strict=True))
    assert pr.average_precision == pytest.approx(steps, abs=1e-12)


# --- precision-recall -----------------------------------------------------------------------


def test_small_example_precision_recall_by_hand():
    curve = precision_recall_curve(SMALL)
    # flag > 60: 1 bad of 1 flagged; > 30: 2 of 2; > 20: 3 of 4 (the 30 tie comes in together)
    assert [(p.threshold, p.recall, p.precision) for p in curve.points][:3] == pytest.approx([
        (60, 1 / 3, 1.0), (30, 2 / 3, 1.0), (20, 1.0, 0.75)])
    assert curve.average_precision == pytest.approx(1 / 3 + 1 / 3 + 1 / 3 * 0.75, abs=1e-12)
    assert curve.prevalence == 0.5


def test_perfect_separation_has_average_precision_one():
    assert precision_recall_curve(separated()).average_precision == pytest.approx(1.0, abs=1e-12)


def test_uninformative_score_has_average_precision_near_prevalence():
    rng = random.Random(3)
    pairs = [(rng.uniform(0, 100), rng.random() < 0.2) for _ in range(20_000)]
    curve = precision_recall_curve(pairs)
    assert curve.average_precision == pytest.approx(curve.prevalence, abs=0.02)


# --- cost-sensitive threshold ---------------------------------------------------------------


def test_small_example_cost_by_hand():
    choice = cost_optimal_threshold(SMALL, cost_miss=10, cost_review=1)
    # t = 20 flags 30, 30, 60, 70: no miss, one needless review (the good 30): cost 1
    assert choice.threshold == 20
    assert (choice.best.false_negatives, choice.best.false_positives, choice.best.flagged) == (0, 1, 4)
    assert choice.best.total_cost == 1 and choice.best.expected_cost == pytest.approx(1 / 6)
    assert choice.interval_upper == 30
    by_t = {c.threshold: c.total_cost for c in choice.candidates}
    assert by_t == {0: 3, 10: 2, 20: 1, 30: 10, 60: 20, 70: 30, 100: 30}
    # dear reviews: t = 30 flags only 60 and 70 and accepts missing the bad 30 (cost 1)
    dear_reviews = cost_optimal_threshold(SMALL, cost_miss=1, cost_review=10)
    assert dear_reviews.threshold == 30 and dear_reviews.best.total_cost == 1
    # a good answer at the top of the scale: with dear reviews flagging nothing is cheapest
    assert cost_optimal_threshold([(10, True), (100, False)], 1, 10).threshold == 100


def test_ties_in_cost_pick_the_lowest_threshold():
    # t = 20 and t = 25 cost the same (nothing between 20 and 30): the observed score 20 is reported
    choice = cost_optimal_threshold([(10, False), (20, False), (30, True)], cost_miss=1, cost_review=1)
    assert choice.threshold == 20 and choice.best.total_cost == 0
    # 10 good, 20 bad, 30 good, 40 bad, equal costs: t = 10 (one needless review of 30) and t = 30
    # (one miss of 20) both cost 1; the lower threshold, which misses nothing, is chosen
    choice = cost_optimal_threshold([(10, False), (20, True), (30, False), (40, True)], 1, 1)
    costs = {c.threshold: c.total_cost for c in choice.candidates}
    assert costs[10] == costs[30] == 1 == min(costs.values())
    assert choice.threshold == 10 and choice.best.false_negatives == 0


def test_boundary_score_stays_below_the_threshold():
    # 20.000000000000004 (0.2 * 100 in floats) is compared at 9 decimals, like band_for: it is 20
    pairs = [(0.2 * 100, False), (20.0, False), (20.5, True)]
    choice = cost_optimal_threshold(pairs, 5, 1)
    assert choice.threshold == 20.0
    assert (choice.best.false_negatives, choice.best.false_positives) == (0, 0)


@settings(max_examples=60, deadline=None)
@given(hs.lists(hs.tuples(hs.integers(0, 200).map(lambda k: k / 2), hs.booleans()), min_size=2, max_size=40)
       .filter(lambda ps: len({b for _, b in ps}) == 2),
       hs.floats(min_value=0.1, max_value=50), hs.floats(min_value=0.1, max_value=50))
def test_cost_optimum_matches_brute_force(pairs, c_miss, c_review):
    choice = cost_optimal_threshold(pairs, c_miss, c_review)
    grid = [k / 4 for k in range(401)]  # every quarter point; scores sit on half points
    best = min(brute_force_cost(pairs, t, c_miss, c_review) for t in grid)
    assert choice.best.total_cost == pytest.approx(best, rel=1e-12, abs=1e-12)
    assert choice.best.total_cost == pytest.approx(brute_force_cost(pairs, choice.threshold, c_miss, c_review))
    assert choice.best.expected_cost == pytest.approx(choice.best.total_cost / len(pairs))
    assert 0 <= choice.threshold <= 100
    # no lower threshold is as cheap
    assert all(brute_force_cost(pairs, t, c_miss, c_review) > choice.best.total_cost + 1e-9
               for t in grid if t < choice.threshold)


# --- calibration table ----------------------------------------------------------------------


def test_calibration_bins_add_up():
    rng = random.Random(11)
    pairs = [(rng.uniform(0, 100), rng.random() < 0.4) for _ in range(1_000)] + [(0, True), (100, False)]
    table = calibration_table(pairs)
    assert len(table) == 10
    assert [(b.lower, b.upper) for b in table] == [(10.0 * k, 10.0 * (k + 1)) for k in range(10)]
    assert sum(b.count for b in table) == len(pairs)
    assert sum(b.bad for b in table) == sum(1 for _, bad in pairs if bad)
    for b in table:
        assert b.bad_rate == pytest.approx(b.bad / b.count)
        assert b.lower <= b.mean_score <= b.upper


def test_bin_edges_are_inclusive_upper_bounds_like_bands():
    pairs = [(0, True), (10, True), (10.0000001, False), (0.2 * 100, False), (100, True)]
    table = calibration_table(pairs)
    assert [b.count for b in table[:3]] == [2, 2, 0]
    assert table[0].bad_rate == 1.0 and table[1].bad_rate == 0.0
    assert table[2].bad_rate is None and table[2].mean_score is None
    assert table[-1].count == 1


def test_calibration_table_by_band_uppers():
    uppers = [b.upper for b in default_profile().bands]
    pairs = [(15, False), (20, True), (35, False), (51, True), (80, True), (75, False)]
    table = calibration_table(pairs, uppers)
    assert [b.count for b in table] == [2, 1, 2, 1]
    assert [b.bad for b in table] == [1, 0, 1, 1]


def test_calibration_table_accepts_a_single_class():
    table = calibration_table([(5, False), (95, False)], bins=2)
    assert [(b.count, b.bad_rate) for b in table] == [(1, 0.0), (1, 0.0)]


@pytest.mark.parametrize("bins, loc", [
    (0, "bins"), ([], "bins"), ([50, 40, 100], "bins[1]"), ([20, 50], "bins[1]"), ([20, 150], "bins[1]"),
    (True, "bins"),
])
def test_bad_bins_are_named(bins, loc):
    with pytest.raises(HRIError) as caught:
        calibration_table(SMALL, bins)
    assert loc in [p.loc for p in caught.value.problems]


# --- band suggestion ------------------------------------------------------------------------


def test_suggested_bands_put_review_at_the_cost_optimal_threshold():
    pairs = separated()
    t = cost_optimal_threshold(pairs, 10, 1).threshold
    suggestion = suggest_bands(pairs, 10, 1)
    assert set(suggestion) == {"bands"}
    profile = profile_from_dict(suggestion)
    default = default_profile().bands
    assert [(b.name, b.action) for b in profile.bands] == [(b.name, b.action) for b in default]
    uppers = [b.upper for b in profile.bands]
    assert uppers == sorted(uppers) and uppers[-1] == 100
    assert uppers[1] == t  # Medium (caution) ends at the threshold; High (review) starts above it
    assert profile.band_for(t).action == "caution"
    assert profile.band_for(t + 1e-6).action == "review"
    assert uppers[0] == pytest.approx(round(20 * t / 50, 2))
    assert uppers[2] == pytest.approx(round(t + 25 * (100 - t) / 50, 2))
    # every bad response of this sample is sent to review or block, no good one is
    for score, bad in pairs:
        assert (profile.band_for(score).action in ("review", "block")) == bad


def test_suggested_bands_keep_a_custom_profile_shape():
    base = profile_from_dict({"bands": [
        {"name": "ok", "upper": 30, "action": "release"},
        {"name": "check", "upper": 100, "action": "review"}]})
    suggestion = suggest_bands(SMALL, 10, 1, base)
    assert suggestion == {"bands": [{"name": "ok", "upper": 20.0, "action": "release"},
                                    {"name": "check", "upper": 100.0, "action": "review"}]}
    profile_from_dict(suggestion, base)


def test_degenerate_threshold_is_a_clear_error():
    # dear reviews and a good answer at 100: t* = 100, no room for High and Critical above it
    with pytest.raises(HRIError) as caught:
        suggest_bands([(10, True), (100, False)], 1, 1_000)
    assert "no room" in str(caught.value)
    # a bad answer at 0.5 and dear misses: t* = 0, no room for Low below Medium
    with pytest.raises(HRIError):
        suggest_bands([(0.5, True), (10, False), (90, True)], 1_000, 1)


def test_profile_without_a_release_band_before_review_is_refused():
    base = profile_from_dict({"bands": [{"name": "all", "upper": 100, "action": "review"}]})
    with pytest.raises(HRIError) as caught:
        suggest_bands(SMALL, 10, 1, base)
    assert caught.value.problems[0].loc == "bands"


# --- bad input ------------------------------------------------------------------------------

CURVE_FUNCTIONS = [
    roc_curve,
    roc_auc,
    precision_recall_curve,
    lambda pairs: cost_optimal_threshold(pairs, 10, 1),
    lambda pairs: suggest_bands(pairs, 10, 1),
]


@pytest.mark.parametrize("function", CURVE_FUNCTIONS)
@pytest.mark.parametrize("pairs, words", [
    ([], "no (score, bad) pairs"),
    ([(10, True), (90, True)], "all 2 outcome(s) are bad"),
    ([(10, False)], "all 1 outcome(s) are good"),
])
def test_empty_or_single_class_is_a_clear_error(function, pairs, words):
    with pytest.raises(HRIError) as caught:
        function(pairs)
    assert caught.value.problems[0].loc == "pairs"
    assert words in caught.value.problems[0].message


def test_empty_calibration_table_is_an_error():
    with pytest.raises(HRIError):
        calibration_table([])


@pytest.mark.parametrize("pair, loc", [
    ((101, True), "pairs[0].score"),
    ((-1, True), "pairs[0].score"),
    ((float("nan"), True), "pairs[0].score"),
    (("50", True), "pairs[0].score"),
    ((True, True), "pairs[0].score"),
    ((50, "yes"), "pairs[0].bad"),
    ((50, 2), "pairs[0].bad"),
    ((50,), "pairs[0]"),
    ("50,true", "pairs[0]"),
])
def test_bad_pairs_are_named(pair, loc):
    with pytest.raises(HRIError) as caught:
        roc_curve([pair, (10, False), (90, True)])
    assert loc in [p.loc for p in caught.value.problems]


def test_integer_outcomes_are_accepted():
    assert roc_auc([(10, 0), (90, 1)]) == 1.0


@pytest.mark.parametrize("c_miss, c_review, loc", [
    (-1, 1, "cost_miss"), (1, float("nan"), "cost_review"), (0, 0, "cost_miss"), ("1", 1, "cost_miss"),
])
def test_bad_costs_are_named(c_miss, c_review, loc):
    with pytest.raises(HRIError) as caught:
        cost_optimal_threshold(SMALL, c_miss, c_review)
    assert [p.loc for p in caught.value.problems] == [loc]
