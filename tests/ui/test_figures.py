"""Figure builders tested as functions, on their traces and shapes (AppTest sees charts only as opaque
elements). Band thresholds come from a non-default profile wherever it matters, to prove that no
number is hard-coded in ui/features/figures.py."""

from __future__ import annotations

import json
import math
import re
from datetime import UTC, datetime

import pandas as pd
import plotly.graph_objects as go
import pytest

from hri_core import default_profile, profile_from_dict
from hri_core.calibration import score_bins
from hri_core.vocabulary import DIMENSION_NAMES, DIMENSIONS, Dimension
from ui.features import figures
from ui.features.figures import (
    BAND_ANCHOR_COLORS,
    NO_DATA_TEXT,
    OTHER_COLOR,
    band_colors,
    band_mix_figure,
    contribution_figure,
    dimension_contribution_figure,
    high_share_figure,
    score_histogram_figure,
    score_history_figure,
)

# A profile whose bands differ from the paper's in names, count and bounds.
ODD_BANDS = [
    {"name": "Calm", "upper": 12.5, "action": "release"},
    {"name": "Watch", "upper": 33, "action": "caution"},
    {"name": "Alert", "upper": 61, "action": "review"},
    {"name": "Hold", "upper": 88, "action": "review"},
    {"name": "Stop", "upper": 100, "action": "block"},
]


@pytest.fixture
def odd_profile():
    return profile_from_dict({"bands": ODD_BANDS})


def _no_data(fig: go.Figure) -> bool:
    return [a.text for a in fig.layout.annotations] == [NO_DATA_TEXT] and len(fig.data) == 0


def _hex_ok(color: str) -> bool:
    return re.fullmatch(r"#[0-9A-Fa-f]{6}", color) is not None


# --- band colours --------------------------------------------------------------------------------

def test_four_bands_get_green_amber_orange_red_dark_red_by_order():
    colors = band_colors(["Low", "Medium", "High", "Critical"])
    assert list(colors) == ["Low", "Medium", "High", "Critical"]
    assert list(colors.values()) == list(BAND_ANCHOR_COLORS)
    # the colour follows the position, not the name
    swapped = band_colors(["Critical", "High", "Medium", "Low"])
    assert swapped["Critical"] == BAND_ANCHOR_COLORS[0] and swapped["Low"] == BAND_ANCHOR_COLORS[-1]


@pytest.mark.parametrize("count", [1, 2, 3, 5, 7])
def test_other_band_counts_spread_over_the_ramp(count):
    names = [f"b{i}" for i in range(count)]
    colors = band_colors(names)
    assert list(colors) == names
    assert all(_hex_ok(c) for c in colors.values())
    assert colors["b0"] == BAND_ANCHOR_COLORS[0]
    if count > 1:
        assert colors[f"b{count - 1}"] == BAND_ANCHOR_COLORS[-1]
        assert len(set(colors.values())) == count  # neighbours stay distinguishable
    if count >= 3:
        assert colors["b1"] != BAND_ANCHOR_COLORS[0]


def test_three_bands_middle_is_between_amber_and_orange_red():
    middle = band_colors(["a", "b", "c"])["b"]
    r, g, b = (int(middle[i:i + 2], 16) for i in (1, 3, 5))
    amber, orange = BAND_ANCHOR_COLORS[1], BAND_ANCHOR_COLORS[2]
    for i, channel in zip((1, 3, 5), (r, g, b), strict=True):
        lo, hi = sorted((int(amber[i:i + 2], 16), int(orange[i:i + 2], 16)))
        assert lo <= channel <= hi


def test_no_bands_gives_no_colours():
    assert band_colors([]) == {}


# --- empty input ---------------------------------------------------------------------------------

