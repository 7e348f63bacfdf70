"""Plotly figure builders of the console.

Pages call these with the DataFrames the data layer returns and hand the result to
``st.plotly_chart``; nothing here reads the database or Streamlit state, so each builder is a pure
function tested on its traces (``tests/ui/test_figures.py``). Band thresholds, band names and label
contributions always come in from the profile: this module holds colours, never a domain number.

Every builder returns a ``plotly.graph_objects.Figure``; an empty (or ``None``) frame gives a figure
whose only content is the annotation ``NO_DATA_TEXT``, so a page never has to special-case "no rows".
Plotly renders a subset of HTML in names, labels and hover text (``<a href>`` included), so every
string that comes from data or a profile goes through ``ui.framework.text.escape_html`` first.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from hri_core.profile import band_of
from hri_core.vocabulary import DIMENSION_NAMES, DIMENSIONS, Dimension
from ui.framework.text import escape_html

__all__ = [
    "BAND_ANCHOR_COLORS", "NO_DATA_TEXT", "OTHER_COLOR", "PLOT_CONFIG", "band_colors", "band_mix_figure",
    "contribution_figure", "dimension_contribution_figure", "dimension_label", "empty_figure", "high_share_figure",
    "score_histogram_figure", "score_history_figure",
]

NO_DATA_TEXT = "No data for these filters"
# The chart toolbar of every page: no Plotly logo, PNG downloads at twice the size
PLOT_CONFIG = {"displaylogo": False, "toImageButtonOptions": {"format": "png", "scale": 2}}

# Colour ramp of the bands, from the lowest band to the highest: green, amber, orange-red, dark red.
# Four bands take these exactly; other counts are interpolated along the same ramp.
BAND_ANCHOR_COLORS: tuple[str, ...] = ("#2E7D32", "#FFB300", "#F4511E", "#8B0000")
# Anything without a colour of its own (a band of an older profile version, an unknown label).
OTHER_COLOR = "#9E9E9E"

_WATERFALL_INCREASE = "#EF6C00"
_WATERFALL_DECREASE = "#2E7D32"
_WATERFALL_TOTAL = "#37474F"
_BAR_COLOR = "#455A64"


# --- shared helpers --------------------------------------------------------------------------------

def empty_figure(title: str = "") -> go.Figure:
    """A figure that only says ``NO_DATA_TEXT`` (axes hidden), keeping the chart's title."""
    fig = go.Figure()
    fig.update_layout(
        title=title,
        xaxis={"visible": False},
        yaxis={"visible": False},
        annotations=[{
            "text": NO_DATA_TEXT, "xref": "paper", "yref": "paper", "x": 0.5, "y": 0.5,
            "showarrow": False, "font": {"size": 16},
        }],
    )
    return fig


def _is_empty(df: pd.DataFrame | None) -> bool:
    return df is None or len(df) == 0


def _require(df: pd.DataFrame, columns: Sequence[str], builder: str) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(f"{builder}: missing column(s) {', '.join(missing)}; got {', '.join(map(str, df.columns))}")


def _text(value: Any) -> str:
    """Plain string of a label, band or dimension (enums give their value)."""
    return str(getattr(value, "value", value))


def _hex_to_rgb(color: str) -> tuple[int, int, int]:
    color = color.lstrip("#")
    return int(color[0:2], 16), int(color[2:4], 16), int(color[4:6], 16)


def _rgb_to_hex(rgb: Iterable[float]) -> str:
    return "#" + "".join(f"{max(0, min(255, round(c))):02X}" for c in rgb)


def _ramp(position: float) -> str:
    """Colour at ``position`` in [0, 1] along the band ramp (linear in RGB between anchors)."""
    scaled = position * (len(BAND_ANCHOR_COLORS) - 1)
    low = min(int(math.floor(scaled)), len(BAND_ANCHOR_COLORS) - 1)
    high = min(low + 1, len(BAND_ANCHOR_COLORS) - 1)
    frac = scaled - low
    if frac < 1e-12 or low == high:
        return BAND_ANCHOR_COLORS[low]
    a, b = _hex_to_rgb(BAND_ANCHOR_COLORS[low]), _hex_to_rgb(BAND_ANCHOR_COLORS[high])
    return _rgb_to_hex(x + (y - x) * frac for x, y in zip(a, b, strict=True))


