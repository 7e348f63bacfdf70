"""The overview's quantiles and histogram in two steps (register/console/score_distribution.py), held to their
definitions bit for bit: DuckDB's ``quantile_cont`` over every score, and each score binned by the CASE over
``round(score, 9)``. The scores are chosen to catch the two steps out: ties, scores on and beside the groups'
edges (k / 1024), on and around the bins' bounds at the ninth decimal, a score group straddling a bound."""

from __future__ import annotations

import math
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hri_core.calibration import score_bins
from register.console.score_distribution import (
    _bin_of,
    histogram_part,
    quantile_ends_select,
    quantiles_from_ends,
)
from register.db.sql import Params

BOUNDS = score_bins([20, 50, 75, 100])
QUANTILES = [0.5, 0.95, 0.0, 1.0, 0.37, 0.999]


def _near(x: float) -> list[float]:
    return [x, math.nextafter(x, 0), math.nextafter(x, 101), x + 4e-10, x + 5e-10, x + 6e-10, x - 5e-10]


# scores at the places the two steps could get wrong
EDGES = sorted({v for b in (*BOUNDS, 2.25, 55.0, 20.000000000000004, 55.00000000000001, 1 / 1024, 3 / 1024,
                            0.0, 100.0) for v in _near(b) if 0 <= v <= 100})


def _fr(p: Params, scores: list[float], no_claims: list[bool]) -> str:
    return (f"fr AS (SELECT unnest({p(scores)}::DOUBLE[]) AS score, "
            f"unnest({p(no_claims)}::BOOLEAN[]) AS no_claims)")


def _two_steps(store, scores, no_claims, quantiles=QUANTILES) -> list:
    p = Params()
    ends = store.scalar(f"WITH {_fr(p, scores, no_claims)} SELECT {quantile_ends_select(p, quantiles)}", p.values)
    return quantiles_from_ends(store, ends, len(quantiles))


def _quantile_cont(store, scores, no_claims, quantiles=QUANTILES) -> list:
    p = Params()
    got = store.scalar(f"WITH {_fr(p, scores, no_claims)} SELECT quantile_cont(score, {p(quantiles)}::DOUBLE[]) "
                       "FILTER (WHERE NOT no_claims) FROM fr", p.values)
    return [None] * len(quantiles) if got is None else list(got)


def _histograms(store, scores, no_claims, bounds=BOUNDS) -> tuple[list, list]:
    p = Params()
    select, order = histogram_part(p, bounds)
    two_steps = store.query(f"WITH {_fr(p, scores, no_claims)} {select} ORDER BY {order}", p.values)
    q = Params()
    by_row = dict(store.query(f"WITH {_fr(q, scores, no_claims)} SELECT {_bin_of(q, bounds, 'score')}, count(*) "
                              "FROM fr WHERE NOT no_claims GROUP BY 1", q.values))
    lowers = [0.0, *bounds[:-1]]
    expected = [(lo, hi, by_row.get(i, 0)) for i, (lo, hi) in enumerate(zip(lowers, bounds, strict=True))]
    return [tuple(r) for r in two_steps], expected


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_quantiles_equal_quantile_cont_bit_for_bit(store, data):
    pool = data.draw(st.sampled_from(["edges", "uniform", "few"]))
    n = data.draw(st.integers(0, 400))
    if pool == "edges":
        scores = data.draw(st.lists(st.sampled_from(EDGES), min_size=n, max_size=n))
    elif pool == "few":
        scores = data.draw(st.lists(st.sampled_from([2.25, 2.2500000000000004, 55.0, 55.00000000000001, 60.0]),
                                    min_size=n, max_size=n))
    else:
        scores = data.draw(st.lists(st.floats(0, 100, allow_nan=False), min_size=n, max_size=n))
    no_claims = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))
    assert _two_steps(store, scores, no_claims) == _quantile_cont(store, scores, no_claims)


def test_quantiles_of_thousands_of_scores_in_crowded_groups(store):
    rng = random.Random(7)
    # most scores in a few groups, distinct within them: the ranks fall inside groups that must be sorted
    scores = [rng.choice([2.25, 54.9]) + rng.random() / 2048 for _ in range(6000)] + \
             [rng.uniform(0, 100) for _ in range(3000)]
    no_claims = [rng.random() < 0.1 for _ in scores]
    assert _two_steps(store, scores, no_claims) == _quantile_cont(store, scores, no_claims)


def test_no_scored_row_has_no_quantiles(store):
    assert _two_steps(store, [], []) == [None] * len(QUANTILES)
    assert _two_steps(store, [10.0, 20.0], [True, True]) == [None] * len(QUANTILES)
    assert _two_steps(store, [42.5], [False]) == [42.5] * len(QUANTILES)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_histogram_equals_binning_every_score(store, data):
    n = data.draw(st.integers(0, 300))
    scores = data.draw(st.lists(st.one_of(st.sampled_from(EDGES), st.floats(0, 100, allow_nan=False)),
                                min_size=n, max_size=n))
    no_claims = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))
    bounds = data.draw(st.sampled_from([BOUNDS, (100.0,), (33.3333333335, 66.6666666665, 100.0),
                                        score_bins([10, 10.0000000004, 100])]))
    got, expected = _histograms(store, scores, no_claims, bounds)
    assert got == expected


def test_a_group_straddling_a_bound_is_binned_row_by_row(store):
    # 20 and 20.0000000004 (round(., 9) = 20) in the bin ending at 20; 20.0000000006 in the next; one group
    scores = [20.0, 20.0000000004, 20.0000000006, 20.0005]
    assert len({math.floor(s * 1024) for s in scores}) == 1
    got, expected = _histograms(store, scores, [False] * 4)
    assert got == expected
    by_end = {end: n for _, end, n in got}
    assert by_end[20.0] == 2 and by_end[25.0] == 2

