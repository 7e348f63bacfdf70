"""``hri_core.agreement`` against the PyPI ``krippendorff`` package: the same alpha to the last bits where the
package computes one, and the cases where it computes none (why ``krippendorff_alpha`` is not a wrapper around
it: module docstring of ``hri_core.agreement``)."""

from __future__ import annotations

import random
import warnings

import krippendorff
import numpy as np
import pytest

from hri_core.agreement import LEVELS, Rating, bootstrap_alpha, krippendorff_alpha


def random_ratings(seed: int, raters: int, units: int, values: int, missing: float) -> list[Rating]:
    rng = random.Random(seed)
    ratings = []
    for unit in range(units):
        truth = rng.randrange(values)
        for rater in range(raters):
            if rng.random() < missing:
                continue
            value = truth if rng.random() < 0.6 else rng.randrange(values)
            ratings.append(Rating(f"u{unit}", f"r{rater}", float(value * 2 + 1)))
    return ratings


def reliability_data(ratings: list[Rating], units: list[str] | None = None, missing: object = np.nan) -> np.ndarray:
    """raters x units (``units``: these columns, a unit repeated as often as listed), ``missing`` where a rater
    gave nothing: the package's input."""
    raters = sorted({r.rater for r in ratings})
    units = units if units is not None else list(dict.fromkeys(r.unit for r in ratings))
    given = {(r.unit, r.rater): r.value for r in ratings}
    return np.array([[given.get((unit, rater), missing) for unit in units] for rater in raters])


@pytest.mark.parametrize("level", LEVELS)
def test_the_same_alpha_to_the_last_bits(level):
    worst = 0.0
    for seed in range(60):
        ratings = random_ratings(seed, 2 + seed % 6, 20 + seed % 40, 2 + seed % 7, (seed % 5) / 10)
        ours = krippendorff_alpha(ratings, level).alpha
        theirs = krippendorff.alpha(reliability_data=reliability_data(ratings), level_of_measurement=level)
        assert ours is not None
        worst = max(worst, abs(ours - float(theirs)))
    assert worst < 1e-12


def test_the_same_alpha_for_named_categories_and_an_explicit_order():
    names = ["low", "medium", "high", "very high", "extreme"]
    ratings = [Rating(u, r, names[int(v) // 2]) for u, r, v in random_ratings(7, 4, 50, 5, 0.3)]
    data = reliability_data(ratings, missing="nan")  # the package reads the text "nan" as missing
    assert krippendorff_alpha(ratings).alpha == pytest.approx(
        krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"), abs=1e-12)
    assert krippendorff_alpha(ratings, "ordinal", order=names).alpha == pytest.approx(
        krippendorff.alpha(reliability_data=data, value_domain=names, level_of_measurement="ordinal"), abs=1e-12)


@pytest.mark.parametrize("level", LEVELS)
def test_a_bootstrap_resample_is_the_package_alpha_of_the_drawn_units(level):
    # one resample: pairable units (first-appearance order) drawn with numpy's generator of the seed; each drawn
    # unit weighs in the coincidences as often as it was drawn, as a unit listed that often does in the package
    ratings = random_ratings(11, 3, 40, 4, 0.2)
    pairable = [u for u in dict.fromkeys(r.unit for r in ratings) if sum(r.unit == u for r in ratings) >= 2]
    for seed in range(5):
        drawn = np.random.default_rng(seed).integers(0, len(pairable), size=(1, len(pairable)))[0]
        interval = bootstrap_alpha(ratings, level, samples=1, seed=seed)
        theirs = krippendorff.alpha(reliability_data=reliability_data(ratings, [pairable[i] for i in drawn]),
                                    level_of_measurement=level)
        assert interval.low == interval.high == pytest.approx(float(theirs), abs=1e-12)


def test_where_the_package_computes_no_alpha_ours_says_why():
    same = [Rating(u, r, 3.0) for u in ("u1", "u2") for r in ("a", "b")]
    with pytest.raises(ValueError, match="more than one value in the domain"):
        krippendorff.alpha(reliability_data=reliability_data(same), level_of_measurement="interval")
    result = krippendorff_alpha(same, "interval")
    assert result.alpha is None and "expected disagreement is 0" in result.note

    lonely = [Rating("u1", "a", 1.0), Rating("u2", "b", 2.0)]
    with pytest.raises(ValueError):
        krippendorff.alpha(reliability_data=reliability_data(lonely), level_of_measurement="nominal")
    result = krippendorff_alpha(lonely)
    assert result.alpha is None and "no pairable values" in result.note


def test_a_resample_of_equal_values_is_nan_in_the_package_and_undefined_here():
    # one unit disagrees, nine agree: a resample without the odd unit has every value the same
    ratings = [Rating(f"u{u}", r, 1.0) for u in range(9) for r in ("A", "B")]
    ratings += [Rating("odd", "A", 1.0), Rating("odd", "B", 2.0)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(RuntimeWarning):  # 0 / 0 with both values still in the domain
            krippendorff.alpha(value_counts=[[2, 0]] * 9 + [[0, 0]], level_of_measurement="nominal")
    interval = bootstrap_alpha(ratings, samples=300, seed=2)
    assert 0 < interval.undefined < 300