def band_colors(band_names: Sequence[str]) -> dict[str, str]:
    """Colour of each band, by its position in the profile's band order (lowest risk first).

    Four bands get green, amber, orange-red and dark red; other counts are spread evenly over the
    same ramp (the first band is always green and the last always dark red; one band is green).
    """
    names = [_text(n) for n in band_names]
    if len(names) == 1:
        return {names[0]: BAND_ANCHOR_COLORS[0]}
    return {name: _ramp(i / (len(names) - 1)) for i, name in enumerate(names)}


def _band_order(present: Iterable[Any], band_names: Sequence[str]) -> list[str]:
    """Profile bands that occur in the data, in profile order, then any other band seen (first-seen order)."""
    seen = list(dict.fromkeys(_text(b) for b in present))
    known = [_text(b) for b in band_names]
    return [b for b in known if b in seen] + [b for b in seen if b not in known]


def _band_of(score: float, bands: Sequence[Any]) -> str:
    """Band name of a 0-100 score: inclusive uppers compared at 9 decimals, as the profile does."""
    return band_of(float(score), bands).name


def dimension_label(dimension: Any) -> str:
    """``"F — Factual inconsistency"`` for a dimension letter (unknown letters are shown as given)."""
    letter = _text(dimension)
    try:
        return f"{letter} — {DIMENSION_NAMES[Dimension(letter)]}"
    except ValueError:
        return letter


def _attr(obj: Any, key: str, default: Any = None) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(key, default)
    return getattr(obj, key, default)


# --- 1. band mix per week --------------------------------------------------------------------------

def band_mix_figure(df: pd.DataFrame | None, band_names: Sequence[str]) -> go.Figure:
    """Stacked bars of responses per week and band; one trace per band present, in profile band order.

    ``df`` has columns ``week, band, n``. Bands not in ``band_names`` (e.g. from an older profile
    version) are still drawn, after the profile's bands, in grey.
    """
    title = "Band mix per week"
    if _is_empty(df):
        return empty_figure(title)
    _require(df, ("week", "band", "n"), "band_mix_figure")
    data = df.assign(band=df["band"].map(_text))
    counts = data.groupby(["week", "band"], sort=False)["n"].sum()
    weeks = sorted(data["week"].unique())
    colors = band_colors(band_names)
    fig = go.Figure()
    for band in _band_order(data["band"], band_names):
        y = [int(counts.get((week, band), 0)) for week in weeks]
        fig.add_trace(go.Bar(
            x=weeks, y=y, name=escape_html(band), marker_color=colors.get(band, OTHER_COLOR),
            hovertemplate=f"Week %{{x}}<br>{escape_html(band)}: %{{y:,}} responses<extra></extra>",
        ))
    fig.update_layout(title=title, barmode="stack", xaxis_title="Week", yaxis_title="Responses",
                      legend_title_text="Band")
    return fig


# --- 2. score histogram ----------------------------------------------------------------------------

