"""The RAG metrics page's cached reads, tables and Plotly figures.

Reads go through ``register.console.rag`` (cached per filters, cleared after every write like every
read of ``ui.framework.data``). The figure builders are pure: frames in, figure out, every data string through
``ui.framework.text.escape_html`` (Plotly renders a subset of HTML in names, ticks and hover text).
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import plotly.graph_objects as go

from register.console import rag
from ui.features.figures import band_colors, empty_figure
from ui.framework import data
from ui.framework.text import escape_html

__all__ = ["GROUP_LABELS", "METRIC_HELP", "METRIC_LABELS", "by_category", "category_figure", "group_bars_figure",
           "hri_vs_hallucination", "metric_label", "metrics_by", "scatter_figure", "summary", "trend",
           "trend_figure", "wide_table"]

# RAGChecker's metric names as its paper and report words them
METRIC_LABELS: dict[str, str] = {
    "precision": "Precision", "recall": "Recall", "f1": "F1",
    "claim_recall": "Claim recall", "context_precision": "Context precision",
    "context_utilization": "Context utilisation",
    "noise_sensitivity_in_relevant": "Noise, relevant",
    "noise_sensitivity_in_irrelevant": "Noise, irrelevant",
    "hallucination": "Hallucination", "self_knowledge": "Self-knowledge", "faithfulness": "Faithfulness",
    "factual_precision": "Factual precision (FActScore)",
}
GROUP_LABELS = {"batch": "Import batch", "model": "Model", "use_case": "Use case"}
_LINE_COLORS = ("#1565C0", "#EF6C00", "#2E7D32", "#6A1B9A", "#C62828", "#00838F", "#5D4037", "#455A64")


# what each metric counts (RAGChecker's definitions, hri_core.ragmetrics), shown as help
METRIC_HELP: dict[str, str] = {
    "precision": "Share of the answer's claims that the target answer entails (correct claims).",
    "recall": "Share of the target answer's claims that the answer entails.",
    "f1": "Harmonic mean of precision and recall, per answer, then averaged.",
    "claim_recall": "Share of the target answer's claims that some retrieved chunk entails.",
    "context_precision": "Share of retrieved chunks that entail at least one target claim (relevant chunks).",
    "context_utilization": "Of the target claims the chunks hold, the share the answer states.",
    "noise_sensitivity_in_relevant": "Noise sensitivity in relevant chunks: incorrect claims entailed by a "
                                     "relevant chunk.",
    "noise_sensitivity_in_irrelevant": "Noise sensitivity in irrelevant chunks: incorrect claims entailed only by "
                                       "irrelevant chunks.",
    "hallucination": "Claims neither entailed by the retrieved chunks nor correct.",
    "self_knowledge": "Claims not in the chunks but correct (from the model's own knowledge).",
    "faithfulness": "Claims entailed by some retrieved chunk, correct or not.",
}


def metric_label(name: str) -> str:
    """A metric's display name (a RAGAS column keeps its own name)."""
    return METRIC_LABELS.get(name, name)


# --- cached reads ------------------------------------------------------------------------------------

summary = data.cached(rag.summary)
metrics_by = data.cached(rag.metrics_by)
trend = data.cached(rag.trend)
by_category = data.cached(rag.by_category)
hri_vs_hallucination = data.cached(rag.hri_vs_hallucination)


# --- tables ------------------------------------------------------------------------------------------

def wide_table(long: pd.DataFrame, frameworks: Sequence[str], by_label: str) -> pd.DataFrame:
    """``metrics_by``'s long rows of ``frameworks`` as one row per group and one column per metric (in
    RAGChecker's order, then factual precision, then RAGAS columns by name), with the responses counted.
    Call it for RAGAS apart from the others: a RAGAS column may share a RAGChecker metric's name."""
    rows = long[long["framework"].isin(frameworks)]
    if rows.empty:
        return pd.DataFrame(columns=[by_label])
    ragas = "ragas" in frameworks
    order = [] if ragas else [*rag.METRICS, "factual_precision"]  # RAGAS columns by name only
    names = sorted(set(rows["metric"]), key=lambda m: (order.index(m) if m in order else len(order), m))
    wide = rows.pivot_table(index="key", columns="metric", values="value", aggfunc="first")[names]
    # a RAGAS column keeps its name: RAGAS's faithfulness is not RAGChecker's (another definition)
    wide.columns = [name if ragas else metric_label(name) for name in names]
    counts = rows[rows["framework"] != "factscore"].groupby("key")["n"].max()
    wide.insert(0, "Responses", counts.reindex(wide.index).fillna(0).astype(int))
    return wide.reset_index().rename(columns={"key": by_label})


# --- figures -----------------------------------------------------------------------------------------

