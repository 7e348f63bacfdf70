"""Delphi rounds: spread per dimension checked by hand, scripted convergence and non-convergence,
validation of experts' vectors, and properties against an independent type-7 quantile."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from hri_core.ahp import DIMENSION_LETTERS, weights_to_profile_dict
from hri_core.delphi import (
    ExpertEstimate,
    build_round,
    converged,
    expert_estimate,
    final_weights,
    summarise_round,
)
from hri_core.errors import HRIError
from hri_core.profile import profile_from_dict
from hri_core.vocabulary import Dimension


def vector(*values):
    return dict(zip(DIMENSION_LETTERS, values, strict=True))


# Four experts whose vectors already sum to 1 (so normalisation leaves them as typed).
HAND = [
    {"expert": "A", "weights": vector(0.30, 0.20, 0.15, 0.10, 0.10, 0.10, 0.05), "rationale": "F drives incidents"},
    {"expert": "B", "weights": vector(0.20, 0.25, 0.15, 0.10, 0.10, 0.10, 0.10)},
    {"expert": "C", "weights": vector(0.25, 0.20, 0.20, 0.10, 0.05, 0.10, 0.10)},
    {"expert": "D", "weights": vector(0.40, 0.15, 0.10, 0.10, 0.10, 0.05, 0.10)},
]


def type7(values, p):
    """Hyndman & Fan type 7, written out: h = (m - 1) p, interpolate between order statistics."""
    xs = sorted(values)
    h = (len(xs) - 1) * p
    lo = math.floor(h)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (h - lo) * (xs[hi] - xs[lo])


def test_medians_and_iqr_match_hand_computation():
    summary = summarise_round(build_round(1, HAND))
    # F: sorted .20 .25 .30 .40; type 7: Q1 at h = 0.75 -> .20 + .75 * .05; Q3 at h = 2.25 -> .30 + .25 * .10
    f = summary.spread["F"]
    assert (f.median, f.q1, f.q3, f.iqr) == pytest.approx((0.275, 0.2375, 0.325, 0.0875), abs=1e-12)
    assert (f.minimum, f.maximum) == pytest.approx((0.20, 0.40), abs=1e-12)
    # C: sorted .15 .20 .20 .25 -> Q1 .1875, median .20, Q3 .2125
    c = summary.spread["C"]
    assert (c.median, c.q1, c.q3, c.iqr) == pytest.approx((0.20, 0.1875, 0.2125, 0.025), abs=1e-12)
    # O: everyone says .10
    assert summary.spread["O"].iqr == pytest.approx(0.0, abs=1e-12)
    # S, P, H: sorted .05 .10 .10 .10 -> Q1 .0875, median .10, Q3 .10
    for d in "SPH":
        s = summary.spread[d]
        assert (s.median, s.q1, s.q3, s.iqr) == pytest.approx((0.10, 0.0875, 0.10, 0.0125), abs=1e-12)
    assert summary.max_iqr == pytest.approx(0.0875, abs=1e-12)
    # A differs from the medians by +.025 on F and -.05 on H: distance sqrt(.025^2 + .05^2)
    assert summary.distances["A"] == pytest.approx(math.sqrt(0.025 ** 2 + 0.05 ** 2), abs=1e-12)
    # D: +.125 F, -.05 C, -.05 U, -.05 P
    assert summary.distances["D"] == pytest.approx(math.sqrt(0.125 ** 2 + 3 * 0.05 ** 2), abs=1e-12)
    # medians sum to 1.025, so the final weights divide by it
    weights = final_weights(summary)
    assert weights["F"] == pytest.approx(0.275 / 1.025, abs=1e-12)
    assert math.fsum(weights.values()) == pytest.approx(1.0, abs=1e-12)


def test_round_keeps_rationale_and_normalises_percentages():
    delphi_round = build_round(2, [
        {"expert": "A", "weights": vector(30, 20, 15, 10, 10, 10, 5), "rationale": "per cent"},
        ExpertEstimate(expert="B", weights={Dimension.F: 1, **{d: 1 for d in DIMENSION_LETTERS[1:]}}),
    ])
    a, b = delphi_round.estimates
    assert a.rationale == "per cent" and b.rationale is None
    assert a.weights["F"] == pytest.approx(0.30) and a.weights["H"] == pytest.approx(0.05)
    assert b.weights == pytest.approx({d: 1 / 7 for d in DIMENSION_LETTERS})
    assert delphi_round.to_dict()["experts"][0]["rationale"] == "per cent"


# --- scripted rounds ------------------------------------------------------------------------

TARGET = (0.25, 0.20, 0.15, 0.10, 0.10, 0.10, 0.10)
# Each expert's disagreement with the target; every offset sums to 0, so the vectors sum to 1.
OFFSETS = {
    "E1": (0.10, -0.05, -0.05, 0.00, 0.00, 0.00, 0.00),
    "E2": (-0.10, 0.05, 0.00, 0.05, 0.00, 0.00, 0.00),
    "E3": (0.00, 0.00, 0.05, -0.05, 0.05, -0.05, 0.00),
    "E4": (0.05, 0.00, 0.00, 0.00, -0.05, 0.05, -0.05),
    "E5": (-0.05, 0.05, 0.00, 0.00, 0.00, 0.00, 0.00),
}


def scripted_round(number, shrink):
    """Every expert moves towards the target: offsets scaled by ``shrink`` (1, 0.4, 0.1)."""
    return build_round(number, [
        {"expert": e, "weights": vector(*(t + shrink * d for t, d in zip(TARGET, offset, strict=True)))}
        for e, offset in OFFSETS.items()])


def test_three_rounds_converge_as_experts_move_towards_each_other():
    summaries = [summarise_round(scripted_round(n, s)) for n, s in ((1, 1.0), (2, 0.4), (3, 0.1))]
    iqrs = [s.max_iqr for s in summaries]
    # F offsets sorted -.10 -.05 0 .05 .10: IQR .10 at full spread, scaled by 0.4 and 0.1 after
    assert iqrs == pytest.approx([0.10, 0.04, 0.01], abs=1e-12)
    assert iqrs[0] > iqrs[1] > iqrs[2]
    assert [converged(s, 0.02) for s in summaries] == [False, False, True]
    for expert in OFFSETS:
        distances = [s.distances[expert] for s in summaries]
        assert distances[0] > distances[1] > distances[2]
    weights = final_weights(summaries[-1])
    assert math.fsum(weights.values()) == pytest.approx(1.0, abs=1e-12)
    assert [weights[d] for d in DIMENSION_LETTERS] == pytest.approx(TARGET, abs=0.01)
    profile_from_dict(weights_to_profile_dict(weights))


def test_two_camps_that_do_not_move_never_converge():
    camp_f = vector(0.50, 0.10, 0.10, 0.10, 0.10, 0.05, 0.05)
    camp_c = vector(0.10, 0.50, 0.10, 0.10, 0.10, 0.05, 0.05)
    for number in (1, 2, 3):
        summary = summarise_round(build_round(number, [
            {"expert": "a", "weights": camp_f}, {"expert": "b", "weights": camp_f},
            {"expert": "c", "weights": camp_c}, {"expert": "d", "weights": camp_c}]))
        # sorted .1 .1 .5 .5: Q1 = .1, Q3 = .5 (type 7 at h = .75 and 2.25)
        assert summary.spread["F"].iqr == pytest.approx(0.4, abs=1e-12)
        assert summary.spread["C"].iqr == pytest.approx(0.4, abs=1e-12)
        assert not converged(summary, 0.05)
        assert converged(summary, 0.41)


def test_convergence_is_strict():
    summary = summarise_round(build_round(1, HAND))
    assert not converged(summary, summary.max_iqr)
    assert converged(summary, summary.max_iqr + 1e-9)


@pytest.mark.parametrize("threshold", [0, -0.1, float("nan"), float("inf"), "0.05", True])
def test_bad_threshold_is_refused(threshold):
    with pytest.raises(HRIError) as caught:
        converged(summarise_round(build_round(1, HAND)), threshold)
    assert caught.value.problems[0].loc == "threshold"


# --- bad input ------------------------------------------------------------------------------


@pytest.mark.parametrize("experts, loc", [
    ([], "experts"),
    ([{"expert": "A", "weights": {**vector(*TARGET), "F": -0.1}}], "experts[0].weights.F"),
    ([{"expert": "A", "weights": {**vector(*TARGET), "F": "high"}}], "experts[0].weights.F"),
    ([{"expert": "A", "weights": {**vector(*TARGET), "F": float("nan")}}], "experts[0].weights.F"),
    ([{"expert": "A", "weights": {**vector(*TARGET), "X": 0.1}}], "experts[0].weights.X"),
    ([{"expert": "A", "weights": {"F": 1.0}}], "experts[0].weights"),
    ([{"expert": "A", "weights": vector(*[0.0] * 7)}], "experts[0].weights"),
    ([{"expert": "", "weights": vector(*TARGET)}], "experts[0].expert"),
    ([{"expert": "A", "weights": vector(*TARGET), "colour": "red"}], "experts[0].colour"),
    ([{"expert": "A", "weights": vector(*TARGET), "rationale": 3}], "experts[0].rationale"),
    ([{"expert": "A", "weights": vector(*TARGET)}, {"expert": "A", "weights": vector(*TARGET)}],
     "experts[1].expert"),
    ([{"expert": "A", "weights": vector(*TARGET)}, "B"], "experts[1]"),
])
def test_bad_rounds_name_the_field(experts, loc):
    with pytest.raises(HRIError) as caught:
        build_round(1, experts)
    assert loc in [p.loc for p in caught.value.problems]


def test_bad_round_number_is_named():
    with pytest.raises(HRIError) as caught:
        build_round(0, HAND)
    assert [p.loc for p in caught.value.problems] == ["round"]


def test_every_problem_of_a_round_is_reported_at_once():
    with pytest.raises(HRIError) as caught:
        build_round(1, [{"expert": "A", "weights": {**vector(*TARGET), "F": -1, "C": "x"}},
                        {"expert": "B", "weights": {"F": 1}}])
    assert {p.loc for p in caught.value.problems} == {
        "experts[0].weights.F", "experts[0].weights.C", "experts[1].weights"}


def test_expert_estimate_on_other_criteria():
    estimate = expert_estimate("A", {"cost": 3, "time": 1}, criteria=("cost", "time"))
    assert estimate.weights == {"cost": 0.75, "time": 0.25}


def test_final_weights_refuse_all_zero_medians():
    summary = summarise_round(build_round(1, [
        {"expert": "a", "weights": vector(1, 0, 0, 0, 0, 0, 0)},
        {"expert": "b", "weights": vector(0, 1, 0, 0, 0, 0, 0)},
        {"expert": "c", "weights": vector(0, 0, 1, 0, 0, 0, 0)},
    ]))
    with pytest.raises(HRIError):
        final_weights(summary)


# --- properties -----------------------------------------------------------------------------

_weight = hs.floats(min_value=0.0, max_value=1.0, allow_nan=False, allow_subnormal=False)
_vectors = hs.lists(_weight, min_size=7, max_size=7).filter(lambda v: sum(v) > 1e-6)


@settings(max_examples=60, deadline=None)
@given(hs.lists(_vectors, min_size=1, max_size=9))
def test_summary_matches_an_independent_type7_quantile(vectors):
    delphi_round = build_round(1, [{"expert": f"e{k}", "weights": vector(*v)} for k, v in enumerate(vectors)])
    summary = summarise_round(delphi_round)
    for d in DIMENSION_LETTERS:
        column = [e.weights[d] for e in delphi_round.estimates]
        s = summary.spread[d]
        assert s.q1 == pytest.approx(type7(column, 0.25), abs=1e-12)
        assert s.median == pytest.approx(type7(column, 0.5), abs=1e-12)
        assert s.q3 == pytest.approx(type7(column, 0.75), abs=1e-12)
        assert s.minimum <= s.q1 <= s.median <= s.q3 <= s.maximum
        assert s.iqr >= 0
    for e in delphi_round.estimates:
        assert math.fsum(e.weights.values()) == pytest.approx(1.0, abs=1e-12)
        expected = math.sqrt(sum((e.weights[d] - summary.median_vector[d]) ** 2 for d in DIMENSION_LETTERS))
        assert summary.distances[e.expert] == pytest.approx(expected, abs=1e-12)
    if math.fsum(summary.median_vector.values()) > 0:
        assert math.fsum(final_weights(summary).values()) == pytest.approx(1.0, abs=1e-12)
    else:  # e.g. three experts each putting everything on a different dimension
        with pytest.raises(HRIError):
            final_weights(summary)
    if len(vectors) == 1:
        assert converged(summary, 1e-12)  # one expert: no spread at all
