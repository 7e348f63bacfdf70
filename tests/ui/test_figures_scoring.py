"""The scoring pages' figure builders, tested as functions on their traces."""

from __future__ import annotations

import pandas as pd
import pytest

from hri_core import calibration, default_profile
from ui.features.figures import NO_DATA_TEXT, band_colors
from ui.features.figures_scoring import (
    calibration_figure,
    delphi_spread_figure,
    distribution_shift_figure,
    pr_figure,
    roc_figure,
    transition_heatmap,
    transition_matrix,
    weights_figure,
)

BANDS = ["Low", "Medium", "High", "Critical"]
TRANSITIONS = pd.DataFrame({"old_band": ["Low", "Medium", "Medium", "High"],
                            "new_band": ["Low", "Medium", "High", "High"], "responses": [10, 5, 312, 7]})


def test_transition_matrix_is_square_in_band_order():
    table = transition_matrix(TRANSITIONS, BANDS)
    assert list(table.index) == list(table.columns) == BANDS
    assert table.loc["Medium", "High"] == 312 and table.loc["High", "Medium"] == 0
    assert table.values.sum() == 334


def test_transition_matrix_keeps_bands_of_another_profile():
    extra = pd.concat([TRANSITIONS, pd.DataFrame({"old_band": ["Amber"], "new_band": ["High"], "responses": [2]})])
    table = transition_matrix(extra, BANDS)
    assert list(table.index) == BANDS + ["Amber"] and table.loc["Amber", "High"] == 2


def test_heatmap_shows_the_counts():
    fig = transition_heatmap(TRANSITIONS, BANDS)
    (trace,) = fig.data
    assert list(trace.x) == BANDS and list(trace.y) == BANDS
    assert trace.text[1][2] == "312"


def test_distribution_shift_has_both_series():
    hist = pd.DataFrame({"bin_lower": [0.0, 50.0], "bin_upper": [50.0, 100.0], "old": [3, 1], "new": [2, 2]})
    fig = distribution_shift_figure(hist)
    assert [t.name for t in fig.data] == ["active", "draft"]
    assert list(fig.data[1].y) == [2, 2] and list(fig.data[0].x) == ["0–50", "50–100"]


@pytest.mark.parametrize("builder", [lambda: transition_heatmap(None, BANDS), lambda: distribution_shift_figure(None),
                                     lambda: calibration_figure([]), lambda: delphi_spread_figure(None)])
def test_empty_input_gives_the_no_data_figure(builder):
    fig = builder()
    assert not fig.data
    assert any(NO_DATA_TEXT in (a.text or "") for a in fig.layout.annotations)


def test_roc_and_pr_figures_carry_the_areas():
    pairs = [(10, False), (20, True), (30, False), (40, True)]
    roc = calibration.roc_curve(pairs)
    fig = roc_figure(roc)
    assert "AUC 0.750" in fig.layout.title.text
    assert list(fig.data[0].x) == [p.fpr for p in roc.points]
    pr = calibration.precision_recall_curve(pairs)
    fig = pr_figure(pr)
    assert f"{pr.average_precision:.3f}" in fig.layout.title.text
    assert list(fig.data[1].y) == [0.5, 0.5]  # prevalence


def test_calibration_figure_skips_empty_bins():
    table = calibration.calibration_table([(10, False), (15, True), (80, True)], [20, 50, 75, 100])
    fig = calibration_figure(table, default_profile().bands)
    assert list(fig.data[0].y) == [0.5, 1.0]
    assert list(fig.data[0].x) == ["0–20", "75–100"]


def test_calibration_score_bins_are_coloured_by_their_band():
    profile = default_profile()
    bins = calibration.score_bins([b.upper for b in profile.bands])
    table = calibration.calibration_table([(50.0, True), (50.01, False), (20.0, False)], bins)
    fig = calibration_figure(table, profile.bands)
    colors = band_colors([b.name for b in profile.bands])
    assert list(fig.data[0].x) == ["15–20", "45–50", "50–55"]  # 50 sits in the bin that ends at 50
    assert list(fig.data[0].marker.color) == [colors["Low"], colors["Medium"], colors["High"]]


def test_weights_and_delphi_figures():
    fig = weights_figure({"F": 0.5, "C": 0.5}, {"F": 0.25, "C": 0.75})
    assert list(fig.data[0].y) == [0.5, 0.5] and list(fig.data[1].y) == [0.25, 0.75]
    summary = {"round": 2, "spread": {"F": {"median": 0.3, "q1": 0.25, "q3": 0.4},
                                      "C": {"median": 0.2, "q1": 0.2, "q3": 0.2}}}
    fig = delphi_spread_figure(summary)
    assert list(fig.data[0].y) == [0.3, 0.2]
    assert list(fig.data[0].error_y.array) == pytest.approx([0.1, 0.0])
    assert list(fig.data[0].error_y.arrayminus) == pytest.approx([0.05, 0.0])
