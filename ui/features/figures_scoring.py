"""Plotly figure builders of the scoring pages: impact preview, elicitation and calibration.

Pure functions (no database, no Streamlit state) called by ``pages/profiles.py``,
``pages/elicitation.py`` and ``pages/calibration.py``, tested on their traces. Band names and bounds
come in from the profile; this module holds colours and layout only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from hri_core.profile import SCORE_DECIMALS
from ui.features.figures import band_colors, dimension_label, empty_figure

__all__ = ["calibration_figure", "delphi_spread_figure", "distribution_shift_figure", "pr_figure", "roc_figure",
           "transition_matrix", "transition_heatmap", "weights_figure"]

OLD_COLOR = "#90A4AE"
NEW_COLOR = "#1E88E5"


def _layout(fig: go.Figure, title: str, x: str, y: str) -> go.Figure:
    fig.update_layout(title=title, xaxis_title=x, yaxis_title=y, margin=dict(l=40, r=20, t=50, b=40), height=360)
    return fig


def transition_matrix(transitions: pd.DataFrame | None, band_names: Sequence[str]) -> pd.DataFrame:
    """The transition counts as a square table: rows = band under the active profile, columns = draft."""
    names = list(band_names)
    if transitions is not None and not transitions.empty:
        extra = [b for b in pd.unique(pd.concat([transitions.old_band, transitions.new_band])) if b not in names]
        names += sorted(extra)
    table = pd.DataFrame(0, index=names, columns=names, dtype="int64")
    if transitions is not None:
        for old, new, count in transitions[["old_band", "new_band", "responses"]].itertuples(index=False):
            table.loc[old, new] += int(count)
    table.index.name = "active \\ draft"
    return table


def transition_heatmap(transitions: pd.DataFrame | None, band_names: Sequence[str]) -> go.Figure:
    """Heatmap of the band transition matrix with the counts written in the cells."""
    if transitions is None or transitions.empty:
        return empty_figure("Band transitions")
    table = transition_matrix(transitions, band_names)
    fig = go.Figure(go.Heatmap(z=table.values, x=list(table.columns), y=list(table.index), colorscale="Blues",
                               text=[[f"{v:,}" for v in row] for row in table.values], texttemplate="%{text}",
                               hovertemplate="%{y} → %{x}: %{z:,}<extra></extra>", showscale=False))
    fig.update_yaxes(autorange="reversed")
    return _layout(fig, "Band transitions (rows: active, columns: draft)", "band under the draft",
                   "band under the active profile")


def distribution_shift_figure(histogram: pd.DataFrame | None) -> go.Figure:
    """Score distribution under the active profile and under the draft, as overlaid bars per bin."""
    if histogram is None or histogram.empty:
        return empty_figure("HRI distribution")
    labels = [f"{lo:g}–{hi:g}" for lo, hi in zip(histogram.bin_lower, histogram.bin_upper, strict=True)]
    fig = go.Figure([go.Bar(name="active", x=labels, y=histogram.old, marker_color=OLD_COLOR),
                     go.Bar(name="draft", x=labels, y=histogram.new, marker_color=NEW_COLOR)])
    fig.update_layout(barmode="group", legend=dict(orientation="h", y=1.1))
    return _layout(fig, "HRI distribution: active vs draft", "HRI score", "responses")


def weights_figure(weights: Mapping[Any, float], compare: Mapping[Any, float] | None = None, *,
                   names: tuple[str, str] = ("draft", "active")) -> go.Figure:
    """Bar chart of dimension weights (optionally next to another profile's)."""
    if not weights:
        return empty_figure("Weights")
    keys = [str(getattr(k, "value", k)) for k in weights]
    fig = go.Figure([go.Bar(name=names[0], x=[dimension_label(k) for k in keys], y=list(weights.values()),
                            marker_color=NEW_COLOR)])
    if compare:
        lookup = {str(getattr(k, "value", k)): v for k, v in compare.items()}
        fig.add_bar(name=names[1], x=[dimension_label(k) for k in keys], y=[lookup.get(k, 0.0) for k in keys],
                    marker_color=OLD_COLOR)
    fig.update_layout(barmode="group")
    return _layout(fig, "Dimension weights", "dimension", "weight")


def delphi_spread_figure(summary: Mapping[str, Any] | None) -> go.Figure:
    """Median with the interquartile range per dimension of a closed Delphi round."""
    if not summary:
        return empty_figure("Delphi round")
    spread = summary["spread"]
    dims = list(spread)
    med = [spread[d]["median"] for d in dims]
    fig = go.Figure(go.Scatter(
        x=[dimension_label(d) for d in dims], y=med, mode="markers", marker=dict(size=10, color=NEW_COLOR),
        error_y=dict(type="data", symmetric=False, array=[spread[d]["q3"] - spread[d]["median"] for d in dims],
                     arrayminus=[spread[d]["median"] - spread[d]["q1"] for d in dims]),
        name="median (IQR)"))
    return _layout(fig, f"Round {summary.get('round', '')}: median and IQR per dimension", "dimension", "weight")


def roc_figure(curve) -> go.Figure:
    """ROC curve (``hri_core.calibration.RocCurve``) with the chance diagonal and the AUC in the title."""
    if curve is None:
        return empty_figure("ROC")
    fig = go.Figure(go.Scatter(x=[p.fpr for p in curve.points], y=[p.tpr for p in curve.points], mode="lines",
                               name="HRI", line=dict(color=NEW_COLOR)))
    fig.add_scatter(x=[0, 1], y=[0, 1], mode="lines", name="chance", line=dict(dash="dot", color=OLD_COLOR))
    return _layout(fig, f"ROC — AUC {curve.auc:.3f}", "false positive rate", "true positive rate")


def pr_figure(curve) -> go.Figure:
    """Precision-recall curve (``hri_core.calibration.PrCurve``) with the prevalence line."""
    if curve is None:
        return empty_figure("Precision-recall")
    fig = go.Figure(go.Scatter(x=[p.recall for p in curve.points], y=[p.precision for p in curve.points],
                               mode="lines+markers", name="HRI", line=dict(color=NEW_COLOR)))
    fig.add_scatter(x=[0, 1], y=[curve.prevalence] * 2, mode="lines", name="prevalence",
                    line=dict(dash="dot", color=OLD_COLOR))
    return _layout(fig, f"Precision-recall — average precision {curve.average_precision:.3f}", "recall",
                   "precision")


def calibration_figure(bins: Sequence[Any] | None, bands: Sequence[Any] = ()) -> go.Figure:
    """Observed bad-answer rate per score bin (``CalibrationBin`` rows), counts in the hover; each bar in the
    colour of the profile band it lies in (``bands``: the profile's ``Band`` tuple; bins are read like bands,
    so a bin's band is the band of its upper bound)."""
    rows = [b for b in bins or () if b.count]
    if not rows:
        return empty_figure("Calibration")
    colors = band_colors([b.name for b in bands]) if bands else {}

    def band_of(upper: float) -> str | None:
        return next((b.name for b in bands if round(upper, SCORE_DECIMALS) <= b.upper), None)

    fig = go.Figure(go.Bar(
        x=[f"{b.lower:g}–{b.upper:g}" for b in rows], y=[b.bad_rate for b in rows],
        customdata=[[b.count, b.bad] for b in rows],
        hovertemplate="%{x}: %{y:.0%} bad (%{customdata[1]} of %{customdata[0]})<extra></extra>",
        marker_color=[colors.get(band_of(b.upper), NEW_COLOR) for b in rows] if colors else NEW_COLOR))
    fig.update_yaxes(range=[0, 1], tickformat=".0%")
    return _layout(fig, "Observed bad-answer rate per score bin", "HRI score bin", "bad answers")