@pytest.mark.parametrize("build", [
    lambda p: band_mix_figure(pd.DataFrame(columns=["week", "band", "n"]), [b.name for b in p.bands]),
    lambda p: band_mix_figure(None, [b.name for b in p.bands]),
    lambda p: score_histogram_figure(pd.DataFrame(columns=["bin_start", "bin_end", "n"]), p.bands),
    lambda p: dimension_contribution_figure(
        pd.DataFrame(columns=["dimension", "mean_score", "weight", "mean_weighted"])),
    lambda p: high_share_figure(pd.DataFrame(columns=["key", "n", "high_or_critical", "share"]), "Use case"),
    lambda p: contribution_figure({}, dict(p.weights), 0.0, 0.0, None, "Low", "release"),
    lambda p: score_history_figure(pd.DataFrame(columns=["run_id", "profile_version", "as_of", "score", "band",
                                                         "action", "hri_add", "is_current"]), p.bands),
], ids=["band_mix", "band_mix_none", "histogram", "dimensions", "high_share", "contribution", "history"])
def test_empty_input_gives_the_no_data_annotation(build):
    fig = build(default_profile())
    assert isinstance(fig, go.Figure)
    assert _no_data(fig)
    assert fig.layout.title.text  # the chart keeps its title


def test_missing_column_is_named():
    with pytest.raises(ValueError, match="band_mix_figure: missing column.*\\bn\\b"):
        band_mix_figure(pd.DataFrame({"week": ["2026-W01"], "band": ["Low"]}), ["Low"])


# --- 1. band mix ---------------------------------------------------------------------------------

def test_band_mix_one_trace_per_present_band_in_profile_order(odd_profile):
    names = [b.name for b in odd_profile.bands]
    df = pd.DataFrame({
        "week": ["2026-W02", "2026-W01", "2026-W01", "2026-W02", "2026-W01", "2026-W03"],
        "band": ["Stop", "Calm", "Alert", "Calm", "Stop", "Alert"],
        "n": [4, 10, 3, 7, 1, 5],
    })
    fig = band_mix_figure(df, names)
    assert fig.layout.barmode == "stack"
    assert [t.name for t in fig.data] == ["Calm", "Alert", "Stop"]  # Watch and Hold absent: skipped
    colors = band_colors(names)
    for trace in fig.data:
        assert trace.marker.color == colors[trace.name]
        assert list(trace.x) == ["2026-W01", "2026-W02", "2026-W03"]
        assert sum(trace.y) == df.loc[df["band"] == trace.name, "n"].sum()
    assert sum(sum(t.y) for t in fig.data) == df["n"].sum()
    calm = next(t for t in fig.data if t.name == "Calm")
    assert list(calm.y) == [10, 7, 0]
    assert fig.layout.xaxis.title.text and fig.layout.yaxis.title.text
    assert all("%{y" in t.hovertemplate for t in fig.data)


def test_band_mix_keeps_bands_unknown_to_the_profile_after_the_known_ones():
    df = pd.DataFrame({"week": pd.to_datetime(["2026-01-05", "2026-01-05", "2026-01-12"]),
                       "band": ["legacy", "Medium", "Low"], "n": [2, 3, 4]})
    fig = band_mix_figure(df, ["Low", "Medium", "High", "Critical"])
    assert [t.name for t in fig.data] == ["Low", "Medium", "legacy"]
    assert fig.data[2].marker.color == OTHER_COLOR
    assert sum(sum(t.y) for t in fig.data) == 9


# --- 2. histogram --------------------------------------------------------------------------------

def _histogram_frame(profile=None):
    """Bins of ``score_bins`` for the profile's bands (10 wide), with counts."""
    uppers = score_bins([b.upper for b in (profile or default_profile()).bands], 10)
    starts = [0.0, *uppers[:-1]]
    counts = [(3 * k) % 7 + 1 for k in range(len(uppers))]
    return pd.DataFrame({"bin_start": starts, "bin_end": list(uppers), "n": counts})


def test_histogram_has_a_dashed_line_at_each_band_upper_but_the_last(odd_profile):
    fig = score_histogram_figure(_histogram_frame(odd_profile), odd_profile.bands)
    lines = [s for s in fig.layout.shapes if s.type == "line"]
    assert sorted(s.x0 for s in lines) == [12.5, 33, 61, 88]
    assert all(s.x0 == s.x1 and s.line.dash == "dash" for s in lines)
    for band in odd_profile.bands[:-1]:
        assert any(a.x == band.upper and band.name in a.text for a in fig.layout.annotations)
    assert not any("Stop" in (a.text or "") for a in fig.layout.annotations)
    # the paper's bounds are nowhere to be seen
    assert not {20, 50, 75} & {s.x0 for s in lines}