def group_bars_figure(long: pd.DataFrame | None, metrics: Sequence[str], by_label: str) -> go.Figure:
    """Grouped bars: one bar group per group key, one bar per RAGChecker metric (percent)."""
    title = f"RAGChecker metrics by {by_label.lower()}"
    rows = None if long is None else long[(long["framework"] == "ragchecker") & long["metric"].isin(metrics)]
    if rows is None or rows.empty:
        return empty_figure(title)
    fig = go.Figure()
    for index, metric in enumerate(metrics):
        part = rows[rows["metric"] == metric]
        fig.add_trace(go.Bar(
            x=[escape_html(k) for k in part["key"]], y=part["value"].astype(float).tolist(),
            name=metric_label(metric), marker_color=_LINE_COLORS[index % len(_LINE_COLORS)],
            customdata=part["n"].astype(int).tolist(),
            hovertemplate=f"%{{x}}<br>{metric_label(metric)}: %{{y:.1f}}%<br>%{{customdata:,}} responses"
                          "<extra></extra>"))
    fig.update_layout(title=title, barmode="group", xaxis_title=by_label, yaxis_title="Percent of claims")
    fig.update_xaxes(type="category")
    fig.update_yaxes(ticksuffix="%", rangemode="tozero")
    return fig


def trend_figure(df: pd.DataFrame | None, metric: str, *, percent: bool = True) -> go.Figure:
    """One line per model of ``metric`` per week (``trend``'s columns week, model, n, value); ``percent``
    for a RAGChecker metric, else a RAGAS column (a mean score, named as imported)."""
    label = metric_label(metric) if percent else f"RAGAS {metric}"
    title = f"{label} per week"
    if df is None or df.empty:
        return empty_figure(title)
    fig = go.Figure()
    unit = "%" if percent else ""
    for index, (model, part) in enumerate(df.groupby("model", sort=True)):
        fig.add_trace(go.Scatter(
            x=list(part["week"]), y=part["value"].astype(float).tolist(), mode="lines+markers",
            name=escape_html(model), line={"color": _LINE_COLORS[index % len(_LINE_COLORS)]},
            customdata=part["n"].astype(int).tolist(),
            hovertemplate=f"week of %{{x|%Y-%m-%d}}<br>{escape_html(label)}: %{{y:.3g}}{unit}"
                          "<br>%{customdata:,} responses<extra></extra>"))
    fig.update_layout(title=escape_html(title), xaxis_title="Week (answer time, else import time)",
                      yaxis_title=escape_html(label) + (" (%)" if percent else ""))
    fig.update_xaxes(dtick=7 * 86_400_000, tickformat="%b %d, %Y")  # one tick per week (the Mondays)
    if percent:
        fig.update_yaxes(ticksuffix="%", rangemode="tozero")
    return fig


def category_figure(df: pd.DataFrame | None) -> go.Figure:
    """Bars of hallucination per question category, critical categories in dark red."""
    title = "Hallucination by question category"
    if df is None or df.empty:
        return empty_figure(title)
    fig = go.Figure(go.Bar(
        x=[escape_html(c) for c in df["category"]], y=df["hallucination"].astype(float).tolist(),
        marker_color=["#8B0000" if critical else "#90A4AE" for critical in df["critical"]],
        customdata=list(zip(df["n"].astype(int), ["critical" if c else "not critical" for c in df["critical"]],
                            strict=True)),
        hovertemplate="%{x} (%{customdata[1]})<br>Hallucination: %{y:.1f}%<br>%{customdata[0]:,} responses"
                      "<extra></extra>", showlegend=False))
    fig.update_layout(title=title, xaxis_title="Category of the question's claims", yaxis_title="Hallucination (%)")
    fig.update_xaxes(type="category")
    fig.update_yaxes(ticksuffix="%", rangemode="tozero")
    return fig


def scatter_figure(df: pd.DataFrame | None, band_names: Sequence[str]) -> go.Figure:
    """HRI score (x) against RAGChecker hallucination (y) per response, coloured by band; critical
    questions drawn as diamonds. Where the two disagree is what the chart is for: high hallucination
    at a low score (the labels missed it) or a high score with no hallucination (another dimension)."""
    title = "HRI score against hallucination, per response"
    if df is None or df.empty:
        return empty_figure(title)
    colors = band_colors(band_names)
    fig = go.Figure()
    for band, part in df.groupby("band", sort=False):
        fig.add_trace(go.Scatter(
            x=part["score"].astype(float).tolist(), y=part["hallucination"].astype(float).tolist(),
            mode="markers", name=escape_html(band),
            marker={"color": colors.get(band, "#9E9E9E"), "size": 10, "line": {"width": 1, "color": "#263238"},
                    "symbol": ["diamond" if c else "circle" for c in part["critical"]]},
            customdata=list(zip([escape_html(r) for r in part["response_id"]],
                                [escape_html(m) for m in part["model"]],
                                part["faithfulness"].astype(float), strict=True)),
            hovertemplate="%{customdata[0]}<br>model %{customdata[1]}<br>HRI %{x:.1f}<br>"
                          "Hallucination %{y:.1f}%<br>Faithfulness %{customdata[2]:.1f}%<extra></extra>"))
    order = [escape_html(b) for b in band_names]
    fig.data = tuple(sorted(fig.data, key=lambda t: order.index(t.name) if t.name in order else len(order)))
    fig.update_layout(title=title, xaxis_title="HRI score (0-100)", yaxis_title="Hallucination (% of claims)",
                      legend_title_text="Band")
    fig.update_xaxes(range=[-2, 102])
    fig.update_yaxes(ticksuffix="%", range=[-3, 103])
    return fig