def score_histogram_figure(df: pd.DataFrame | None, bands: Sequence[Any]) -> go.Figure:
    """Bars of response counts over 0-100, each in the colour of the band it lies in, with a dashed line at
    each band's upper bound except the last (the end of the scale). ``bands`` is the profile's ``Band`` tuple.

    ``df`` has columns ``bin_start, bin_end, n`` with bins read like bands: ``(start, end]`` (the first
    also takes 0) and aligned to the band bounds (``hri_core.calibration.score_bins``), so a bar's band is
    the band of its upper end: a score of exactly 50 is counted, and coloured, in the band ending at 50.
    """
    title = "Score distribution"
    if _is_empty(df):
        return empty_figure(title)
    _require(df, ("bin_start", "bin_end", "n"), "score_histogram_figure")
    data = df.sort_values("bin_start")
    starts = data["bin_start"].astype(float).tolist()
    ends = data["bin_end"].astype(float).tolist()
    colors = band_colors([b.name for b in bands])
    bar_bands = [_band_of(e, bands) for e in ends] if bands else [""] * len(ends)
    fig = go.Figure(go.Bar(
        x=[(s + e) / 2 for s, e in zip(starts, ends, strict=True)], y=data["n"].tolist(),
        width=[e - s for s, e in zip(starts, ends, strict=True)],
        marker_color=[colors.get(b, OTHER_COLOR) for b in bar_bands],
        customdata=list(zip(starts, ends, [escape_html(b) for b in bar_bands], strict=True)), name="Responses",
        showlegend=False,
        hovertemplate="Score above %{customdata[0]:g} up to %{customdata[1]:g} (%{customdata[2]})<br>"
                      "%{y:,} responses<extra></extra>",
    ))
    _band_bounds(fig, bands, across="x", dash="dash", color="#424242")  # labelled at the top, left of the line
    fig.update_layout(title=title, xaxis_title="HRI score (0-100)", yaxis_title="Responses", bargap=0.05)
    fig.update_xaxes(range=[0, 100])
    return fig


# --- 3. mean weighted contribution per dimension ---------------------------------------------------

def dimension_contribution_figure(df: pd.DataFrame | None) -> go.Figure:
    """Horizontal bars of the mean weighted contribution w_k * s_k per dimension, largest at the top.

    ``df`` has columns ``dimension, mean_score, weight, mean_weighted``; the hover shows the weight
    and the mean dimension score.
    """
    title = "Mean weighted contribution per dimension"
    if _is_empty(df):
        return empty_figure(title)
    _require(df, ("dimension", "mean_score", "weight", "mean_weighted"), "dimension_contribution_figure")
    # Ascending, because a horizontal bar chart draws its first category at the bottom.
    data = df.sort_values("mean_weighted", kind="stable")
    fig = go.Figure(go.Bar(
        x=data["mean_weighted"].astype(float).tolist(),
        y=[dimension_label(d) for d in data["dimension"]],
        orientation="h", marker_color=_BAR_COLOR, showlegend=False,
        customdata=list(zip(data["weight"].astype(float), data["mean_score"].astype(float), strict=True)),
        hovertemplate="%{y}<br>mean w·s = %{x:.4f}<br>weight w = %{customdata[0]:.3f}"
                      "<br>mean score s = %{customdata[1]:.4f}<extra></extra>",
    ))
    fig.update_layout(title=title, xaxis_title="Mean weighted contribution w_k · s_k", yaxis_title="Dimension")
    return fig


# --- 4. share of High or Critical per key ----------------------------------------------------------

def high_share_figure(df: pd.DataFrame | None, by_label: str, *, share_label: str = "High or Critical") -> go.Figure:
    """Bars of the share (in %) of responses in the top bands per ``key``, highest first, ``n`` in hover.

    ``df`` has columns ``key, n, high_or_critical, share`` with ``share`` a fraction in [0, 1].
    ``by_label`` names what ``key`` is (e.g. "Use case"); ``share_label`` names the bands counted.
    """
    title = f"Share {share_label} by {by_label.lower()}"
    if _is_empty(df):
        return empty_figure(title)
    _require(df, ("key", "n", "high_or_critical", "share"), "high_share_figure")
    data = df.sort_values(["share", "n"], ascending=[False, False], kind="stable")
    fig = go.Figure(go.Bar(
        x=[escape_html(k) for k in data["key"]],
        y=(data["share"].astype(float) * 100).tolist(),
        customdata=list(zip(data["high_or_critical"].astype(int), data["n"].astype(int), strict=True)),
        marker_color=_BAR_COLOR, showlegend=False,
        hovertemplate=f"{by_label} %{{x}}<br>{share_label}: %{{y:.1f}}%"
                      "<br>%{customdata[0]:,} of %{customdata[1]:,} responses<extra></extra>",
    ))
    fig.update_layout(title=title, xaxis_title=by_label, yaxis_title=f"Share {share_label} (%)")
    fig.update_xaxes(type="category")
    fig.update_yaxes(ticksuffix="%", rangemode="tozero")
    return fig