def test_histogram_bars_cover_the_bins_and_take_the_colour_of_their_band(odd_profile):
    df = _histogram_frame(odd_profile)
    fig = score_histogram_figure(df, odd_profile.bands)
    (bars,) = fig.data
    assert list(bars.y) == df["n"].tolist()
    assert [x - w / 2 for x, w in zip(bars.x, bars.width, strict=True)] == pytest.approx(df["bin_start"].tolist())
    assert [x + w / 2 for x, w in zip(bars.x, bars.width, strict=True)] == pytest.approx(df["bin_end"].tolist())
    colors = band_colors([b.name for b in odd_profile.bands])
    expected = [odd_profile.band_for(end).name for end in df["bin_end"]]
    assert list(bars.marker.color) == [colors[b] for b in expected]
    assert [c[2] for c in bars.customdata] == expected
    assert tuple(fig.layout.xaxis.range) == (0, 100)


def test_histogram_bar_ending_at_a_band_bound_is_that_bands_colour():
    # the bin (45, 50] holds the scores of exactly 50: Medium, like the band card beside the chart
    bands = default_profile().bands
    df = pd.DataFrame({"bin_start": [45.0, 50.0, 15.0, 70.0], "bin_end": [50.0, 55.0, 20.0, 75.0], "n": [295, 1, 2, 3]})
    fig = score_histogram_figure(df, bands)
    # sorted by bin_start
    assert [c[2] for c in fig.data[0].customdata] == ["Low", "Medium", "High", "High"]
    colors = band_colors([b.name for b in bands])
    assert list(fig.data[0].marker.color)[1] == colors["Medium"]


def test_data_strings_reach_plotly_escaped():
    link = '<a href="http://127.0.0.1:9/x">use case</a>'
    df = pd.DataFrame({"key": [link], "n": [2], "high_or_critical": [1], "share": [0.5]})
    fig = high_share_figure(df, "Use case")
    assert list(fig.data[0].x) == ['&lt;a href=&quot;http://127.0.0.1:9/x&quot;&gt;use case&lt;/a&gt;']
    fig = contribution_figure({"F": 0.2}, {"F": 1.0}, 0.2, 0.7, {"claim_id": link, "rule_id": "<b>r</b>", "value": 0.7},
                              "<i>High</i>", "review")
    assert not any("<a " in x or "<b>" in x or "<i>" in x for x in fig.data[0].x)


def test_histogram_paper_profile_lines_at_20_50_75():
    fig = score_histogram_figure(_histogram_frame(), default_profile().bands)
    assert sorted(s.x0 for s in fig.layout.shapes) == [20, 50, 75]


# --- 3. dimension contribution -------------------------------------------------------------------

def test_dimension_bars_sorted_by_value_with_names_and_hover():
    df = pd.DataFrame({
        "dimension": ["F", "C", "U", "H"],
        "mean_score": [0.2, 0.5, 0.1, 0.0],
        "weight": [0.25, 0.20, 0.15, 0.10],
        "mean_weighted": [0.05, 0.10, 0.015, 0.0],
    })
    fig = dimension_contribution_figure(df)
    (bars,) = fig.data
    assert bars.orientation == "h"
    assert list(bars.x) == [0.0, 0.015, 0.05, 0.10]  # ascending: the largest is drawn at the top
    assert list(bars.y) == [f"{d} — {DIMENSION_NAMES[Dimension(d)]}" for d in ("H", "U", "F", "C")]
    assert bars.y[-1] == "C — Context deviation"
    assert [tuple(c) for c in bars.customdata] == [(0.10, 0.0), (0.15, 0.1), (0.25, 0.2), (0.20, 0.5)]
    assert "weight" in bars.hovertemplate and "customdata[0]" in bars.hovertemplate
    assert "customdata[1]" in bars.hovertemplate


# --- 4. high share -------------------------------------------------------------------------------

