"""The Evidence page's cached reads, figures and downloads.

Reads go through ``register.evidence`` (cached per arguments, cleared after every write like every read of
``ui.framework.data``). The figure builders are pure: results in, figure out, every data string through
``ui.framework.text.escape_html`` (Plotly renders a subset of HTML in names, ticks and hover text). Each figure's
data downloads as CSV through ``ui.framework.exports.to_csv_bytes`` (formula-escaped).
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from hri_core import DIMENSIONS
from hri_core.vocabulary import DIMENSION_NAMES
from register.evidence import correlation as correlation_reads
from register.evidence import criticality as criticality_reads
from register.evidence import feedback_loops as feedback_reads
from register.evidence import rag_agreement as rag_reads
from register.evidence.correlation import DimensionCorrelation
from register.evidence.feedback_loops import FeedbackLoops
from register.evidence.rag_agreement import RagAgreement
from register.scoring import register_outcomes as outcome_reads
from ui.features.figures import empty_figure
from ui.framework import data
from ui.framework.exports import to_csv_bytes
from ui.framework.text import escape_html

__all__ = ["MAX_EVENT_MARKS", "PAGE_RESAMPLES", "aggregation_comparison", "comparison_table", "correlation_figure",
           "criticality_sensitivity", "csv_download", "cv_table", "dimension_correlation", "feedback_figure",
           "feedback_loops", "four_decimals", "rag_agreement", "rag_figure", "register_outcomes", "transition_figure",
           "weight_fit", "weights_figure", "weights_table"]

MAX_EVENT_MARKS = 200  # resolution events marked on one chart; the table lists them all
PAGE_RESAMPLES = 50  # the page's bootstrap: modest, so a cold fit stays quick; the command line takes more

dimension_correlation = data.cached(correlation_reads.dimension_correlation)
criticality_sensitivity = data.cached(criticality_reads.criticality_sensitivity)
feedback_loops = data.cached(feedback_reads.feedback_loops)
rag_agreement = data.cached(rag_reads.rag_agreement)
register_outcomes = data.cached(outcome_reads.register_outcomes)  # cheap: one statement, gives the data's hash
# the heavy ones (bootstrap, cross-validation), cached per the outcome rows' hash: a rerun does not fit again
weight_fit = data.cached(outcome_reads.fit_from_register)
aggregation_comparison = data.cached(outcome_reads.compare_from_register)

_NAMES = {d.value: DIMENSION_NAMES[d] for d in DIMENSIONS}


def csv_download(frame: pd.DataFrame, name: str, key: str, label: str = "Download CSV") -> None:
    """A download button of ``frame`` as CSV (formula-escaped), named ``name``.csv."""
    st.download_button(label, to_csv_bytes(frame), file_name=f"{name}.csv", mime="text/csv", key=key,
                       icon=":material/download:")


def correlation_figure(result: DimensionCorrelation) -> go.Figure:
    """The 7 x 7 correlation matrix as a heatmap from -1 (blue) to +1 (red), undefined cells blank."""
    title = f"{result.method.capitalize()} correlation of the dimension scores ({result.answers:,} answers)"
    if result.answers < 2:
        return empty_figure(title)
    letters = list(result.matrix.columns)
    values = result.matrix.to_numpy(dtype=float)
    text = [["" if v != v else f"{v:.2f}" for v in row] for row in values]
    fig = go.Figure(go.Heatmap(
        z=values.tolist(), x=letters, y=letters, zmin=-1, zmax=1, colorscale="RdBu", reversescale=True,
        text=text, texttemplate="%{text}", customdata=[[f"{_NAMES[a]} / {_NAMES[b]}" for b in letters]
                                                       for a in letters],
        hovertemplate="%{customdata}<br>r = %{z:.3f}<extra></extra>", colorbar={"title": "r"}))
    fig.update_layout(title=title)
    fig.update_yaxes(autorange="reversed")
    return fig


def transition_figure(matrix: pd.DataFrame, title: str, what: str) -> go.Figure:
    """A from -> to transition matrix (rows from, columns to) as a heatmap of counts."""
    if matrix.empty or int(matrix.to_numpy().sum()) == 0:
        return empty_figure(title)
    names = [escape_html(n) for n in matrix.index]
    columns = [escape_html(n) for n in matrix.columns]
    fig = go.Figure(go.Heatmap(
        z=matrix.to_numpy().tolist(), x=columns, y=names, colorscale="Blues", text=matrix.to_numpy().tolist(),
        texttemplate="%{text:,}", hovertemplate="%{y} -> %{x}: %{z:,} answers<extra></extra>",
        showscale=False))
    fig.update_layout(title=title, xaxis_title=f"{what} after", yaxis_title=f"{what} before")
    fig.update_xaxes(type="category", side="bottom")
    fig.update_yaxes(type="category", autorange="reversed")
    return fig


def feedback_figure(loops: FeedbackLoops, use_case: str | None, model: str | None) -> go.Figure:
    """One scope's weekly hallucination share and s_H, the resolutions of validated feedback as dotted lines."""
    title = "Hallucination share and s_H per week"
    rows = loops.series[(loops.series["use_case"].astype(object) == use_case)
                        & (loops.series["model"].astype(object) == model)]
    if rows.empty:
        return empty_figure(title)
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=list(rows["week"]), y=rows["hallucination_share"].astype(float).tolist(),
                             mode="lines+markers", name="Hallucination share", line={"color": "#C62828"},
                             customdata=rows["answers"].astype(int).tolist(), connectgaps=False,
                             hovertemplate="week of %{x|%Y-%m-%d}<br>hallucination share %{y:.1%}"
                                           "<br>%{customdata:,} answers<extra></extra>"))
    fig.add_trace(go.Scatter(x=list(rows["week"]), y=rows["s_h"].astype(float).tolist(), mode="lines+markers",
                             name="s_H", line={"color": "#1565C0"},
                             hovertemplate="week of %{x|%Y-%m-%d}<br>s_H %{y:.3f}<extra></extra>"))
    events = loops.events[(loops.events["use_case"].astype(object) == use_case)
                          & (loops.events["model"].astype(object) == model)]
    for at in list(events["resolved_at"])[:MAX_EVENT_MARKS]:
        fig.add_vline(x=pd.Timestamp(at).timestamp() * 1000, line_dash="dot", line_color="#2E7D32")
    if len(events):  # one legend entry for the marks
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", name="Feedback resolved",
                                 line={"color": "#2E7D32", "dash": "dot"}))
    fig.update_layout(title=title, xaxis_title="Week (answer time, else import time)", yaxis_title="Share / s_H",
                      yaxis={"range": [0, 1.05]})
    return fig