# --- 5. one response: from dimensions to HRI* ------------------------------------------------------

def contribution_figure(
    dimensions: Mapping[Any, float],
    weights: Mapping[Any, float],
    hri_add: float,
    hri: float,
    floor: Mapping[str, Any] | None,
    band: str,
    action: str,
) -> go.Figure:
    """Waterfall of one score on the 0-1 scale: w_k * s_k per dimension, the total HRI_add, then (when a
    floor beat HRI_add) the step up to HRI* named after the floor rule and claim, and the final
    ``HRI* = x → band / action`` bar.

    ``floor`` is the decisive floor, ``{"claim_id", "rule_id", "value"}`` (a ``FiredFloor`` works too).
    Should the weighted sum exceed 1, a "capped at 1" step brings the total down to ``hri_add``.
    """
    title = "From dimensions to HRI*"
    if not dimensions:
        return empty_figure(title)
    by_letter = {_text(k): float(v) for k, v in dimensions.items()}
    weight_of = {_text(k): float(v) for k, v in weights.items()}
    known = [d.value for d in DIMENSIONS]
    letters = [d for d in known if d in by_letter] + [d for d in by_letter if d not in known]

    x: list[str] = []
    y: list[float] = []
    measure: list[str] = []
    text: list[str] = []
    hover: list[str] = []
    for letter in letters:
        w, s = weight_of.get(letter, 0.0), by_letter[letter]
        value = w * s
        x.append(dimension_label(letter))
        y.append(value)
        measure.append("relative")
        text.append(f"{value:.3f}")
        hover.append(f"{dimension_label(letter)}<br>w = {w:.3f} × s = {s:.3f} → {value:.3f}")
    weighted_sum = math.fsum(y)
    if weighted_sum - hri_add > 1e-12:  # HRI_add = min(1, sum): show the cap as its own step
        x.append("capped at 1")
        y.append(hri_add - weighted_sum)
        measure.append("relative")
        text.append(f"{hri_add - weighted_sum:.3f}")
        hover.append(f"sum {weighted_sum:.3f} capped at 1")
    x.append("HRI_add")
    y.append(0.0)
    measure.append("total")
    text.append(f"{hri_add:.3f}")
    hover.append(f"Additive score HRI_add = {hri_add:.3f}")

    floor_value = _attr(floor, "value") if floor is not None else None
    if floor_value is not None and float(floor_value) > hri_add:
        rule_id, claim_id = escape_html(_attr(floor, "rule_id", "?")), escape_html(_attr(floor, "claim_id", "?"))
        step = hri - hri_add
        x.append(f"floor {rule_id} ({float(floor_value):.3f})<br>claim {claim_id}")
        y.append(step)
        measure.append("relative")
        text.append(f"+{step:.3f}")
        hover.append(f"Safety floor {rule_id} on claim {claim_id}<br>raises {hri_add:.3f} to {hri:.3f}")
    band, action = escape_html(band), escape_html(action)
    x.append(f"HRI* = {hri:.3f} → {band} / {action}")
    y.append(0.0)
    measure.append("total")
    text.append(f"{hri:.3f}")
    hover.append(f"HRI* = {hri:.3f} (score {100 * hri:.1f})<br>band {band}, action {action}")

    fig = go.Figure(go.Waterfall(
        x=x, y=y, measure=measure, text=text, textposition="outside", hovertext=hover,
        hovertemplate="%{hovertext}<extra></extra>", showlegend=False,
        increasing={"marker": {"color": _WATERFALL_INCREASE}},
        decreasing={"marker": {"color": _WATERFALL_DECREASE}},
        totals={"marker": {"color": _WATERFALL_TOTAL}},
        connector={"line": {"color": "#9E9E9E", "dash": "dot"}},
    ))
    top = max(hri, hri_add, weighted_sum)
    fig.update_layout(title=title, xaxis_title="", yaxis_title="Contribution (0-1 scale)")
    fig.update_yaxes(range=[0, max(0.1, top * 1.15)])
    return fig


# --- 6. score history of one response --------------------------------------------------------------