def test_high_share_bars_in_percent_sorted_descending_with_n_in_hover():
    df = pd.DataFrame({"key": ["hr", "legal", "support"], "n": [40, 10, 50],
                       "high_or_critical": [4, 5, 30], "share": [0.1, 0.5, 0.6]})
    fig = high_share_figure(df, "Use case")
    (bars,) = fig.data
    assert list(bars.x) == ["support", "legal", "hr"]
    assert [round(v, 9) for v in bars.y] == [60.0, 50.0, 10.0]
    assert [tuple(c) for c in bars.customdata] == [(30, 50), (5, 10), (4, 40)]
    assert "customdata[1]" in bars.hovertemplate and "%" in bars.hovertemplate
    assert "Use case" in fig.layout.xaxis.title.text
    assert "%" in fig.layout.yaxis.title.text


# --- 5. contribution waterfall (paper Table V) ---------------------------------------------------

TABLE_V_DIMENSIONS = {
    "F": 3 / 11, "C": 3 / 11, "U": 1.5 / 11, "O": 1.5 / 11, "S": 0.75 / 11, "P": 1.2 / 11, "H": 0.0,
}


def _table_v_add(weights):
    return math.fsum(weights[Dimension(k)] * v for k, v in TABLE_V_DIMENSIONS.items())


def test_table_v_waterfall_adds_up_to_hri_add_then_steps_to_the_floor():
    weights = default_profile().weights
    hri_add = _table_v_add(weights)
    assert hri_add == pytest.approx(0.17454545, abs=1e-8)
    floor = {"claim_id": "paper-table-v-3", "rule_id": "contradicted-high", "value": 0.70}
    fig = contribution_figure(TABLE_V_DIMENSIONS, weights, hri_add, 0.70, floor, "High", "review")
    (wf,) = fig.data
    measure, y, x = list(wf.measure), list(wf.y), list(wf.x)
    assert measure == ["relative"] * 7 + ["total", "relative", "total"]
    assert x[:7] == [f"{d.value} — {DIMENSION_NAMES[d]}" for d in DIMENSIONS]
    assert math.fsum(y[:7]) == pytest.approx(hri_add, abs=1e-12)
    assert y[0] == pytest.approx(0.25 * 3 / 11) and y[6] == 0.0
    assert x[7] == "HRI_add" and wf.text[7] == "0.175"
    assert y[8] == pytest.approx(0.70 - hri_add, abs=1e-12)
    assert "paper-table-v-3" in x[8] and "contradicted-high" in x[8]
    assert x[9] == "HRI* = 0.700 → High / review"
    assert list(wf.text[:7]) == [f"{v:.3f}" for v in y[:7]]
    assert wf.text[0] == "0.068" and wf.text[8] == "+0.525"
    # what the waterfall draws at its last bar is the sum of all relative steps = HRI*
    assert math.fsum(v for v, m in zip(y, measure, strict=True) if m == "relative") == pytest.approx(0.70, abs=1e-12)


def test_waterfall_agrees_with_the_scorer_on_table_v():
    """The same numbers straight from hri_core's own scoring of Table V, passed as a page would pass them."""
    from hri_core import parse_response, score_response

    claims = [
        {"claim_id": "paper-table-v-1", "labels": ["SUPPORTED"], "criticality": 1},
        {"claim_id": "paper-table-v-2", "labels": ["UNSUPPORTED"], "criticality": 2},
        {"claim_id": "paper-table-v-3", "labels": ["CONTRADICTED"], "dimensions": ["F", "C"], "criticality": 3},
        {"claim_id": "paper-table-v-4", "labels": ["OUTDATED"], "criticality": 2},
        {"claim_id": "paper-table-v-5", "labels": ["ACCESS_GAP"], "criticality": 2},
        {"claim_id": "paper-table-v-6", "labels": ["OUT_OF_SCOPE"], "criticality": 1},
    ]
    profile = default_profile()
    result = score_response(parse_response({"response_id": "table-v", "claims": claims}), profile,
                            datetime(2026, 1, 1, tzinfo=UTC))
    decisive = result.decisive_floor
    assert decisive is not None and decisive.claim_id == "paper-table-v-3"
    fig = contribution_figure(result.dimensions, profile.weights, result.hri_add, result.hri,
                              decisive.model_dump(), result.band, result.action)
    (wf,) = fig.data
    assert math.fsum(wf.y[:7]) == pytest.approx(result.hri_add, abs=1e-12)
    assert wf.y[8] == pytest.approx(result.hri - result.hri_add, abs=1e-12)
    assert wf.x[-1] == "HRI* = 0.700 → High / review"