def rag_figure(result: RagAgreement) -> go.Figure:
    """Each compared answer: its HRI score against RAGChecker's hallucination (percent)."""
    title = "HRI score against RAGChecker's hallucination"
    pairs = result.pairs.dropna(subset=["hallucination"])
    if pairs.empty:
        return empty_figure(title)
    fig = go.Figure(go.Scatter(
        x=(100 * pairs["hallucination"].astype(float)).tolist(), y=pairs["score"].astype(float).tolist(),
        mode="markers", marker={"color": "#455A64", "opacity": 0.7},
        customdata=[escape_html(r) for r in pairs["response_id"]],
        hovertemplate="%{customdata}<br>hallucination %{x:.1f}%<br>HRI score %{y:.1f}<extra></extra>"))
    fig.update_layout(title=title, xaxis_title="RAGChecker hallucination (%)", yaxis_title="HRI score")
    return fig


def weights_table(fit: dict) -> pd.DataFrame:
    """Per dimension: the fitted weight, its interval and the active profile's weight (``WeightFit.to_dict``)."""
    letters = list(fit["weights"])
    intervals = [fit["intervals"].get(k) or [None, None] for k in letters]
    return pd.DataFrame({"dimension": letters, "name": [_NAMES[k] for k in letters],
                         "fitted": [fit["weights"][k] for k in letters], "low": [i[0] for i in intervals],
                         "high": [i[1] for i in intervals],
                         "active": [fit["baseline"]["weights"][k] for k in letters]})


def weights_figure(fit: dict) -> go.Figure:
    """The fitted weights with their bootstrap intervals (error bars) beside the active profile's weights."""
    table = weights_table(fit)
    fitted = table["fitted"].astype(float)
    high = (table["high"].astype(float) - fitted).clip(lower=0).fillna(0)
    low = (fitted - table["low"].astype(float)).clip(lower=0).fillna(0)
    base = fit["baseline"]["profile"]
    fig = go.Figure()
    fig.add_trace(go.Bar(x=table["dimension"].tolist(), y=fitted.tolist(), name="Fitted", marker_color="#1565C0",
                         error_y={"type": "data", "array": high.tolist(), "arrayminus": low.tolist()},
                         customdata=table["name"].tolist(),
                         hovertemplate="%{customdata}: fitted %{y:.3f}<extra></extra>"))
    fig.add_trace(go.Bar(x=table["dimension"].tolist(), y=table["active"].astype(float).tolist(),
                         name=escape_html(f"Active: {base['name']} v{base['version']}"), marker_color="#90A4AE",
                         customdata=table["name"].tolist(),
                         hovertemplate="%{customdata}: active %{y:.3f}<extra></extra>"))
    level = int(round(100 * fit["level"]))
    fig.update_layout(barmode="group", yaxis={"title": "Weight", "range": [0, 1]}, xaxis_title="Dimension",
                      title=f"Weights fitted to {fit['n']:,} outcomes ({level}% bootstrap intervals, "
                            f"{fit['bootstrap']['resamples']} resamples)")
    return fig


def four_decimals(frame: pd.DataFrame) -> dict[str, Any]:
    """``st.dataframe`` column settings drawing every float column of ``frame`` at 4 decimals: a fitted weight of
    6e-18 reads 0.0000, not a cut-off row of digits (the CSV keeps the full value)."""
    return {name: st.column_config.NumberColumn(format="%.4f") for name in frame.columns
            if pd.api.types.is_float_dtype(frame[name])}


_METRICS = (("auc", "AUC"), ("average_precision", "Average precision"), ("expected_cost", "Expected cost"))


def cv_table(fit: dict) -> pd.DataFrame:
    """The cross-validated metrics of the fitted weights, the active weights and their difference, with intervals."""
    rows = []
    for name, label in (("fitted", "Fitted weights"), ("baseline", "Active weights"),
                        ("difference", "Fitted minus active")):
        row: dict = {"weights": label}
        for metric, title in _METRICS:
            interval = fit["cv"][name].get(f"{metric}_interval") or [None, None]
            row[title] = fit["cv"][name][metric]
            row[f"{title} low"], row[f"{title} high"] = interval
        rows.append(row)
    return pd.DataFrame(rows)


def comparison_table(rows: list[dict]) -> pd.DataFrame:
    """One row per aggregation model: held-out AUC, average precision, expected cost with their intervals, and each
    one's difference to the active profile's additive rule."""
    out = []
    for row in rows:
        item: dict = {"model": row["model"], "description": row["description"]}
        for metric, title in _METRICS:
            interval = row.get(f"{metric}_interval") or [None, None]
            item[title] = row[metric]
            item[f"{title} low"], item[f"{title} high"] = interval
            item[f"{title} vs active"] = row[f"{metric}_difference"]
        out.append(item)
    return pd.DataFrame(out)