def _band_bounds(fig: go.Figure, bands: Sequence[Any], *, across: str, dash: str, color: str) -> None:
    """A line at each band's upper bound except the last (the top of the scale), labelled "name ≤ bound".

    ``across="x"``: vertical lines at x = bound (a histogram of scores), labelled at the top, left of the line;
    ``"y"``: horizontal lines at y = bound (a score over time), labelled at the right end, under the line. What
    ``add_vline`` / ``add_hline`` with ``annotation_position`` "top left" / "bottom right" draw, written in one
    layout update: those rebuild the layout once per line, most of the figure's build time on every page run."""
    shapes, labels = [], []
    for band in list(bands)[:-1]:
        at, text = float(band.upper), f"{escape_html(band.name)} ≤ {band.upper:g}"
        line = {"type": "line", "line": {"color": color, "dash": dash, "width": 1}}
        if across == "x":
            shapes.append({**line, "xref": "x", "x0": at, "x1": at, "yref": "y domain", "y0": 0, "y1": 1})
            labels.append({"text": text, "showarrow": False, "xref": "x", "x": at, "xanchor": "right",
                           "yref": "y domain", "y": 1, "yanchor": "top"})
        else:
            shapes.append({**line, "xref": "x domain", "x0": 0, "x1": 1, "yref": "y", "y0": at, "y1": at})
            labels.append({"text": text, "showarrow": False, "xref": "x domain", "x": 1, "xanchor": "right",
                           "yref": "y", "y": at, "yanchor": "top"})
    fig.update_layout(shapes=[*fig.layout.shapes, *shapes], annotations=[*fig.layout.annotations, *labels])


def score_history_figure(df: pd.DataFrame | None, bands: Sequence[Any]) -> go.Figure:
    """Score of one response per scoring run over ``as_of``: a line, markers coloured by band (the
    current score drawn as a larger diamond), profile version in the hover, and a dotted line at each
    band's upper bound except the last (the top of the scale).

    ``df`` has columns ``run_id, profile_version, as_of, score, band, action, hri_add, is_current``.
    """
    title = "Score history"
    if _is_empty(df):
        return empty_figure(title)
    _require(df, ("run_id", "profile_version", "as_of", "score", "band", "action", "hri_add", "is_current"),
             "score_history_figure")
    data = df.assign(band=df["band"].map(_text)).sort_values("as_of", kind="stable")
    colors = band_colors([b.name for b in bands])
    fig = go.Figure(go.Scatter(
        x=data["as_of"].tolist(), y=data["score"].astype(float).tolist(), mode="lines",
        line={"color": "#B0BEC5"}, hoverinfo="skip", showlegend=False, name="score",
    ))
    for band in _band_order(data["band"], [b.name for b in bands]):
        rows = data[data["band"] == band]
        current = rows["is_current"].astype(bool).tolist()
        fig.add_trace(go.Scatter(
            x=rows["as_of"].tolist(), y=rows["score"].astype(float).tolist(), mode="markers", name=escape_html(band),
            marker={"color": colors.get(band, OTHER_COLOR), "size": [14 if c else 9 for c in current],
                    "symbol": ["diamond" if c else "circle" for c in current],
                    "line": {"color": "#212121", "width": 1}},
            customdata=list(zip(rows["run_id"].astype(str), rows["profile_version"].astype(str),
                                rows["action"].astype(str), rows["hri_add"].astype(float),
                                ["current" if c else "superseded" for c in current], strict=True)),
            hovertemplate=("Run %{customdata[0]} (%{customdata[4]})<br>As of %{x}<br>"
                           f"Score %{{y:.1f}} → {escape_html(band)} / %{{customdata[2]}}<br>"
                           "HRI_add %{customdata[3]:.3f}<br>Profile %{customdata[1]}<extra></extra>"),
        ))
    _band_bounds(fig, bands, across="y", dash="dot", color="#616161")  # labelled at the right, under the line
    fig.update_layout(title=title, xaxis_title="Scored as of", yaxis_title="HRI score (0-100)",
                      legend_title_text="Band")
    fig.update_yaxes(range=[0, 105])
    return fig