def test_no_floor_step_when_the_floor_did_not_beat_hri_add():
    weights = default_profile().weights
    hri_add = _table_v_add(weights)
    low_floor = {"claim_id": "paper-table-v-3", "rule_id": "contradicted-medium", "value": 0.10}
    for floor in (low_floor, None):
        fig = contribution_figure(TABLE_V_DIMENSIONS, weights, hri_add, hri_add, floor, "Low", "release")
        (wf,) = fig.data
        assert list(wf.measure) == ["relative"] * 7 + ["total", "total"]
        assert not any("floor" in str(x) for x in wf.x)
        assert wf.x[-1] == f"HRI* = {hri_add:.3f} → Low / release"


def test_waterfall_shows_the_cap_at_one():
    weights = {d: 1 / 7 for d in DIMENSIONS}
    dims = {d: 1.0 for d in DIMENSIONS}
    # weights summing above 1 (a valid profile cannot, but HRI_add = min(1, sum) must still show the cap)
    weights_over = {d: (0.2 if d == Dimension.F else 0.8 / 6) + 0.01 for d in DIMENSIONS}
    fig = contribution_figure(dims, weights_over, 1.0, 1.0, None, "Critical", "block")
    (wf,) = fig.data
    assert "capped at 1" in wf.x
    assert math.fsum(wf.y[: list(wf.x).index("HRI_add")]) == pytest.approx(1.0, abs=1e-12)
    plain = contribution_figure(dims, weights, math.fsum(weights.values()), 1.0, None, "Critical", "block")
    assert "capped at 1" not in plain.data[0].x


# --- 6. score history ----------------------------------------------------------------------------

def test_score_history_markers_by_band_with_version_in_hover(odd_profile):
    df = pd.DataFrame({
        "run_id": ["run-2", "run-1", "run-3"],
        "profile_version": ["paper-provisional v1", "paper-provisional v1", "odd v2"],
        "as_of": pd.to_datetime(["2026-02-01", "2026-01-01", "2026-03-01"], utc=True),
        "score": [45.0, 10.0, 70.0],
        "band": ["Alert", "Calm", "Hold"],
        "action": ["review", "release", "review"],
        "hri_add": [0.45, 0.10, 0.17],
        "is_current": [False, False, True],
    })
    fig = score_history_figure(df, odd_profile.bands)
    line, *markers = fig.data
    assert list(line.y) == [10.0, 45.0, 70.0]  # sorted by as_of
    assert [t.name for t in markers] == ["Calm", "Alert", "Hold"]
    colors = band_colors([b.name for b in odd_profile.bands])
    assert all(t.marker.color == colors[t.name] for t in markers)
    hold = markers[2]
    assert hold.customdata[0][1] == "odd v2" and "Profile %{customdata[1]}" in hold.hovertemplate
    assert list(hold.marker.symbol) == ["diamond"] and list(markers[0].marker.symbol) == ["circle"]
    hlines = [s for s in fig.layout.shapes if s.type == "line"]
    assert sorted(s.y0 for s in hlines) == [12.5, 33, 61, 88]
    assert all(s.line.dash == "dot" for s in hlines)
    # timestamps with a time zone serialise (st.plotly_chart sends the figure as JSON)
    assert [t["name"] for t in json.loads(fig.to_json())["data"][1:]] == ["Calm", "Alert", "Hold"]


def test_figures_module_is_pure():
    """No Streamlit or DuckDB behind the builders (checked by source, since this session imports both)."""
    import ast
    from pathlib import Path

    tree = ast.parse(Path(figures.__file__).read_text(encoding="utf-8"))
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom) and node.module}
    assert imported <= {"__future__", "math", "collections", "typing", "pandas", "plotly", "hri_core", "ui"}
    assert {node.module for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("ui")} <= {"ui.framework.text"}
    assert not {"streamlit", "duckdb"} & imported
